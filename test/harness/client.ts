/** Small HTTP helpers for the cross-host suites. */
import { Agent, fetch as undiciFetch } from 'undici';
import { afterEach, inject } from 'vitest';

export const ADMIN = { login: 'root-admin', password: 'Adm1n$ecret' };

export function baseUrl(): string {
  return inject('baseUrl');
}

/** `Authorization: Basic` for a login and password (UTF-8). */
export function basic(login: string, password: string): string {
  const bytes = new TextEncoder().encode(`${login}:${password}`);
  return `Basic ${btoa(String.fromCharCode(...bytes))}`;
}

export interface Call {
  /** Another host's base URL (default: the project's shared host). */
  base?: string;
  method?: string;
  auth?: string;
  json?: unknown;
  /** An application/x-www-form-urlencoded body (instead of `json`). */
  form?: Record<string, string>;
  headers?: Record<string, string>;
  /** 'manual': a redirect is answered as is (a form post's 303), not followed. */
  redirect?: 'manual';
  /**
   * The local address to send from (another loopback address such as 127.0.0.2: another client as
   * the service sees it, on both hosts; `wrangler dev` sets CF-Connecting-IP from the socket).
   */
  from?: string;
  /** The same as `from`. */
  localAddress?: string;
}

/** One connection pool per local address the suites send from. */
const agents = new Map<string, Agent>();

function agentFrom(localAddress: string): Agent {
  let agent = agents.get(localAddress);
  if (!agent) agents.set(localAddress, (agent = new Agent({ localAddress })));
  return agent;
}

/** Calls `path` below the base URL. */
export async function call(path: string, o: Call = {}): Promise<Response> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.auth) headers.Authorization = o.auth;
  if (o.json !== undefined) headers['Content-Type'] = 'application/json';
  if (o.form !== undefined) headers['Content-Type'] = 'application/x-www-form-urlencoded';
  const url = `${o.base ?? baseUrl()}${path}`;
  const body = o.form !== undefined ? new URLSearchParams(o.form).toString() : JSON.stringify(o.json);
  const init = {
    method: o.method ?? 'GET',
    headers,
    body: o.json === undefined && !o.form ? undefined : body,
    ...(o.redirect ? { redirect: o.redirect } : {}),
  };
  const from = o.from ?? o.localAddress;
  if (from === undefined) return fetch(url, init);
  // undici's own fetch: its Agent is the one that binds the local address.
  return (await undiciFetch(url, { ...init, dispatcher: agentFrom(from) })) as unknown as Response;
}

/** Calls and parses the JSON (or problem) body. */
export async function callJson<T = Record<string, unknown>>(
  path: string,
  o: Call = {},
): Promise<{ status: number; body: T; res: Response }> {
  const res = await call(path, o);
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T, res };
}

/**
 * Moves the service clock (AUTH_TEST_CLOCK_CONTROL) to `offsetMs` ahead of real time, on the shared host
 * or the host at `base`.
 */
export async function setClockOffset(offsetMs: number, base?: string): Promise<void> {
  const res = await call('/__test__/clock', { base, method: 'POST', json: { offsetMs } });
  if (res.status !== 200) throw new Error(`cannot move the clock: ${res.status} ${await res.text()}`);
}

/**
 * The shared host's clock for a test file (or that of the host whose base URL `base()` answers, once it
 * runs): `move(ms)` sets it ahead of real time, `now()` is the service's time, and it is put back after
 * each test that moved it.
 */
export function testClock(base?: () => string | undefined): {
  move: (ms: number) => Promise<void>;
  now: () => number;
} {
  let offset = 0;
  afterEach(async () => {
    if (base && offset === 0) return;
    offset = 0;
    await setClockOffset(0, base?.());
  });
  return {
    move: async (ms) => {
      offset = ms;
      await setClockOffset(ms, base?.());
    },
    now: () => Date.now() + offset,
  };
}

/** Runs `work` with saved settings `values` on the shared host, then resets each to its default. */
export async function withSettings(values: Record<string, unknown>, work: () => Promise<void>): Promise<void> {
  const admin = basic(ADMIN.login, ADMIN.password);
  const set = await call('/v3/settings', { method: 'PATCH', auth: admin, json: { values } });
  if (set.status !== 200) throw new Error(`cannot save ${Object.keys(values).join(', ')}: ${await set.text()}`);
  // The work's own failure first; a setting left saved then fails the test as well.
  const outcome = await work().then(
    () => ({ ok: true as const }),
    (err: unknown) => ({ ok: false as const, err }),
  );
  const unreset: string[] = [];
  for (const name of Object.keys(values)) {
    const reset = await call(`/v3/settings/${name}`, { method: 'DELETE', auth: admin });
    if (reset.status !== 200) unreset.push(`${name}: ${reset.status} ${await reset.text()}`);
  }
  if (!outcome.ok) throw outcome.err;
  if (unreset.length > 0) throw new Error(`cannot reset ${unreset.join('; ')}`);
}

let counter = 0;
/**
 * A login no other test uses: the prefix and 13 characters (the time, a counter, 4 random ones), the
 * same length whatever number of logins the test run made before (the files share this module).
 */
export function uniqueLogin(prefix = 'u'): string {
  counter = (counter + 1) % 36;
  const random = Math.random().toString(36).slice(2, 6).padEnd(4, '0');
  return `${prefix}${Date.now().toString(36)}${counter.toString(36)}${random}`;
}

/** Creates a local account through the admin API; returns its id. */
export async function createUser(
  login: string,
  password: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const r = await callJson<{ id: string }>('/v4/users', {
    method: 'POST',
    auth: basic(ADMIN.login, ADMIN.password),
    json: { login, password, ...extra },
  });
  if (r.status !== 201) throw new Error(`cannot create ${login}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id;
}

export const DAY = 86_400_000;
export const MINUTE = 60_000;

/**
 * A user account granted super-access (lent admin rights) for `minutes`, on the shared host or
 * `base`; returns its id and Basic credentials.
 */
export async function createSuperAccessHolder(
  o: { base?: string; minutes?: number } = {},
): Promise<{ id: string; login: string; auth: string }> {
  const login = uniqueLogin('su');
  const password = 'Len7$rights';
  const admin = basic(ADMIN.login, ADMIN.password);
  const created = await callJson<{ id: string }>('/v4/users', {
    base: o.base,
    method: 'POST',
    auth: admin,
    json: { login, password },
  });
  if (created.status !== 201)
    throw new Error(`cannot create ${login}: ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.id;
  const r = await call(`/v4/users/${id}/super-access`, {
    base: o.base,
    method: 'POST',
    auth: admin,
    json: { minutes: o.minutes ?? 1440 },
  });
  if (r.status !== 200) throw new Error(`cannot grant super-access: ${r.status} ${await r.text()}`);
  return { id, login, auth: basic(login, password) };
}
