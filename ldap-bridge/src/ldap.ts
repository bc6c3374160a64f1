/**
 * The bridge's LDAP capability (DESIGN.md §1, contract in schema/bridge/ldap.ts), a Fastify plugin:
 *
 * - `POST /v1/ldap/authenticate`: bind as the service account (or anonymously), read the root DSE
 *   (Active Directory iff its supportedCapabilities lists `directorySignature`), find exactly one
 *   entry with `userFilter`, then bind as that entry with the user's password on a fresh connection.
 * - `POST /v1/ldap/test`: the same connection steps one by one, as a diagnostic (always 200).
 *
 * Directory failures are problems, never outcomes (they must not count as wrong passwords):
 * unreachable 502 DIRECTORY_UNAVAILABLE, TLS refused 502 DIRECTORY_TLS, too slow 504
 * DIRECTORY_TIMEOUT, anything else (service bind refused, unknown base DN, bad filter) 502
 * DIRECTORY_ERROR. Nothing here logs or answers a password.
 *
 * `userFilter` null selects the default: DEFAULT_USER_FILTER, or AD_USER_FILTER in Active Directory
 * mode. In AD mode the login reported is the sAMAccountName (the same local login whichever form
 * the user typed), externalId is objectGUID, and userAccountControl ACCOUNTDISABLE/LOCKOUT answer
 * `disabled`, checked only after a successful bind.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import type { FastifyBaseLogger, FastifyPluginAsync, FastifyReply } from 'fastify';
import { Client, FilterParser, ResultCodeError, type Entry } from 'ldapts';
import type { z } from 'zod';
import {
  LdapAuthenticateRequestSchema,
  LdapTestRequestSchema,
  type BridgeProblem,
  type LdapAuthenticateResponse,
  type LdapConnection,
  type LdapProfile,
  type LdapTestResponse,
} from '../../schema/bridge/index.js';

/** The filters used when `userFilter` is null (schema/bridge/ldap.ts). */
export const DEFAULT_USER_FILTER = '(uid={login})';
export const AD_USER_FILTER = '(|(sAMAccountName={login})(userPrincipalName={login}))';
/** userAccountControl flags (MS-ADTS 2.2.16). */
const UF_ACCOUNTDISABLE = 0x2;
const UF_LOCKOUT = 0x10;
/** LDAP result codes (RFC 4511 §4.1.9). */
const INVALID_CREDENTIALS = 49;
const NO_SUCH_OBJECT = 32;

type DirectoryCode = 'DIRECTORY_UNAVAILABLE' | 'DIRECTORY_TIMEOUT' | 'DIRECTORY_TLS' | 'DIRECTORY_ERROR';

/** A failure of the directory (not of the user's credentials): a 502/504 problem. */
export class DirectoryError extends Error {
  constructor(
    readonly code: DirectoryCode,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    this.name = 'DirectoryError';
  }
  get status(): 502 | 504 {
    return this.code === 'DIRECTORY_TIMEOUT' ? 504 : 502;
  }
}

// ---- escaping and DNs --------------------------------------------------------------------------

/**
 * RFC 4515 §3: an assertion value escapes `*`, `(`, `)`, `\` and NUL as `\XX` (ASCII controls too,
 * harmlessly), so a login can never add wildcards or filter components. Non-ASCII stays literal
 * UTF-8, which RFC 4515 allows: ldapts's filter parser turns each `\XX` into one Latin-1 character,
 * so escaping `é` as `\c3\a9` would search for `Ã©`.
 */
export function escapeFilterValue(value: string): string {
  return value.replace(/[*()\\\x00-\x1f\x7f]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** The user filter with `{login}` replaced by the escaped login (a function: `$&` in a login stays literal). */
export function userFilterFor(template: string, login: string): string {
  const escaped = escapeFilterValue(login);
  return template.replaceAll('{login}', () => escaped);
}

/** A DN in a comparable form (RFC 4514): escapes decoded, blanks around separators and case ignored. */
export function normalizeDn(dn: string): string {
  const rdns: string[][] = [];
  let avas: string[] = [];
  let bytes: number[] = [];
  const text = () => Buffer.from(bytes).toString('utf8').trim().toLowerCase();
  const flush = (endRdn: boolean) => {
    avas.push(text().replace(/\s*=\s*/, '='));
    bytes = [];
    if (endRdn) {
      rdns.push(avas.sort());
      avas = [];
    }
  };
  const raw = Buffer.from(dn, 'utf8');
  let seenEquals = false;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i]!;
    if (b === 0x5c /* \ */ && i + 1 < raw.length) {
      const hex = raw.subarray(i + 1, i + 3).toString('latin1');
      if (/^[0-9a-fA-F]{2}$/.test(hex)) {
        bytes.push(Number.parseInt(hex, 16));
        i += 2;
      } else {
        bytes.push(raw[++i]!);
      }
      // An escaped character is data: the separator rules below never see it.
      continue;
    }
    if (b === 0x3d /* = */ && !seenEquals) seenEquals = true;
    if ((b === 0x2c /* , */ || b === 0x3b /* ; */ || b === 0x2b) /* + */ && seenEquals) {
      flush(b !== 0x2b);
      seenEquals = false;
      continue;
    }
    bytes.push(b);
  }
  flush(true);
  return JSON.stringify(rdns);
}

/** AD's GUID string form of objectGUID: the first three fields little-endian (MS-DTYP 2.3.4.2). */
export function guidString(b: Uint8Array): string {
  const h = (idx: number[]) => idx.map((n) => b[n]!.toString(16).padStart(2, '0')).join('');
  return `${h([3, 2, 1, 0])}-${h([5, 4])}-${h([7, 6])}-${h([8, 9])}-${h([10, 11, 12, 13, 14, 15])}`;
}

// ---- connections -------------------------------------------------------------------------------

/** Node's TLS verification and handshake failures. */
function isTlsError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && /^(ERR_SSL_|ERR_TLS_)|CERT|UNABLE_TO_|SELF_SIGNED|ALTNAME/.test(code);
}

/** Turns a socket, TLS or protocol failure into a DirectoryError (already-classified ones pass). */
export function classify(err: unknown, what: string): DirectoryError {
  if (err instanceof DirectoryError) return err;
  if (isTlsError(err)) return new DirectoryError('DIRECTORY_TLS', `${what}: TLS verification failed (${(err as Error).message})`, { cause: err });
  if (err instanceof ResultCodeError) return new DirectoryError('DIRECTORY_ERROR', `${what}: the directory answered ${err.name} (${err.code})`, { cause: err });
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE|ETIMEDOUT|EADDRNOTAVAIL)$/.test(code)) {
    return new DirectoryError('DIRECTORY_UNAVAILABLE', `${what}: ${code}`, { cause: err });
  }
  if (err instanceof Error && /Connection closed|Socket error|connection was closed|socket hang up/i.test(err.message)) {
    return new DirectoryError('DIRECTORY_UNAVAILABLE', `${what}: the directory closed the connection`, { cause: err });
  }
  return new DirectoryError('DIRECTORY_ERROR', `${what}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`, { cause: err });
}

/** Rejects with DIRECTORY_TIMEOUT after `ms` (calling `onTimeout`, which closes the connection). */
function withTimeout<T>(work: Promise<T>, ms: number, what: string, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new DirectoryError('DIRECTORY_TIMEOUT', `${what}: no answer within ${ms} ms`));
    }, ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** One connection to one URL; every operation is bounded by the connection's timeouts. */
export interface Session {
  url: string;
  client: Client;
  /** Runs one LDAP operation within searchTimeoutMs; failures come out classified. */
  op<T>(what: string, fn: (c: Client) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Times and records each step (the test endpoint); authenticate runs the steps unrecorded. */
export type StepRunner = <T>(step: string, fn: () => Promise<T>, detail?: (r: T) => string) => Promise<T>;
const unrecorded: StepRunner = (_step, fn) => fn();

function tlsOptions(conn: LdapConnection, host: string): ConnectionOptions {
  return {
    host,
    // SNI is for names only (RFC 6066 §3); an IP is checked against the certificate's IP SANs.
    ...(isIP(host) ? {} : { servername: host }),
    ...(conn.caCert ? { ca: conn.caCert } : {}),
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2',
  };
}

/**
 * Opens a session to `url`: TCP (and TLS for ldaps://) within connectTimeoutMs, then StartTLS
 * (also within connectTimeoutMs) when asked on ldap://. The socket is made here and handed to
 * ldapts, so "connect" is a step of its own and nothing can wait on it beyond the timeout.
 */
export async function openSession(url: string, conn: LdapConnection, step: StepRunner = unrecorded): Promise<Session> {
  const parsed = new URL(url);
  const secure = parsed.protocol === 'ldaps:';
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  const port = parsed.port ? Number(parsed.port) : secure ? 636 : 389;
  const socket = await step(
    'connect',
    () =>
      new Promise<Socket | TLSSocket>((resolve, reject) => {
        const s = secure ? tlsConnect({ ...tlsOptions(conn, host), port }) : netConnect({ host, port });
        const timer = setTimeout(() => {
          s.destroy();
          reject(new DirectoryError('DIRECTORY_TIMEOUT', `${url}: no connection within ${conn.connectTimeoutMs} ms`));
        }, conn.connectTimeoutMs);
        s.once(secure ? 'secureConnect' : 'connect', () => {
          clearTimeout(timer);
          s.removeAllListeners('error');
          resolve(s);
        });
        s.once('error', (err) => {
          clearTimeout(timer);
          s.destroy();
          reject(classify(err, url));
        });
      }),
    () => url,
  );
  // Hand the socket over once; should ldapts try to reconnect later, it gets an error, not a hang.
  let handed = false;
  const handOver = () => {
    if (handed) throw new Error('Connection closed: the directory connection was lost');
    handed = true;
    return socket;
  };
  const client = new Client({
    url,
    createConnection: handOver as unknown as typeof netConnect,
    createSecureConnection: ((...args: Parameters<typeof tlsConnect>) => (secure ? handOver() : tlsConnect(...args))) as typeof tlsConnect,
  });
  socket.on('error', () => {}); // ldapts listens too; this only keeps a late error from being unhandled
  const destroy = () => socket.destroy();
  const session: Session = {
    url,
    client,
    op: (what, fn) =>
      withTimeout(
        fn(client).catch((err: unknown) => {
          throw err instanceof ResultCodeError ? err : classify(err, what);
        }),
        conn.searchTimeoutMs,
        what,
        destroy,
      ),
    async close() {
      // Unbind politely (RFC 4511 §4.3) but never wait on it: the socket goes either way.
      await withTimeout(client.unbind(), 500, 'unbind', destroy).catch(() => {});
      destroy();
    },
  };
  if (conn.startTls && !secure) {
    try {
      await step('starttls', () =>
        withTimeout(
          client.startTLS(tlsOptions(conn, host)).catch((err: unknown) => {
            if (err instanceof ResultCodeError) throw new DirectoryError('DIRECTORY_TLS', `${url}: the directory refused StartTLS (${err.name})`, { cause: err });
            throw classify(err, `${url} StartTLS`);
          }),
          conn.connectTimeoutMs,
          `${url} StartTLS`,
          destroy,
        ),
      );
    } catch (err) {
      destroy();
      throw err;
    }
  }
  return session;
}

/** Tries the URLs in order; the first that connects wins, else the last failure is thrown. */
export async function openFirst(conn: LdapConnection, step: StepRunner = unrecorded): Promise<Session> {
  let last: unknown;
  for (const url of conn.urls) {
    try {
      return await openSession(url, conn, step);
    } catch (err) {
      last = err;
    }
  }
  throw classify(last, 'connect');
}

/** Binds as the service account (anonymous: nothing to do); a refusal is a configuration problem. */
export async function bindService(s: Session, conn: LdapConnection): Promise<'anonymous' | 'service account'> {
  if (conn.bindDn === null || conn.bindDn === '') return 'anonymous';
  // An empty password would make this an unauthenticated bind (RFC 4513 §5.1.2), which succeeds.
  if (!conn.bindPassword) throw new DirectoryError('DIRECTORY_ERROR', 'the service account has no password');
  const { bindDn, bindPassword } = conn;
  try {
    await s.op('service bind', (c) => c.bind(bindDn, bindPassword));
  } catch (err) {
    if (err instanceof ResultCodeError) {
      throw new DirectoryError('DIRECTORY_ERROR', err.code === INVALID_CREDENTIALS ? "the service account's bind was refused" : `the service account's bind failed (${err.name})`, { cause: err });
    }
    throw err;
  }
  return 'service account';
}

/** Whether the root DSE lists the Active Directory signature; an unreadable root DSE is not AD. */
export async function detectActiveDirectory(s: Session, conn: LdapConnection): Promise<boolean> {
  try {
    const { searchEntries } = await s.op('root DSE', (c) => c.search('', { scope: 'base', filter: '(objectClass=*)', attributes: ['supportedCapabilities'] }));
    return values(searchEntries[0], 'supportedCapabilities').includes(conn.directorySignature);
  } catch (err) {
    if (err instanceof ResultCodeError) return false;
    throw err;
  }
}

// ---- entries -----------------------------------------------------------------------------------

/** The string values of `attr` in `entry` (attribute names compare case-insensitively). */
function values(entry: Entry | undefined, attr: string): string[] {
  if (!entry) return [];
  const key = Object.keys(entry).find((k) => k.toLowerCase() === attr.toLowerCase());
  const v = key === undefined ? undefined : entry[key];
  const list = v === undefined ? [] : Array.isArray(v) ? v : [v];
  return list.map((x) => (typeof x === 'string' ? x : x.toString('utf8'))).filter((x) => x !== '');
}

function buffer(entry: Entry, attr: string): Buffer | undefined {
  const key = Object.keys(entry).find((k) => k.toLowerCase() === attr.toLowerCase());
  const v = key === undefined ? undefined : entry[key];
  const first = Array.isArray(v) ? v[0] : v;
  return Buffer.isBuffer(first) ? first : undefined;
}

/** The attribute compared with `{login}` in a filter, e.g. `uid` in `(&(objectClass=person)(uid={login}))`. */
export function loginAttribute(filter: string): string | null {
  return /\(\s*([A-Za-z][\w-]*|\d+(?:\.\d+)+)(?:;[\w-]+)*\s*~?=\s*\{login\}\s*\)/.exec(filter)?.[1] ?? null;
}

/** admin / auditor / user from the role attribute: a role name, or group DNs matched to roleGroups. */
export function mapRole(roleValues: readonly string[], groups: LdapConnection['roleGroups']): 'admin' | 'auditor' | 'user' {
  const found = new Set<string>();
  const admin = groups.admin ? normalizeDn(groups.admin) : null;
  const auditor = groups.auditor ? normalizeDn(groups.auditor) : null;
  for (const v of roleValues) {
    if (v.includes('=')) {
      const dn = normalizeDn(v);
      if (dn === admin) found.add('admin');
      if (dn === auditor) found.add('auditor');
    } else {
      found.add(v.trim().toLowerCase());
    }
  }
  return found.has('admin') ? 'admin' : found.has('auditor') ? 'auditor' : 'user';
}

/** The profile of the user's entry (see LdapProfileSchema). */
export function toProfile(entry: Entry, conn: LdapConnection, o: { activeDirectory: boolean; loginAttr: string | null; login: string }): LdapProfile {
  const first = (attr: string | null) => (attr ? (values(entry, attr)[0] ?? null) : null);
  const logins = o.loginAttr ? values(entry, o.loginAttr) : [];
  const login = logins.find((l) => l.toLowerCase() === o.login.toLowerCase()) ?? logins[0] ?? o.login;
  const guid = o.activeDirectory ? buffer(entry, 'objectGUID') : undefined;
  return {
    dn: entry.dn,
    login,
    externalId: guid?.length === 16 ? guidString(guid) : (first('entryUUID') ?? entry.dn),
    displayName: first(conn.attributes.displayName),
    email: first(conn.attributes.email),
    role: conn.attributes.role ? mapRole(values(entry, conn.attributes.role), conn.roleGroups) : null,
  };
}

// ---- the two operations ------------------------------------------------------------------------

/** The filter template in force: the configured one, else the default of the directory's kind. */
export function effectiveUserFilter(conn: LdapConnection, activeDirectory: boolean): string {
  return conn.userFilter ?? (activeDirectory ? AD_USER_FILTER : DEFAULT_USER_FILTER);
}

/** Checks a filter template: it must hold `{login}` and parse once filled in. */
export function checkUserFilter(template: string): void {
  if (!template.includes('{login}')) throw new DirectoryError('DIRECTORY_ERROR', 'the user filter has no {login} placeholder');
  try {
    FilterParser.parseString(userFilterFor(template, 'x'));
  } catch {
    throw new DirectoryError('DIRECTORY_ERROR', 'the user filter is not a valid LDAP filter (RFC 4515)');
  }
}

/** Refused before any bind: an empty password is an unauthenticated bind, which "succeeds" (RFC 4513 §5.1.2). */
export class BlankPasswordError extends Error {}

/** Finds the user's entry and binds as it (see the file comment). */
export async function authenticate(conn: LdapConnection, login: string, password: string, log?: FastifyBaseLogger): Promise<LdapAuthenticateResponse> {
  if (password.trim() === '') throw new BlankPasswordError('an empty or whitespace-only password is refused before any bind');
  const service = await openFirst(conn);
  let activeDirectory: boolean;
  let loginAttr: string | null;
  let entries: Entry[];
  try {
    await bindService(service, conn);
    activeDirectory = await detectActiveDirectory(service, conn);
    const template = effectiveUserFilter(conn, activeDirectory);
    checkUserFilter(template);
    loginAttr = activeDirectory ? 'sAMAccountName' : loginAttribute(template);
    const attrs = [loginAttr, conn.attributes.displayName, conn.attributes.email, conn.attributes.role, 'entryUUID', ...(activeDirectory ? ['objectGUID', 'userAccountControl'] : [])];
    const attributes = [...new Set(attrs.filter((a): a is string => !!a))];
    const filter = userFilterFor(template, login);
    try {
      // Two are enough to know the match is not unique.
      ({ searchEntries: entries } = await service.op('user search', (c) =>
        c.search(conn.baseDn, { scope: 'sub', filter, attributes, sizeLimit: 2, timeLimit: Math.ceil(conn.searchTimeoutMs / 1000), explicitBufferAttributes: activeDirectory ? ['objectGUID'] : [] }),
      ));
    } catch (err) {
      if (err instanceof ResultCodeError && err.code === NO_SUCH_OBJECT) throw new DirectoryError('DIRECTORY_ERROR', 'the base DN was not found (or the service account cannot see it)', { cause: err });
      throw err instanceof ResultCodeError ? classify(err, 'user search') : err;
    }
  } finally {
    await service.close();
  }
  if (entries.length !== 1) {
    log?.info({ matches: entries.length, url: service.url }, 'ldap authenticate: no single entry matched');
    // Same work as a known login (a second connection and a refused bind), so the time taken
    // does not tell which logins exist. Whatever happens there, the answer is the same.
    await decoyBind(service.url, conn).catch(() => {});
    return { outcome: 'invalid-credentials' };
  }
  const entry = entries[0]!;
  const user = await openSession(service.url, conn);
  try {
    await user.op('user bind', (c) => c.bind(entry.dn, password));
  } catch (err) {
    if (err instanceof ResultCodeError && err.code === INVALID_CREDENTIALS) return { outcome: 'invalid-credentials' };
    throw err instanceof ResultCodeError ? classify(err, 'user bind') : err;
  } finally {
    await user.close();
  }
  // Checked only after the password proved right, so the state is not told to anyone else.
  if (activeDirectory) {
    const uac = Number.parseInt(values(entry, 'userAccountControl')[0] ?? '0', 10);
    if (uac & (UF_ACCOUNTDISABLE | UF_LOCKOUT)) return { outcome: 'disabled' };
  }
  return { outcome: 'ok', activeDirectory, profile: toProfile(entry, conn, { activeDirectory, loginAttr, login }) };
}

/** A bind that cannot succeed (a DN that does not exist, a random password): timing cover only. */
async function decoyBind(url: string, conn: LdapConnection): Promise<void> {
  const s = await openSession(url, conn);
  try {
    await s.op('decoy bind', (c) => c.bind(`cn=${randomUUID()},${conn.baseDn}`, randomBytes(16).toString('base64url')));
  } finally {
    await s.close();
  }
}

/** Runs the diagnostic steps; the first failing step ends it with ok: false. */
export async function testConnection(conn: LdapConnection): Promise<LdapTestResponse> {
  const result: LdapTestResponse = { ok: false, url: null, activeDirectory: null, steps: [] };
  const step: StepRunner = async (name, fn, detail) => {
    const t0 = performance.now();
    const ms = () => Math.round((performance.now() - t0) * 10) / 10;
    try {
      const r = await fn();
      const d = detail?.(r);
      result.steps.push({ step: name, ok: true, ...(d ? { detail: d } : {}), ms: ms() });
      return r;
    } catch (err) {
      result.steps.push({ step: name, ok: false, detail: classify(err, name).detail, ms: ms() });
      throw err;
    }
  };
  let s: Session | undefined;
  try {
    s = await openFirst(conn, step);
    result.url = s.url;
    const session = s;
    await step('bind', () => bindService(session, conn), (who) => who);
    const activeDirectory = await step('rootDse', () => detectActiveDirectory(session, conn), (ad) => (ad ? 'Active Directory' : 'not Active Directory'));
    result.activeDirectory = activeDirectory;
    await step(
      'baseDn',
      () =>
        session.op('base DN', (c) => c.search(conn.baseDn, { scope: 'base', filter: '(objectClass=*)', attributes: ['1.1'] })).catch((err: unknown) => {
          if (err instanceof ResultCodeError && err.code === NO_SUCH_OBJECT) throw new DirectoryError('DIRECTORY_ERROR', 'the base DN was not found (or the service account cannot see it)');
          throw err;
        }),
      () => conn.baseDn,
    );
    const template = effectiveUserFilter(conn, activeDirectory);
    await step('userFilter', async () => checkUserFilter(template), () => template);
    result.ok = true;
  } catch {
    // recorded in the steps
  } finally {
    await s?.close();
  }
  return result;
}

// ---- HTTP --------------------------------------------------------------------------------------

const TITLES: Record<BridgeProblem['code'], string> = {
  DIRECTORY_UNAVAILABLE: 'Directory unavailable',
  DIRECTORY_TIMEOUT: 'Directory timeout',
  DIRECTORY_TLS: 'Directory TLS failure',
  DIRECTORY_ERROR: 'Directory error',
  UPSTREAM_UNAVAILABLE: 'Upstream unavailable',
  UPSTREAM_TIMEOUT: 'Upstream timeout',
  UPSTREAM_TLS: 'Upstream TLS failure',
  BAD_REQUEST: 'Bad request',
};

function sendProblem(reply: FastifyReply, status: number, code: BridgeProblem['code'], detail: string): FastifyReply {
  const body: BridgeProblem = { type: `urn:auth-service:problem:${code.toLowerCase().replaceAll('_', '-')}`, title: TITLES[code], status, detail, code };
  return reply.code(status).type('application/problem+json').send(body);
}

/** Names every invalid field (paths and messages only: zod issues do not carry input values). */
function invalidBody(error: z.ZodError): string {
  return `invalid request body: ${error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ')}`;
}

/** The LDAP routes of the bridge. */
export const ldapPlugin: FastifyPluginAsync = async (app) => {
  // Scoped to these routes: body parse errors as problems, anything unexpected as a generic 500.
  app.setErrorHandler((err: { statusCode?: number; message?: string }, req, reply) => {
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) return sendProblem(reply, status, 'BAD_REQUEST', err.message ?? 'bad request');
    req.log.error({ err }, 'ldap route failed');
    return reply
      .code(500)
      .type('application/problem+json')
      .send({ type: 'urn:auth-service:problem:internal', title: 'Internal error', status: 500, detail: 'the bridge failed; see its log' });
  });

  const fail = (reply: FastifyReply, log: FastifyBaseLogger, err: unknown, what: string) => {
    if (err instanceof BlankPasswordError) return sendProblem(reply, 400, 'BAD_REQUEST', err.message);
    // Every directory failure arrives classified; anything else is a bug of ours: a 500.
    if (!(err instanceof DirectoryError)) throw err;
    const e = err;
    log.warn({ code: e.code, detail: e.detail, cause: e.cause instanceof Error ? e.cause.message.split('\n')[0] : undefined }, `ldap ${what}: directory failure`);
    return sendProblem(reply, e.status, e.code, e.detail);
  };

  app.post('/v1/ldap/authenticate', async (req, reply) => {
    const parsed = LdapAuthenticateRequestSchema.safeParse(req.body);
    if (!parsed.success) return sendProblem(reply, 400, 'BAD_REQUEST', invalidBody(parsed.error));
    const { connection, login, password } = parsed.data;
    const t0 = performance.now();
    try {
      const res = await authenticate(connection, login, password, req.log);
      req.log.info({ outcome: res.outcome, activeDirectory: res.outcome === 'ok' ? res.activeDirectory : undefined, ms: Math.round(performance.now() - t0) }, 'ldap authenticate');
      return res;
    } catch (err) {
      return fail(reply, req.log, err, 'authenticate');
    }
  });

  app.post('/v1/ldap/test', async (req, reply) => {
    const parsed = LdapTestRequestSchema.safeParse(req.body);
    if (!parsed.success) return sendProblem(reply, 400, 'BAD_REQUEST', invalidBody(parsed.error));
    const res = await testConnection(parsed.data.connection);
    req.log.info({ ok: res.ok, failed: res.steps.find((s) => !s.ok)?.step }, 'ldap test');
    return res;
  });
};
