/**
 * One permission table over every protected route of the OpenAPI description: each route declares
 * its roles (`x-required-roles`) and security schemes; anonymous callers get 401, roles outside the
 * list 403, roles inside it neither. Admin-only routes also declare what super-access (lent admin
 * rights) may do (`x-super-access`, and `x-super-access-target: unprivileged` where the target account
 * must hold neither admin rights nor the auditor role): a super-access holder walks every route
 * against that declaration, on an administrator's and on an auditor's account.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggedInBrowser, type Browser } from '../harness/browser.js';
import {
  ADMIN,
  basic,
  baseUrl,
  callJson,
  createSuperAccessHolder,
  createUser,
  uniqueLogin,
} from '../harness/client.js';

type Role = 'admin' | 'auditor' | 'user';
interface Operation {
  method: string;
  path: string;
  roles: Role[];
  security: string[];
  superAccess?: unknown;
  superAccessTarget?: unknown;
  /** What an API token needs (`none`: no API token may call it; test/http/token-scopes.test.ts). */
  tokenScope?: string;
}
type OpenApiOperation = {
  'x-token-scope'?: string;
  'x-required-roles'?: Role[];
  'x-super-access'?: unknown;
  'x-super-access-target'?: unknown;
  security?: Record<string, string[]>[];
};

const PASSWORD = 'Str0ng$pass';
/** A caller's credentials: Basic, an API token, and the password for a session (cookie-only routes). */
interface Creds {
  basic: string;
  bearer: string;
  login: string;
  password: string;
}
const creds: Record<Role, Creds> = {} as never;
let operations: Operation[] = [];
/** Operations without a security requirement that still declare roles (there must be none). */
let publicWithRoles: string[] = [];

beforeAll(async () => {
  const doc = (await (await fetch(`${baseUrl()}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, OpenApiOperation>>;
  };
  publicWithRoles = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => !op.security?.length && op['x-required-roles'] !== undefined)
      .map(([method]) => `${method.toUpperCase()} ${path}`),
  );
  operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      // Operations an account may call (GET /metrics takes only the scrape token: test/http/metrics.test.ts).
      .filter(([, op]) => op.security?.some((s) => !('metricsToken' in s)))
      .map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        roles: op['x-required-roles'] ?? [],
        security: op.security!.flatMap((s) => Object.keys(s)),
        superAccess: op['x-super-access'],
        superAccessTarget: op['x-super-access-target'],
        tokenScope: op['x-token-scope'],
      })),
  );
  const logins: Record<Role, string> = { admin: ADMIN.login, auditor: uniqueLogin('aud'), user: uniqueLogin('usr') };
  await createUser(logins.auditor, PASSWORD, { role: 'auditor' });
  await createUser(logins.user, PASSWORD);
  for (const role of ['admin', 'auditor', 'user'] as const) {
    const b = basic(logins[role], role === 'admin' ? ADMIN.password : PASSWORD);
    const token = (
      await callJson<{ token: string }>('/v4/users/me/tokens', {
        method: 'POST',
        auth: b,
        json: { name: `perm-${role}` },
      })
    ).body.token;
    const password = role === 'admin' ? ADMIN.password : PASSWORD;
    creds[role] = { basic: b, bearer: `Bearer ${token}`, login: logins[role], password };
  }
});

function concrete(path: string, userId = '00000000-0000-4000-8000-000000000000'): string {
  return (
    path
      .replace('{userId}', userId)
      .replace('{tokenId}', '00000000-0000-4000-8000-000000000001')
      .replace('{sessionId}', 'no-such-session')
      .replace('{name}', 'NOPE')
      // A real log type: the logs routes answer 404 for any other before checking anything else.
      .replace('{audit_log_type}', 'user_activity')
  );
}

/**
 * The credential a route takes: Basic where it may, else an API token, else (cookie only) a session
 * opened for the call (a route walked before, /v3/logout/all, ends the caller's sessions).
 */
async function credential(op: Operation, c: Creds): Promise<{ auth?: string; browser?: Browser }> {
  if (op.security.includes('basic')) return { auth: c.basic };
  if (op.security.includes('bearer') && op.tokenScope !== 'none') return { auth: c.bearer };
  return { browser: await loggedInBrowser(baseUrl(), c.login, c.password) };
}

async function sendFor(
  op: Operation,
  cred: { auth?: string; browser?: Browser } = {},
  userId?: string,
): Promise<{ status: number; detail: string }> {
  const body = ['POST', 'PUT', 'PATCH'].includes(op.method) ? '{}' : undefined;
  const url = `${baseUrl()}${concrete(op.path, userId)}`;
  const init = {
    method: op.method,
    headers: {
      ...(cred.auth ? { Authorization: cred.auth } : {}),
      ...(body ? { 'Content-Type': 'application/json' } : {}),
    },
    body,
  };
  // A session goes as a browser sends it: its cookie, and its Origin on unsafe methods.
  const res = cred.browser ? await cred.browser.fetch(url, init) : await fetch(url, init);
  const text = await res.text();
  const detail =
    /^application\/(problem\+)?json/.test(res.headers.get('Content-Type') ?? '') && text
      ? String((JSON.parse(text) as { detail?: unknown }).detail ?? '')
      : '';
  return { status: res.status, detail };
}

async function send(op: Operation, cred?: { auth?: string; browser?: Browser }) {
  return (await sendFor(op, cred)).status;
}

describe('permission table', () => {
  it('covers the protected routes, each with its roles declared', () => {
    expect(operations.length).toBeGreaterThanOrEqual(20);
    for (const op of operations) expect(op.roles.length, `${op.method} ${op.path}`).toBeGreaterThan(0);
  });

  it('public routes declare no roles (protectedRoute is the only source of x-required-roles)', () => {
    expect(publicWithRoles).toEqual([]);
  });

  it('every protected route × admin, auditor, user, anonymous', async () => {
    const failures: string[] = [];
    for (const op of operations) {
      const anonymous = await send(op);
      if (anonymous !== 401) failures.push(`${op.method} ${op.path} anonymous: ${anonymous}`);
      for (const role of ['admin', 'auditor', 'user'] as const) {
        const status = await send(op, await credential(op, creds[role]));
        const allowed = op.roles.includes(role);
        if (allowed && (status === 401 || status === 403))
          failures.push(`${op.method} ${op.path} ${role}: ${status}, expected access`);
        if (!allowed && status !== 403) failures.push(`${op.method} ${op.path} ${role}: ${status}, expected 403`);
      }
    }
    expect(failures).toEqual([]);
    // Four requests for each of some hundred operations, one after another.
  }, 240_000);
});

describe('super-access (lent admin rights) × every protected route', () => {
  const adminOnly = () => operations.filter((op) => !op.roles.includes('user') && op.roles.includes('admin'));
  const holder: Creds = { basic: '', bearer: '', login: '', password: '' };
  let targetAdminId = '';
  let targetAuditorId = '';

  beforeAll(async () => {
    const h = await createSuperAccessHolder();
    holder.basic = h.auth;
    const issued = await callJson<{ token: string }>('/v4/users/me/tokens', {
      method: 'POST',
      auth: h.auth,
      json: { name: 'su' },
    });
    holder.bearer = `Bearer ${issued.body.token}`;
    const [login, password] = Buffer.from(h.auth.slice('Basic '.length), 'base64').toString('utf8').split(':');
    holder.login = login!;
    holder.password = password!;
    // A second administrator, so that a wrongly allowed change can never hit the suites' own admin.
    targetAdminId = await createUser(uniqueLogin('sutarget'), PASSWORD, { role: 'admin' });
    // An auditor reads the audit trail that records what super-access did: as protected as an administrator.
    targetAuditorId = await createUser(uniqueLogin('suaudit'), PASSWORD, { role: 'auditor' });
  });
  // Other suites count the active administrators: leave only the ones they know.
  afterAll(async () => {
    if (targetAdminId)
      await callJson(`/v4/users/${targetAdminId}`, { method: 'DELETE', auth: basic(ADMIN.login, ADMIN.password) });
  });

  it('every admin-only route declares what super-access may do', () => {
    expect(adminOnly().length).toBeGreaterThanOrEqual(20);
    for (const op of adminOnly()) {
      expect(typeof op.superAccess, `${op.method} ${op.path} x-super-access`).toBe('boolean');
      const target = op.superAccessTarget;
      expect([undefined, 'unprivileged'], `${op.method} ${op.path} x-super-access-target`).toContain(target);
      // The target account is the path's, or that of the record it names (a notification's: test/http/mail-outbox).
      if (op.superAccessTarget !== undefined) expect(op.path, `${op.method} ${op.path}`).toMatch(/\{userId\}|\{id\}/);
    }
  });

  it('a super-access holder is allowed or refused (403 naming super-access) exactly as declared', async () => {
    const failures: string[] = [];
    for (const op of operations) {
      const { status, detail } = await sendFor(op, await credential(op, holder));
      const lent = !op.roles.includes('user') && op.roles.includes('admin');
      const allowed = op.roles.includes('user') || (lent && op.superAccess === true);
      const refusal = lent ? /^super-access cannot / : /./;
      if (allowed && (status === 401 || status === 403))
        failures.push(`${op.method} ${op.path}: ${status} ${detail}, expected access`);
      if (!allowed && (status !== 403 || !refusal.test(detail)))
        failures.push(`${op.method} ${op.path}: ${status} ${detail}, expected 403 naming super-access`);
    }
    expect(failures).toEqual([]);
  });

  it.each([
    ['an administrator', 'admin', () => targetAdminId],
    ['an auditor', 'auditor', () => targetAuditorId],
  ] as const)('on %s account: reading is allowed, every change refused where declared', async (_n, role, id) => {
    const failures: string[] = [];
    const onAccounts = adminOnly().filter((o) => o.path.includes('{userId}') && o.superAccess === true);
    // PATCH, DELETE, block, unblock, unlock, password, a session, a token: refused on protected accounts.
    expect(onAccounts.filter((o) => o.superAccessTarget === 'unprivileged').length).toBeGreaterThanOrEqual(8);
    for (const op of onAccounts) {
      const { status, detail } = await sendFor(op, await credential(op, holder), id());
      if (op.superAccessTarget === 'unprivileged') {
        if (status !== 403 || !/^super-access cannot .*administrator or auditor/.test(detail))
          failures.push(`${op.method} ${op.path}: ${status} ${detail}, expected 403`);
      } else if (status === 401 || status === 403) {
        failures.push(`${op.method} ${op.path}: ${status} ${detail}, expected access`);
      }
    }
    expect(failures).toEqual([]);
    // Reads of the account remain allowed, and nothing of it changed.
    const read = await callJson<{ status: string; role: string }>(`/v4/users/${id()}`, { auth: holder.basic });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ status: 'active', role });
  });

  it(
    "an auditor's account cannot be taken over: no password reset, no new address, so no token as the " + 'auditor',
    async () => {
      const login = uniqueLogin('auditee');
      const id = await createUser(login, PASSWORD, { role: 'auditor' });
      const reset = await callJson(`/v4/users/${id}/password`, {
        method: 'POST',
        auth: holder.basic,
        json: { password: 'T4ken#over', mustChangePassword: false },
      });
      expect(reset.body).toMatchObject({ status: 403 });
      const patched = await callJson(`/v4/users/${id}`, {
        method: 'PATCH',
        auth: holder.basic,
        json: { email: 'holder@example.com' },
      });
      expect(patched.body).toMatchObject({ status: 403 });
      const asAuditor = await callJson('/v4/users/me/tokens', {
        method: 'POST',
        auth: basic(login, 'T4ken#over'),
        json: { name: 'kept' },
      });
      expect(asAuditor.status).toBe(401);
      const read = await callJson<{ email: string | null }>(`/v4/users/${id}`, { auth: holder.basic });
      expect(read.body.email).not.toBe('holder@example.com');
    },
  );
});
