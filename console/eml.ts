/**
 * Reads a mail of the development outbox (an RFC 5322 message, as the service composes it: docs/mail.md,
 * "Development outbox") for the notifications page: the From, To, Subject and Date headers (RFC 2047
 * encoded words decoded) and the text part (base64 or quoted-printable, in its charset). Small on purpose:
 * the console shows the service's own mails, whose shape it knows, and no parser joins the bundle.
 */

/** What the page shows of a mail. */
export interface MailView {
  from: string;
  to: string;
  subject: string;
  date: string;
  text: string;
}

/** Bytes as text of `charset` (UTF-8 when it is unknown). */
function decodeBytes(bytes: Uint8Array, charset: string): string {
  try {
    return new TextDecoder(charset || 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

function base64Bytes(text: string): Uint8Array {
  const bin = atob(text.replace(/[^A-Za-z0-9+/=]/g, ''));
  return Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
}

/** Quoted-printable (RFC 2045 §6.7) as bytes; `header`: the Q encoding of RFC 2047, where _ is a space. */
function quotedPrintableBytes(text: string, header = false): Uint8Array {
  const src = (header ? text.replace(/_/g, ' ') : text).replace(/=\r?\n/g, '');
  const out: number[] = [];
  // `text` holds one char per byte (readMail), or ASCII (a header).
  for (let i = 0; i < src.length; i++) {
    const hex = src.slice(i + 1, i + 3);
    if (src[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      out.push(Number.parseInt(hex, 16));
      i += 2;
    } else out.push(src.charCodeAt(i) & 0xff);
  }
  return Uint8Array.from(out);
}

/** A header value with its RFC 2047 encoded words decoded (the space between two of them dropped). */
export function decodeHeader(value: string): string {
  return value
    .replace(/(=\?[^?]+\?[BbQq]\?[^?]*\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_, charset: string, enc: string, text: string) =>
      decodeBytes(enc.toUpperCase() === 'B' ? base64Bytes(text) : quotedPrintableBytes(text, true), charset),
    );
}

/** Headers (unfolded, names in lower case) and body of a message or part. */
function split(raw: string): { headers: Map<string, string>; body: string } {
  const at = raw.search(/\r?\n\r?\n/);
  const head = at < 0 ? raw : raw.slice(0, at);
  const body = at < 0 ? '' : raw.slice(at).replace(/^\r?\n\r?\n/, '');
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body };
}

/** A parameter of a Content-Type value (`boundary`, `charset`). */
function param(value: string, name: string): string {
  const m = new RegExp(`;\\s*${name}="?([^";]+)"?`, 'i').exec(value);
  return m?.[1] ?? '';
}

/** The text of a part: its transfer encoding undone, in its charset. */
function partText(headers: Map<string, string>, body: string): string {
  const encoding = (headers.get('content-transfer-encoding') ?? '').toLowerCase();
  const charset = param(headers.get('content-type') ?? '', 'charset');
  if (encoding === 'base64') return decodeBytes(base64Bytes(body), charset);
  if (encoding === 'quoted-printable') return decodeBytes(quotedPrintableBytes(body), charset);
  return decodeBytes(
    Uint8Array.from(body, (ch) => ch.charCodeAt(0)),
    charset,
  );
}

/** The first text/plain part of a message or part, or undefined. */
function plainText(headers: Map<string, string>, body: string): string | undefined {
  const type = headers.get('content-type') ?? 'text/plain';
  if (/^multipart\//i.test(type)) {
    const boundary = param(type, 'boundary');
    if (!boundary) return undefined;
    const parts = body.split(`--${boundary}`).slice(1);
    for (const part of parts) {
      if (part.startsWith('--')) break;
      const p = split(part.replace(/^\r?\n/, ''));
      const text = plainText(p.headers, p.body);
      if (text !== undefined) return text;
    }
    return undefined;
  }
  return /^text\/plain/i.test(type) ? partText(headers, body) : undefined;
}

/** The headers and text of a message given as its bytes. */
export function readMail(bytes: Uint8Array): MailView {
  // One char per byte (not a TextDecoder's latin1, which is windows-1252), so every part decodes from its bytes.
  let raw = '';
  for (let i = 0; i < bytes.length; i += 8192) raw += String.fromCharCode(...bytes.subarray(i, i + 8192));
  const { headers, body } = split(raw);
  const header = (name: string) => decodeHeader(headers.get(name) ?? '');
  const text = plainText(headers, body) ?? '';
  return { from: header('from'), to: header('to'), subject: header('subject'), date: header('date'), text };
}
