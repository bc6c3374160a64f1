/**
 * One permission table over every protected route of the OpenAPI description: each route declares
 * its roles (`x-required-roles`) and security schemes; anonymous callers get 401, roles outside the
 * list 403, roles inside it neither.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, basic, baseUrl, callJson, createUser, uniqueLogin } from '../harness/client.js';

type Role = 'admin' | 'auditor' | 'user';
interface Operation {
  method: string;
  path: string;
  roles: Role[];
  security: string[];
}

const PASSWORD = 'Str0ng$pass';
const creds: Record<Role, { basic: string; bearer: string }> = {} as never;
let operations: Operation[] = [];

beforeAll(async () => {
  const doc = (await (await fetch(`${baseUrl()}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { 'x-required-roles'?: Role[]; security?: Record<string, string[]>[] }>>;
  };
  const root = new URL(baseUrl()).pathname;
  operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => op.security && op.security.length > 0)
      .map(([method, op]) => ({ method: method.toUpperCase(), path: path.slice(root.length), roles: op['x-required-roles'] ?? [], security: op.security!.flatMap((s) => Object.keys(s)) })),
  );
  const logins: Record<Role, string> = { admin: ADMIN.login, auditor: uniqueLogin('aud'), user: uniqueLogin('usr') };
  await createUser(logins.auditor, PASSWORD, { role: 'auditor' });
  await createUser(logins.user, PASSWORD);
  for (const role of ['admin', 'auditor', 'user'] as const) {
    const b = basic(logins[role], role === 'admin' ? ADMIN.password : PASSWORD);
    const token = (await callJson<{ token: string }>('/v4/users/me/tokens', { method: 'POST', auth: b, json: { name: `perm-${role}` } })).body.token;
    creds[role] = { basic: b, bearer: `Bearer ${token}` };
  }
});

function concrete(path: string): string {
  return path.replace('{userId}', '00000000-0000-4000-8000-000000000000').replace('{tokenId}', '00000000-0000-4000-8000-000000000001').replace('{sessionId}', 'no-such-session').replace('{name}', 'NOPE')
    // A real log type: the logs routes answer 404 for any other before checking anything else.
    .replace('{audit_log_type}', 'user_activity');
}

async function send(op: Operation, auth?: string) {
  const body = ['POST', 'PUT', 'PATCH'].includes(op.method) ? '{}' : undefined;
  const res = await fetch(`${baseUrl()}${concrete(op.path)}`, {
    method: op.method,
    headers: { ...(auth ? { Authorization: auth } : {}), ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

describe('permission table', () => {
  it('covers the protected routes, each with its roles declared', () => {
    expect(operations.length).toBeGreaterThanOrEqual(20);
    for (const op of operations) expect(op.roles.length, `${op.method} ${op.path}`).toBeGreaterThan(0);
  });

  it('every protected route × admin, auditor, user, anonymous', async () => {
    const failures: string[] = [];
    for (const op of operations) {
      const anonymous = await send(op);
      if (anonymous !== 401) failures.push(`${op.method} ${op.path} anonymous: ${anonymous}`);
      for (const role of ['admin', 'auditor', 'user'] as const) {
        const auth = op.security.includes('basic') ? creds[role].basic : creds[role].bearer;
        const status = await send(op, auth);
        const allowed = op.roles.includes(role);
        if (allowed && (status === 401 || status === 403)) failures.push(`${op.method} ${op.path} ${role}: ${status}, expected access`);
        if (!allowed && status !== 403) failures.push(`${op.method} ${op.path} ${role}: ${status}, expected 403`);
      }
    }
    expect(failures).toEqual([]);
  });
});
