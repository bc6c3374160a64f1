/**
 * Changing second factors, and what an incident response ends (docs/security-mfa.md, "Changing factors";
 * docs/security.md, "What ends what"), on both hosts, with passkeys from a software authenticator
 * (test/harness/soft-authenticator.ts) and TOTP codes from oathtool:
 * - every route that adds, confirms, renames or removes a factor needs the step-up of a session past its
 *   window, so a stolen session cannot plant a passkey and then remove the owner's authenticator;
 * - the first factor needs a recent sign-in; under MFA_REQUIRED_ROLES a passkey may be that factor;
 * - an administrator's reset ends the passkeys (lent rights may not), and a password that must be changed
 *   opens nothing, whatever factor signs in.
 */
import { describe, expect, it } from 'vitest';
import { Browser } from '../harness/browser.js';
import {
  ADMIN,
  DAY,
  MINUTE,
  basic,
  baseUrl,
  call,
  callJson,
  createSuperAccessHolder,
  createUser,
  testClock,
  uniqueLogin,
  withSettings,
} from '../harness/client.js';
import { softAuthenticator } from '../harness/soft-authenticator.js';
import { totpCode } from '../harness/totp.js';

const PASSWORD = 'Str0ng$pass';
const admin = basic(ADMIN.login, ADMIN.password);
const url = (path: string) => `${baseUrl()}${path}`;
const clock = testClock();
const moveClock = clock.move;

async function body(res: Response): Promise<Record<string, any>> {
  const text = await res.text();
  return text ? (JSON.parse(text) as Record<string, any>) : {};
}

async function signedIn(login: string): Promise<Browser> {
  const b = new Browser(new URL(baseUrl()).origin);
  const res = await b.postJson(url('/v3/login'), { login, password: PASSWORD });
  expect(res.status, await res.clone().text()).toBe(200);
  return b;
}

type Key = Awaited<ReturnType<typeof softAuthenticator>>;

/** Registers a passkey of a software authenticator with session `b`: the key, its id and user handle. */
async function addPasskey(b: Browser): Promise<{ key: Key; id: string; userHandle: string }> {
  const options = await b.postJson(url('/v4/users/me/passkeys/registration-options'), {});
  expect(options.status, await options.clone().text()).toBe(200);
  const creation = (await options.json()) as { challenge: string; rp: { id: string }; user: { id: string } };
  const key = await softAuthenticator(creation.rp.id);
  const registered = await b.postJson(url('/v4/users/me/passkeys'), {
    name: 'laptop',
    response: key.create(creation.challenge, b.origin),
  });
  expect(registered.status, await registered.clone().text()).toBe(201);
  return { key, id: ((await registered.json()) as { id: string }).id, userHandle: creation.user.id };
}

/** A passwordless sign-in with `key`, from a new browser. */
async function passkeySignIn(key: Key, userHandle: string): Promise<{ res: Response; b: Browser }> {
  const b = new Browser(new URL(baseUrl()).origin);
  const options = await b.postJson(url('/v3/login/passkey/options'), {});
  expect(options.status).toBe(200);
  const { challenge } = (await options.json()) as { challenge: string };
  const res = await b.postJson(url('/v3/login/passkey'), { response: await key.get(challenge, userHandle, b.origin) });
  return { res, b };
}

/** A local account with a confirmed TOTP factor, enrolled by session `b` (verified by the confirmation). */
async function withTotp(): Promise<{ login: string; id: string; secret: string; b: Browser }> {
  const login = uniqueLogin('fc');
  const id = await createUser(login, PASSWORD);
  const b = await signedIn(login);
  const start = await b.fetch(url('/v4/users/me/totp'), { method: 'POST' });
  expect(start.status).toBe(201);
  const secret = new URL(((await start.json()) as { otpauthUri: string }).otpauthUri).searchParams.get('secret')!;
  expect((await b.postJson(url('/v4/users/me/totp/confirm'), { code: totpCode(secret, Date.now()) })).status).toBe(204);
  return { login, id, secret, b };
}

/** Every operation that changes the caller's own factors: not a read, below their own factor paths. */
async function factorChanges(): Promise<Array<{ method: string; path: string; stepUp: unknown }>> {
  const doc = (await (await fetch(url('/openapi.json'))).json()) as {
    paths: Record<string, Record<string, { 'x-step-up'?: unknown }>>;
  };
  return Object.entries(doc.paths)
    .filter(([path]) => /^\/v4\/users\/me\/(passkeys|totp|recovery-codes)/.test(path))
    .flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([method]) => method !== 'get')
        .map(([method, op]) => ({ method: method.toUpperCase(), path, stepUp: op['x-step-up'] })),
    );
}

describe('a change of factors needs the step-up (a stolen session plants nothing)', () => {
  it('every route that changes a factor refuses a session past its step-up window; a code renews it', async () => {
    const { secret, b } = await withTotp();
    const { id: passkeyId } = await addPasskey(b);
    const ops = await factorChanges();
    // Start, confirm and remove TOTP; recovery codes; registration options, register, rename, remove a passkey.
    expect(ops.length).toBeGreaterThanOrEqual(8);
    await moveClock(20 * MINUTE);
    const failures: string[] = [];
    for (const op of ops) {
      if (op.stepUp !== 'factors') failures.push(`${op.method} ${op.path}: x-step-up ${String(op.stepUp)}`);
      const res = await b.fetch(url(op.path.replace('{passkeyId}', passkeyId)), {
        method: op.method,
        headers: { 'Content-Type': 'application/json' },
        body: op.method === 'DELETE' ? undefined : '{}',
      });
      const problem = await body(res);
      if (res.status !== 403 || problem.code !== 'STEP_UP_REQUIRED')
        failures.push(`${op.method} ${op.path}: ${res.status} ${problem.code ?? ''}, expected 403 STEP_UP_REQUIRED`);
    }
    expect(failures).toEqual([]);
    // Nothing changed: the passkey is still there, under its name.
    const listed = await body(await b.fetch(url('/v4/users/me/passkeys')));
    expect(listed.items).toMatchObject([{ id: passkeyId, name: 'laptop' }]);
    // The owner steps up with a code; then the same session may change its factors again.
    const stepUp = await b.postJson(url('/v4/users/me/second-factor'), { code: totpCode(secret, clock.now()) });
    expect(stepUp.status).toBe(204);
    expect((await b.postJson(url('/v4/users/me/passkeys/registration-options'), {})).status).toBe(200);
  });

  it('a first factor needs a recent sign-in: a stale session, an API token refused; Basic passes', async () => {
    const login = uniqueLogin('fc');
    await createUser(login, PASSWORD);
    const stale = await signedIn(login);
    const token = await callJson<{ token: string }>('/v4/users/me/tokens', {
      method: 'POST',
      auth: basic(login, PASSWORD),
      json: { name: 'ci' },
    });
    expect(token.status).toBe(201);
    await moveClock(20 * MINUTE);
    for (const path of ['/v4/users/me/totp', '/v4/users/me/passkeys/registration-options']) {
      const res = await stale.postJson(url(path), {});
      expect(res.status, path).toBe(403);
      expect(await body(res), path).toMatchObject({ code: 'REAUTHENTICATION_REQUIRED', reason: 'stale_login' });
    }
    const byToken = await callJson('/v4/users/me/totp', { method: 'POST', auth: `Bearer ${token.body.token}` });
    expect(byToken.status).toBe(403);
    // No API token manages factors, whatever its scopes (docs/api.md, "API token scopes").
    expect(byToken.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    expect((await callJson('/v4/users/me/totp', { method: 'POST', auth: basic(login, PASSWORD) })).status).toBe(201);
    const fresh = await signedIn(login);
    expect((await fresh.postJson(url('/v4/users/me/passkeys/registration-options'), {})).status).toBe(200);
  });

  it('MFA_REQUIRED_ROLES: a passkey may be the first factor; its registration completes the enrolment', async () => {
    await withSettings({ MFA_REQUIRED_ROLES: 'auditor' }, async () => {
      const login = uniqueLogin('fcaud');
      await createUser(login, PASSWORD, { role: 'auditor' });
      const b = await signedIn(login);
      const refused = await b.fetch(url('/v4/users/me/tokens'));
      expect((await body(refused)).code).toBe('MFA_ENROLMENT_REQUIRED');
      expect((await b.fetch(url('/v4/users/me/passkeys'))).status).toBe(200);
      const { key, userHandle } = await addPasskey(b);
      expect((await b.fetch(url('/v4/users/me/tokens'))).status).toBe(200);
      const again = await passkeySignIn(key, userHandle);
      expect(again.res.status).toBe(200);
      expect((await again.b.fetch(url('/v4/users/me/tokens'))).status).toBe(200);
    });
  });
});

describe('an incident response leaves no passkey alive; a password to change opens nothing', () => {
  it("block, an administrator's reset, unblock: the old passkey no longer signs in", async () => {
    const login = uniqueLogin('fc');
    const id = await createUser(login, PASSWORD);
    const { key, userHandle } = await addPasskey(await signedIn(login));
    expect((await passkeySignIn(key, userHandle)).res.status).toBe(200);
    expect((await call(`/v4/users/${id}/block`, { method: 'POST', auth: admin })).status).toBeLessThan(300);
    const reset = await call(`/v4/users/${id}/password`, {
      method: 'POST',
      auth: admin,
      json: { password: 'N3w$passw0rd', mustChangePassword: true },
    });
    expect(reset.status).toBe(204);
    expect((await call(`/v4/users/${id}/unblock`, { method: 'POST', auth: admin })).status).toBeLessThan(300);
    const after = await passkeySignIn(key, userHandle);
    expect(after.res.status).toBe(401);
    const listed = await callJson<{ factors: unknown[] }>(`/v4/users/${id}/second-factors`, { auth: admin });
    expect(listed.body.factors).toEqual([]);
  });

  it('a reset that keeps the passkeys: a passkey session may only change the password, then everything', async () => {
    const login = uniqueLogin('fc');
    const id = await createUser(login, PASSWORD);
    const { key, userHandle } = await addPasskey(await signedIn(login));
    const reset = await call(`/v4/users/${id}/password`, {
      method: 'POST',
      auth: admin,
      json: { password: 'N3w$passw0rd', mustChangePassword: true, endPasskeys: false },
    });
    expect(reset.status).toBe(204);
    const { res, b } = await passkeySignIn(key, userHandle);
    expect(res.status).toBe(200);
    // The session knows who it is, and may do nothing else: no sessions, tokens or passkey registrations.
    expect(await body(await b.fetch(url('/v4/users/me')))).toMatchObject({ login, mustChangePassword: true });
    for (const [method, path] of [
      ['GET', '/v4/users/me/sessions'],
      ['GET', '/v4/users/me/tokens'],
      ['POST', '/v4/users/me/passkeys/registration-options'],
    ] as const) {
      const refused = await b.fetch(url(path), { method });
      expect(refused.status, path).toBe(403);
      expect(await body(refused), path).toMatchObject({ code: 'PASSWORD_EXPIRED', passwordReason: 'reset' });
    }
    const changed = await b.fetch(url('/v4/users/me/password'), {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ oldPassword: 'N3w$passw0rd', newPassword: 'Ch0sen$pass' }),
    });
    expect(changed.status).toBe(204);
    expect((await b.fetch(url('/v4/users/me/sessions'))).status).toBe(200);
  });

  it('TOTP, and a password to change: both steps, then a session that may only change it', async () => {
    const { login, id, secret } = await withTotp();
    const reset = await call(`/v4/users/${id}/password`, {
      method: 'POST',
      auth: admin,
      json: { password: 'N3w$passw0rd', mustChangePassword: true },
    });
    expect(reset.status).toBe(204);
    // Basic cannot carry the second factor, for the change either: it points at the session login.
    const basicChange = await callJson('/v4/users/me/password', {
      method: 'PUT',
      auth: basic(login, 'N3w$passw0rd'),
      json: { oldPassword: 'N3w$passw0rd', newPassword: 'Ch0sen$pass' },
    });
    expect(basicChange.body.code).toBe('SECOND_FACTOR_NOT_ALLOWED_HERE');
    const b = new Browser(new URL(baseUrl()).origin);
    const first = await b.postJson(url('/v3/login'), { login, password: 'N3w$passw0rd' });
    expect(first.status).toBe(401);
    expect((await body(first)).code).toBe('SECOND_FACTOR_REQUIRED');
    // The code of the next step: the enrolment used the current one.
    const second = await b.postJson(url('/v3/login/second-factor'), { code: totpCode(secret, Date.now(), 1) });
    expect(second.status, await second.clone().text()).toBe(200);
    expect((await body(await b.fetch(url('/v4/users/me/sessions')))).code).toBe('PASSWORD_EXPIRED');
    const changed = await b.fetch(url('/v4/users/me/password'), {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ oldPassword: 'N3w$passw0rd', newPassword: 'Ch0sen$pass' }),
    });
    expect(changed.status).toBe(204);
    expect((await b.fetch(url('/v4/users/me/sessions'))).status).toBe(200);
  });

  it('a session whose password expires while it lives may only change the password', async () => {
    const days = 2;
    await withSettings({ USER_PASSWORD_EXPIRATION_DAY: days }, async () => {
      try {
        const login = uniqueLogin('fc');
        await createUser(login, PASSWORD);
        await moveClock(days * DAY - 30 * MINUTE);
        const b = await signedIn(login);
        expect((await b.fetch(url('/v4/users/me/sessions'))).status).toBe(200);
        await moveClock(days * DAY + 30 * MINUTE);
        const refused = await b.fetch(url('/v4/users/me/sessions'));
        expect(refused.status).toBe(403);
        expect(await body(refused)).toMatchObject({ code: 'PASSWORD_EXPIRED', passwordReason: 'expired' });
        const changed = await b.fetch(url('/v4/users/me/password'), {
          method: 'PUT',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ oldPassword: PASSWORD, newPassword: 'Ch0sen$pass' }),
        });
        expect(changed.status).toBe(204);
        expect((await b.fetch(url('/v4/users/me/sessions'))).status).toBe(200);
      } finally {
        // The clock first: the administrator's own password would be expired too, and it resets the setting.
        await moveClock(0);
      }
    });
  });

  it('lent rights may reset a password but not end passkeys (a change of second factors)', async () => {
    const holder = await createSuperAccessHolder();
    const login = uniqueLogin('fc');
    const id = await createUser(login, PASSWORD);
    const { key, userHandle } = await addPasskey(await signedIn(login));
    const ending = await callJson(`/v4/users/${id}/password`, {
      method: 'POST',
      auth: holder.auth,
      json: { password: 'N3w$passw0rd' },
    });
    expect(ending.status).toBe(403);
    expect(ending.body.detail).toMatch(/^super-access cannot end the passkeys/);
    const keeping = await call(`/v4/users/${id}/password`, {
      method: 'POST',
      auth: holder.auth,
      json: { password: 'N3w$passw0rd', mustChangePassword: false, endPasskeys: false },
    });
    expect(keeping.status).toBe(204);
    expect((await passkeySignIn(key, userHandle)).res.status).toBe(200);
  });
});
