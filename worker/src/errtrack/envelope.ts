/**
 * The structure of a Sentry envelope (https://develop.sentry.dev/sdk/data-model/envelopes/):
 * a JSON header line, then items, each a JSON item-header line and a payload that is either
 * `length` bytes (binary items such as session replays) or the rest of the line. Only the headers
 * are decoded; payloads stay bytes and are relayed untouched.
 */

export class MalformedEnvelopeError extends Error {
  override name = 'MalformedEnvelopeError';
}

export interface EnvelopeSummary {
  /** The envelope header (the SDK puts `dsn` there when it sends through a tunnel). */
  header: Record<string, unknown>;
  /** Item types, in order. */
  itemTypes: string[];
}

const NL = 0x0a;
const decoder = new TextDecoder('utf-8', { fatal: true });

function jsonObjectAt(bytes: Uint8Array, start: number, end: number, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes.subarray(start, end)));
  } catch {
    throw new MalformedEnvelopeError(`the ${what} is not JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new MalformedEnvelopeError(`the ${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

function lineEnd(bytes: Uint8Array, from: number): number {
  const i = bytes.indexOf(NL, from);
  return i === -1 ? bytes.length : i;
}

/** Checks the envelope's framing and returns its header and item types; throws MalformedEnvelopeError. */
export function readEnvelope(bytes: Uint8Array): EnvelopeSummary {
  const headerEnd = lineEnd(bytes, 0);
  const header = jsonObjectAt(bytes, 0, headerEnd, 'envelope header');
  const itemTypes: string[] = [];
  let pos = headerEnd + 1;
  while (pos < bytes.length) {
    const end = lineEnd(bytes, pos);
    if (end === pos && end === bytes.length - 1) break; // one trailing newline
    const item = jsonObjectAt(bytes, pos, end, 'item header');
    if (typeof item.type !== 'string' || item.type === '')
      throw new MalformedEnvelopeError('an item header has no type');
    itemTypes.push(item.type);
    pos = end + 1;
    if (item.length !== undefined) {
      if (typeof item.length !== 'number' || !Number.isSafeInteger(item.length) || item.length < 0)
        throw new MalformedEnvelopeError('an item length is not a byte count');
      if (pos + item.length > bytes.length) throw new MalformedEnvelopeError('an item is shorter than its length');
      pos += item.length;
      if (pos < bytes.length && bytes[pos] !== NL)
        throw new MalformedEnvelopeError('an item is longer than its length');
      pos += 1;
    } else {
      pos = lineEnd(bytes, pos) + 1;
    }
  }
  return { header, itemTypes };
}
