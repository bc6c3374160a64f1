/**
 * The requests of the schema-driven fuzz (test/http/fuzz.test.ts): for one operation of the
 * OpenAPI description, an arbitrary of requests valid per its schemas and of invalid ones (wrong
 * types, missing and extra fields, huge strings and numbers, deep nesting, invalid UTF-8, NUL,
 * wrong media types, empty and oversize bodies, duplicated and malformed headers, path parameters
 * with `..`, `%00`, `%2F`), as anonymous, user, auditor or admin.
 */
import fc from 'fast-check';
import type { Json, JsonObject, Operation } from './openapi-doc.js';
import { anyJson, ODD_NUMBERS, otherType, resolveSchema, arbitraryOf } from './fuzz-schema.js';

export const IDENTITIES = ['anonymous', 'user', 'auditor', 'admin'] as const;
export type IdentityName = (typeof IDENTITIES)[number];

/** The credentials of an identity: Basic (login:password), Bearer (an API token) and a session cookie. */
export interface IdentityCredentials {
  basic: string;
  bearer: string;
  /** `name=value` of the session cookie. */
  cookie: string;
}

/** One HTTP request, byte-exact: the path is sent as is, headers may repeat. */
export interface FuzzRequest {
  method: string;
  /** Path and query, already encoded (may hold `..`, `%00` on purpose). */
  target: string;
  headers: [string, string][];
  body?: Uint8Array;
}

export interface FuzzCase {
  request: FuzzRequest;
  identity: IdentityName;
  /** What was done to the request, for the failure message: `valid`, or the mutations. */
  kind: string;
  /**
   * A path parameter is a dot segment (`..`, `%2e%2e`): URL normalisation makes it another path,
   * which may be another operation's or none (404, 405).
   */
  retargeted: boolean;
}

/** What the generator needs to know about the host and its fixtures. */
export interface FuzzContext {
  doc: JsonObject;
  identities: Record<Exclude<IdentityName, 'anonymous'>, IdentityCredentials>;
  /** Values of path parameters that name existing records, by parameter name. */
  pathValues: Record<string, string[]>;
  /** AUTH_MAX_BODY_SIZE of the host. */
  maxBodySize: number;
  /**
   * Whether a GET may carry an unexpected Content-Length body. Not on the edge host: `wrangler
   * dev`'s proxy retries a GET and then waits 60 s on the body it read (Cloudflare has no such
   * proxy); chunked GETs are still sent (the odd Transfer-Encoding header).
   */
  bodyOnGet: boolean;
  /** The host's origin: a browser's same-origin unsafe request names it in Origin. */
  origin: string;
}

/**
 * The headers of a session cookie as Chromium sends them on a same-origin fetch: Sec-Fetch-Site always,
 * Origin too on a POST, PUT, PATCH or DELETE (not on a GET or HEAD).
 */
export function cookieHeaders(cookie: string, method: string, origin: string): [string, string][] {
  const unsafe = !['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase());
  return [
    ['Cookie', cookie],
    ['Sec-Fetch-Site', 'same-origin'],
    ...(unsafe ? [['Origin', origin] as [string, string]] : []),
  ];
}

const enc = new TextEncoder();

/** Path parameter values that must never reach a record or a file: traversal, NUL, encoded slashes, bad escapes. */
const NASTY_SEGMENTS = [
  '..',
  '.',
  '%2e%2e',
  '..%2F..%2Fetc%2Fpasswd',
  '%00',
  'a%00b',
  '%2F',
  'a%2Fb',
  '%5C',
  '%',
  '%zz',
  '%C0%AF',
  '%E0%80%AF',
  '%FF',
  '%F0%9F%98%80',
  '%EF%BF%BF',
  'me',
  '0',
  '-1',
  '%20',
  '%0A',
  '%0D%0A',
  'null',
  'undefined',
  '__proto__',
  'constructor',
  '%3Cscript%3E',
  "'%20OR%201=1--",
  '%2A',
  '*',
  'x'.repeat(5000),
  '%ED%A0%80',
];

/** Segments that URL normalisation removes with the one before (`.`) or after which it climbs (`..`). */
const DOT_SEGMENTS = new Set(['.', '..', '%2e%2e']);

/** Malformed, duplicated or foreign Authorization headers. */
function badAuthorizations(ctx: FuzzContext): fc.Arbitrary<[string, string][]> {
  const { admin, user } = ctx.identities;
  const b64 = (bytes: number[]) => Buffer.from(bytes).toString('base64');
  return fc.constantFrom<[string, string][]>(
    [['Authorization', 'Basic']],
    [['Authorization', 'Basic !!!']],
    [['Authorization', `Basic ${b64([...enc.encode('no-colon')])}`]],
    [['Authorization', `Basic ${b64([0xff, 0xfe, 0x3a, 0x41])}`]],
    [['Authorization', `Basic ${b64([...enc.encode('fuzz-nobody:\u0000')])}`]],
    [['Authorization', 'Bearer']],
    [['Authorization', 'Bearer ']],
    [['Authorization', 'Bearer a.b.c']],
    [['Authorization', `Bearer ${'A'.repeat(8192)}`]],
    [['Authorization', 'Digest username="x"']],
    [['Authorization', '\u00ff\u00fe']],
    [
      ['Authorization', admin.bearer],
      ['Authorization', user.bearer],
    ],
    [['Authorization', `${admin.bearer}, ${user.basic}`]],
    [['Cookie', 'auth=garbage; auth=other']],
    [['Cookie', '\u00ff=\u00ff']],
  );
}

/** Extra headers that change nothing valid: duplicated, malformed or unexpected. */
const ODD_HEADERS = fc.constantFrom<[string, string][]>(
  [],
  [['Accept', 'application/xml']],
  [
    ['Accept', '*/*'],
    ['Accept', 'text/html'],
  ],
  [['X-Forwarded-For', 'not-an-ip, ,, 999.1.1.1']],
  [['Forwarded', 'for="[::1']],
  [['X-Request-Id', 'x'.repeat(2000)]],
  [
    ['X-Request-Id', 'a'],
    ['X-Request-Id', 'b'],
  ],
  [['Origin', 'https://evil.example']],
  [['Origin', 'null']],
  [['User-Agent', '\u00ff\u00fe\t']],
  [['Accept-Encoding', 'gzip;q=nope']],
  [['Content-Encoding', 'gzip']],
  [['Transfer-Encoding', 'chunked']],
  [['X-HTTP-Method-Override', 'DELETE']],
  [['If-None-Match', '*']],
  [['Range', 'bytes=0-1']],
);

/** A path parameter: an existing record's name most of the time, else a generated or nasty segment. */
function pathParam(ctx: FuzzContext, p: JsonObject): fc.Arbitrary<string> {
  const known = ctx.pathValues[p.name as string] ?? [];
  const schema = resolveSchema(ctx.doc, p.schema as JsonObject);
  const generated = arbitraryOf(ctx.doc, schema).map((v) =>
    encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v)),
  );
  return fc.oneof(
    ...(known.length > 0 ? [{ weight: 4, arbitrary: fc.constantFrom(...known.map(encodeURIComponent)) }] : []),
    { weight: 2, arbitrary: generated },
    { weight: 3, arbitrary: fc.constantFrom(...NASTY_SEGMENTS) },
  );
}

/** A query value as text: valid per the schema, or not. */
function queryValue(ctx: FuzzContext, p: JsonObject): fc.Arbitrary<string> {
  const valid = arbitraryOf(ctx.doc, p.schema as JsonObject).map((v) =>
    typeof v === 'string' ? v : JSON.stringify(v),
  );
  return fc.oneof(
    { weight: 3, arbitrary: valid },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        'NaN',
        'Infinity',
        '1e999',
        '-1',
        '0x10',
        ' 1',
        '1.5',
        '[]',
        '{}',
        '\u0000',
        'x'.repeat(3000),
        ...ODD_NUMBERS,
      ),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  );
}

function queryOf(ctx: FuzzContext, op: JsonObject): fc.Arbitrary<string> {
  const params = ((op.parameters as JsonObject[] | undefined) ?? []).filter((p) => p.in === 'query');
  const pairs = params.map((p) =>
    fc.option(
      queryValue(ctx, p).map((v) => [p.name as string, v] as const),
      { freq: 2 },
    ),
  );
  const extra = fc.option(
    fc.constantFrom<[string, string][]>(
      [['unknown', '1']],
      [['__proto__', 'x']],
      [
        ['limit', '1'],
        ['limit', '2'],
      ],
      [['%zz', '%zz']],
    ),
    { freq: 4 },
  );
  return fc.tuple(fc.tuple(...pairs), extra).map(([chosen, more]) => {
    const all = [...chosen.filter((c) => c !== null), ...(more ?? [])];
    if (all.length === 0) return '';
    // `%zz` stays a malformed escape on purpose; everything else is encoded.
    const pair = ([k, v]: readonly [string, string]) =>
      k === '%zz' ? `${k}=${v}` : `${encodeURIComponent(k)}=${encodeURIComponent(v)}`;
    return `?${all.map(pair).join('&')}`;
  });
}

/** Encodes a body value in a media type (JSON, or a form's fields; anything else as text). */
function encodeBody(type: string, value: Json): Uint8Array {
  if (type === 'application/x-www-form-urlencoded' && value && typeof value === 'object' && !Array.isArray(value)) {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(value)) form.append(k, typeof v === 'string' ? v : JSON.stringify(v));
    return enc.encode(form.toString());
  }
  if (type.includes('json')) return enc.encode(JSON.stringify(value));
  return enc.encode(typeof value === 'string' ? value : JSON.stringify(value));
}

/** Nests `leaf` `depth` levels deep in arrays or objects. */
function nested(depth: number, objects: boolean): string {
  return objects ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}` : `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

type BodyPlan = { type: string | null; bytes: Uint8Array; kind: string; extraTypes?: string[] };

/** A JSON object body changed in one field: removed, of another type, huge, odd number, NUL, deep. */
function mutateObject(value: JsonObject, schema: JsonObject, type: string): fc.Arbitrary<BodyPlan> {
  const keys = [
    ...new Set([...Object.keys(value), ...Object.keys((schema.properties as JsonObject | undefined) ?? {})]),
  ];
  const key = keys.length > 0 ? fc.constantFrom(...keys) : fc.constant('field');
  const plan = (kind: string, v: Json): BodyPlan => ({ type, bytes: encodeBody(type, v), kind });
  const text = (kind: string, t: string): BodyPlan => ({ type, bytes: enc.encode(t), kind });
  const spliced = (k: string, raw: string) => {
    const rest = { ...value };
    delete rest[k];
    const head = JSON.stringify(rest).slice(0, -1);
    return `${head}${head.length > 1 ? ',' : ''}${JSON.stringify(k)}:${raw}}`;
  };
  return fc.oneof(
    key.map((k) => {
      const { [k]: _gone, ...rest } = value;
      return plan(`missing ${k}`, rest);
    }),
    key.chain((k) => otherType(value[k] ?? null).map((v) => plan(`${k} of another type`, { ...value, [k]: v }))),
    fc.tuple(stringArbKey(), anyJson).map(([k, v]) => plan(`extra field ${k}`, { ...value, [k]: v })),
    fc
      .tuple(key, fc.integer({ min: 1_000, max: 60_000 }))
      .map(([k, n]) => plan(`huge string in ${k}`, { ...value, [k]: 'x'.repeat(n) })),
    fc.tuple(key, fc.constantFrom(...ODD_NUMBERS)).map(([k, n]) => text(`odd number ${n} in ${k}`, spliced(k, n))),
    key.map((k) => plan(`NUL in ${k}`, { ...value, [k]: `a\u0000b${typeof value[k] === 'string' ? value[k] : ''}` })),
    fc
      .tuple(key, fc.integer({ min: 50, max: 20_000 }), fc.boolean())
      .map(([k, d, o]) => text(`${d}-deep ${o ? 'objects' : 'arrays'} in ${k}`, spliced(k, nested(d, o)))),
    key.map((k) => ({ type, bytes: invalidUtf8In(spliced(k, '"\uFFFF"')), kind: `invalid UTF-8 in ${k}` })),
    fc
      .constantFrom('__proto__', 'constructor', 'prototype')
      .map((k) => text(`${k} key`, spliced(k, '{"role":"admin","isAdmin":true}'))),
    key.map((k) =>
      text(
        `duplicated ${k}`,
        `${JSON.stringify(value).slice(0, -1)}${Object.keys(value).length ? ',' : ''}${JSON.stringify(k)}:"dup"}`,
      ),
    ),
  );
}

function stringArbKey(): fc.Arbitrary<string> {
  return fc.oneof(fc.string({ minLength: 1, maxLength: 10 }), fc.constantFrom('id', 'role', 'isAdmin', 'userId', ''));
}

/** The JSON text with its U+FFFF replaced by bytes that are not UTF-8. */
function invalidUtf8In(json: string): Uint8Array {
  const bytes = enc.encode(json);
  const marker = enc.encode('\uFFFF');
  const at = bytes.findIndex((_, i) => marker.every((b, j) => bytes[i + j] === b));
  const out = Array.from(bytes);
  if (at >= 0) out.splice(at, marker.length, 0xc3, 0x28, 0xff, 0xfe, 0xed, 0xa0, 0x80);
  return new Uint8Array(out);
}

/** Bodies: valid per a media type's schema, mutated, malformed, empty, oversize, of wrong media types. */
function bodyOf(ctx: FuzzContext, op: JsonObject, method: string): fc.Arbitrary<BodyPlan | undefined> {
  const body = op.requestBody as JsonObject | undefined;
  if (!body && method === 'get' && !ctx.bodyOnGet) return fc.constant(undefined);
  if (!body) {
    // A body where none is expected.
    return fc
      .option(
        fc.constantFrom<BodyPlan>({ type: 'application/json', bytes: enc.encode('{"a":1}'), kind: 'unexpected body' }),
        { freq: 10 },
      )
      .map((b) => b ?? undefined);
  }
  const media = Object.entries(body.content as JsonObject) as [string, JsonObject][];
  const plans = media.map(([type, m]) => {
    const schema = resolveSchema(ctx.doc, (m.schema as JsonObject | undefined) ?? {});
    const example = m.example !== undefined ? [fc.constant(m.example as Json)] : [];
    const value = fc.oneof(...example, arbitraryOf(ctx.doc, schema), arbitraryOf(ctx.doc, schema));
    const valid = value.map((v): BodyPlan => ({ type, bytes: encodeBody(type, v), kind: 'valid' }));
    const mutated = value.chain((v) =>
      v && typeof v === 'object' && !Array.isArray(v)
        ? mutateObject(v, schema, type)
        : otherType(v).map((o): BodyPlan => ({ type, bytes: encodeBody(type, o), kind: 'body of another type' })),
    );
    const malformed = fc.constantFrom<BodyPlan>(
      { type, bytes: new Uint8Array(), kind: 'empty body' },
      { type, bytes: enc.encode('{"login": '), kind: 'truncated JSON' },
      { type, bytes: enc.encode('[]'), kind: 'an array' },
      { type, bytes: enc.encode('null'), kind: 'null' },
      { type, bytes: enc.encode('\uFEFF{}'), kind: 'BOM' },
      { type, bytes: new Uint8Array([0x7b, 0x00, 0x7d]), kind: 'raw NUL' },
      { type, bytes: new Uint8Array([0xff, 0xfe, 0xfd]), kind: 'invalid UTF-8' },
      { type, bytes: enc.encode(nested(100_000, false)), kind: '100000-deep arrays' },
      { type, bytes: enc.encode(`{"a":"${'x'.repeat(ctx.maxBodySize)}"}`), kind: 'oversize body' },
      { type, bytes: enc.encode('a=1&a=2&%zz=%zz&=&&'), kind: 'form garbage' },
    );
    const wrongType = fc
      .tuple(
        value,
        fc.constantFrom<string | null>(
          null,
          'text/plain',
          'application/xml',
          'multipart/form-data; boundary=x',
          'application/',
          ';;;',
          'application/json; charset=latin1',
          'application/json, text/plain',
          'APPLICATION/JSON',
          'application/x-www-form-urlencoded',
          'application/json',
          'application/merge-patch+json',
        ),
      )
      .map(
        ([v, t]): BodyPlan => ({
          type: t,
          bytes: encodeBody(type, v),
          kind: `${type} body sent as ${t ?? 'no media type'}`,
        }),
      );
    const duplicated = value.map(
      (v): BodyPlan => ({
        type,
        bytes: encodeBody(type, v),
        kind: 'duplicated Content-Type',
        extraTypes: ['text/plain'],
      }),
    );
    return fc.oneof(
      { weight: 5, arbitrary: valid },
      { weight: 6, arbitrary: mutated },
      { weight: 2, arbitrary: malformed },
      { weight: 2, arbitrary: wrongType },
      { weight: 1, arbitrary: duplicated },
    );
  });
  return fc.oneof(...plans);
}

/** The security schemes an operation accepts (none: `security` absent or `[]`). */
function schemesOf(op: JsonObject): Set<string> {
  return new Set(((op.security as JsonObject[] | undefined) ?? []).flatMap((s) => Object.keys(s)));
}

/** The arbitrary of requests to one operation. */
export function casesOf(ctx: FuzzContext, o: Operation): fc.Arbitrary<FuzzCase> {
  const params = ((o.op.parameters as JsonObject[] | undefined) ?? []).filter((p) => p.in === 'path');
  const path = fc.tuple(...params.map((p) => pathParam(ctx, p))).map((values) => {
    let out = o.path;
    for (const [i, p] of params.entries()) out = out.replace(`{${p.name as string}}`, values[i]!);
    return { out, retargeted: values.some((v) => DOT_SEGMENTS.has(v.toLowerCase())) };
  });
  const schemes = schemesOf(o.op);
  const credential = (id: IdentityName): [string, string][] => {
    if (id === 'anonymous') return [];
    const c = ctx.identities[id];
    // Bearer, else the session cookie (a same-origin request, as a browser's): neither costs a
    // password hash per request. Basic where it is the only way (a login without a session).
    if (schemes.has('bearer') || schemes.size === 0) return [['Authorization', c.bearer]];
    if (schemes.has('cookie')) return cookieHeaders(c.cookie, o.method, ctx.origin);
    return [['Authorization', c.basic]];
  };
  const auth = fc.oneof(
    { weight: 9, arbitrary: fc.constantFrom(...IDENTITIES).map((id) => ({ id, headers: credential(id), bad: false })) },
    {
      weight: 1,
      arbitrary: badAuthorizations(ctx).map((headers) => ({ id: 'anonymous' as IdentityName, headers, bad: true })),
    },
  );
  const odd = fc.oneof(
    { weight: 6, arbitrary: fc.constant<[string, string][]>([]) },
    { weight: 1, arbitrary: ODD_HEADERS },
  );
  return fc
    .tuple(path, queryOf(ctx, o.op), auth, bodyOf(ctx, o.op, o.method), odd)
    .map(([p, q, a, b, extra]): FuzzCase => {
      const headers: [string, string][] = [...a.headers, ...extra];
      if (b?.type) headers.push(['Content-Type', b.type]);
      for (const t of b?.extraTypes ?? []) headers.push(['Content-Type', t]);
      const kinds = [
        b?.kind ?? 'no body',
        ...(a.bad ? [`Authorization ${JSON.stringify(a.headers).slice(0, 60)}`] : []),
        ...extra.map(([k]) => `odd ${k}`),
      ];
      if (p.retargeted) kinds.push('dot segment in the path');
      return {
        request: { method: o.method.toUpperCase(), target: `${p.out}${q}`, headers, ...(b ? { body: b.bytes } : {}) },
        identity: a.id,
        kind: kinds.join(', '),
        retargeted: p.retargeted,
      };
    });
}
