/**
 * Second factors on both hosts (docs/security-mfa.md): TOTP enrolment with codes computed by Debian's
 * oathtool (an independent implementation), the two-step login of /v3/login and /v3/oauth_login,
 * replay, wrong codes restricted like wrong passwords, Basic refused, recovery codes used once,
 * step-up expiry, enforcement per role, a password reset not bypassing the factor, admin removal.
 */
import { describe, expect, it } from 'vitest';
import { totpCode } from '../harness/totp.js';
import { Browser } from '../harness/browser.js';
import {
  ADMIN,
  MINUTE,
  basic,
  baseUrl,
  call,
  callJson,
  createUser,
  testClock,
  uniqueLogin,
  withSettings,
} from '../harness/client.js';

const PASSWORD = 'Str0ng$pass';
const url = (path: string) => `${baseUrl()}${path}`;
const admin = basic(ADMIN.login, ADMIN.password);
const clock = testClock();
const moveClock = clock.move;

/** The TOTP code of `secret` at the service's time plus `steps` periods, by oathtool. */
function totp(secret: string, steps = 0): string {
  return totpCode(secret, clock.now(), steps);
}

async function json(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text();
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** A new local account with a confirmed TOTP factor; its browser holds the session that enrolled. */
async function enrolled(
  role = 'user',
): Promise<{ login: string; id: string; secret: string; b: Browser; used: string }> {
  const login = uniqueLogin('mfa');
  const id = await createUser(login, PASSWORD, { role });
  const b = new Browser(new URL(baseUrl()).origin);
  expect((await b.postJson(url('/v3/login'), { login, password: PASSWORD })).status).toBe(200);
  const start = await b.fetch(url('/v4/users/me/totp'), { method: 'POST' });
  expect(start.status).toBe(201);
  const body = (await start.json()) as { otpauthUri: string; qrSvg: string };
  expect(body.otpauthUri).toMatch(/^otpauth:\/\/totp\//);
  expect(body.qrSvg).toMatch(/^<svg/);
  const secret = new URL(body.otpauthUri).searchParams.get('secret')!;
  const used = totp(secret);
  const confirmed = await b.postJson(url('/v4/users/me/totp/confirm'), { code: used });
  expect(confirmed.status).toBe(204);
  return { login, id, secret, b, used };
}

/** The first step: the right password of an account with a factor. */
async function firstStep(b: Browser, login: string) {
  const res = await b.postJson(url('/v3/login'), { login, password: PASSWORD });
  return { res, body: await json(res) };
}

describe('TOTP enrolment and the two-step login', () => {
  it('a right password gets no session but a pending login naming the factors; the code opens it once', async () => {
    const { login, secret } = await enrolled();
    const b = new Browser(new URL(baseUrl()).origin);
    const { res, body } = await firstStep(b, login);
    expect(res.status).toBe(401);
    expect(body.code).toBe('SECOND_FACTOR_REQUIRED');
    expect(body.factors).toEqual(['totp']);
    expect(res.headers.getSetCookie().join()).not.toMatch(/auth_session=/);
    expect((await b.fetch(url('/v4/users/me'))).status).toBe(401);

    // The pending cookie carries it for a browser: no token in the body needed.
    const done = await b.postJson(url('/v3/login/second-factor'), { code: totp(secret, 1) });
    expect(done.status).toBe(200);
    expect(((await done.json()) as { user: { login: string } }).user.login).toBe(login);
    expect((await b.fetch(url('/v4/users/me'))).status).toBe(200);

    // The pending login is used: its token completes nothing more, even with a fresh code.
    const again = await call('/v3/login/second-factor', {
      method: 'POST',
      json: { pendingToken: body.pendingToken, code: totp(secret, 2) },
    });
    expect(again.status).toBe(401);
  });

  it('a code is accepted at most once (replay refused), and the factor listing shows no secret', async () => {
    const { login, secret, b } = await enrolled();
    const code = totp(secret, 1);
    const first = await firstStep(new Browser(b.origin), login);
    const ok = await call('/v3/login/second-factor', {
      method: 'POST',
      json: { pendingToken: first.body.pendingToken, code },
    });
    expect(ok.status).toBe(200);
    const second = await firstStep(new Browser(b.origin), login);
    const replay = await callJson('/v3/login/second-factor', {
      method: 'POST',
      json: { pendingToken: second.body.pendingToken, code },
    });
    expect(replay.status).toBe(401);
    expect(replay.body.code).toBe('INVALID_CREDENTIALS');
    // The code of the step the enrolment used is older than the last accepted one: refused too.
    const older = await callJson('/v3/login/second-factor', {
      method: 'POST',
      json: { pendingToken: second.body.pendingToken, code: totp(secret, 0) },
    });
    expect(older.status).toBe(401);

    const mine = await callJson('/v4/users/me/second-factors', {}).catch(() => null);
    expect(mine?.status).toBe(401);
    const listed = await callJson(`/v4/users/${(await adminUser(login)).id}/second-factors`, { auth: admin });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    expect((listed.body.factors as { kind: string }[]).map((f) => f.kind)).toEqual(['totp']);
  });

  it(
    "the enrolment's code again: told as already used with the seconds to the next one, not counted; " +
      'wrong codes still count',
    async () => {
      // `used`: the code that confirmed the enrolment (its step is the last accepted one).
      const { login, secret, used } = await enrolled();
      const { body } = await firstStep(new Browser(new URL(baseUrl()).origin), login);
      const second = (code: string) =>
        callJson('/v3/login/second-factor', { method: 'POST', json: { pendingToken: body.pendingToken, code } });
      // AUTH_FAILED_COUNT (3) replays: none counts, so none locks.
      for (let i = 0; i < 3; i++) {
        const replay = await second(used);
        expect(replay.status).toBe(401);
        expect(replay.body.code).toBe('INVALID_CREDENTIALS');
        expect(replay.body.reason).toBe('replayed');
        const wait = replay.body.retryAfter as number;
        expect(wait).toBeGreaterThanOrEqual(1);
        expect(wait).toBeLessThanOrEqual(60);
        expect(replay.body.detail).toBe(`this code was already used: wait for the next one (${wait} s)`);
      }
      // A wrong code counts, and is not told as a replay.
      const wrongCode = [used, totp(secret, 1), totp(secret, -1)].includes('000000') ? '111111' : '000000';
      for (let i = 0; i < 2; i++) {
        const wrong = await second(wrongCode);
        expect(wrong.status).toBe(401);
        expect(wrong.body.code).toBe('INVALID_CREDENTIALS');
        expect(wrong.body.reason).toBeUndefined();
        expect(wrong.body.retryAfter).toBeUndefined();
      }
      // Two failures counted of three: the next code still opens the login.
      const ok = await second(totp(secret, 1));
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);

      // The audit trail says which refusal was which.
      const events = await callJson<{ items: { event: { type: string }; data?: { reason?: string } }[] }>(
        `/v3/logs/user_activity/events?user=${encodeURIComponent(login)}&size=100`,
        { auth: admin },
      );
      expect(events.status, JSON.stringify(events.body)).toBe(200);
      const reasons = events.body.items.filter((i) => i.event.type === 'mfa.failure').map((i) => i.data?.reason);
      expect(reasons.sort()).toEqual(['replayed', 'replayed', 'replayed', 'wrong', 'wrong']);
    },
  );

  it(
    'a wrong code then the replay: the wrong one counts, the third failure locks (replays in between ' + 'do not)',
    async () => {
      const { login, secret, used } = await enrolled();
      const { body } = await firstStep(new Browser(new URL(baseUrl()).origin), login);
      const second = (code: string) =>
        callJson('/v3/login/second-factor', { method: 'POST', json: { pendingToken: body.pendingToken, code } });
      const wrongCode = [used, totp(secret, 1), totp(secret, -1)].includes('000000') ? '111111' : '000000';
      for (let i = 0; i < 2; i++) {
        expect((await second(wrongCode)).body.code).toBe('INVALID_CREDENTIALS');
        expect((await second(used)).body.reason).toBe('replayed');
      }
      expect((await second(used)).body.reason).toBe('replayed');
      // The third wrong code locks the login: the right one is refused after it.
      expect((await second(wrongCode)).body.code).toBe('INVALID_CREDENTIALS');
      expect((await second(totp(secret, 1))).body.code).toBe('ACCOUNT_LOCKED');
    },
  );

  it('wrong codes count like wrong passwords: AUTH_FAILED_COUNT of them lock the login', async () => {
    const { login, secret } = await enrolled();
    const { body } = await firstStep(new Browser(new URL(baseUrl()).origin), login);
    for (let i = 0; i < 3; i++) {
      const wrong = await callJson('/v3/login/second-factor', {
        method: 'POST',
        json: { pendingToken: body.pendingToken, code: totp(secret, 1) === '000000' ? '111111' : '000000' },
      });
      expect(wrong.status).toBe(401);
      expect(wrong.body.code).toBe('INVALID_CREDENTIALS');
    }
    const locked = await callJson('/v3/login/second-factor', {
      method: 'POST',
      json: { pendingToken: body.pendingToken, code: totp(secret, 1) },
    });
    expect(locked.status).toBe(401);
    expect(locked.body.code).toBe('ACCOUNT_LOCKED');
    // The same restriction as the password's: the password login is locked too.
    const pw = await callJson('/v3/login', { method: 'POST', json: { login, password: PASSWORD } });
    expect(pw.body.code).toBe('ACCOUNT_LOCKED');
  });

  it('Basic (login_without_session) is refused with a problem pointing to API tokens', async () => {
    const { login } = await enrolled();
    const r = await callJson('/v3/login_without_session', { method: 'POST', auth: basic(login, PASSWORD) });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('SECOND_FACTOR_NOT_ALLOWED_HERE');
    expect(String(r.body.detail)).toContain('/v4/users/me/tokens');
  });

  it('oauth_login: insufficient_user_authentication without otp; the code as otp gives the token', async () => {
    const { login, secret } = await enrolled();
    const grant = { grant_type: 'password', username: login, password: PASSWORD };
    const without = await callJson('/v3/oauth_login', { method: 'POST', form: grant });
    expect(without.status).toBe(400);
    expect(without.body.error).toBe('insufficient_user_authentication');
    expect(without.body.access_token).toBeUndefined();
    const wrong = await callJson('/v3/oauth_login', { method: 'POST', form: { ...grant, otp: '000000' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');
    const ok = await callJson<{ access_token: string }>('/v3/oauth_login', {
      method: 'POST',
      form: { ...grant, otp: totp(secret, 1) },
    });
    expect(ok.status).toBe(200);
    const me = await call('/v4/users/me', { auth: `Bearer ${ok.body.access_token}` });
    expect(me.status).toBe(200);
  });
});

async function adminUser(login: string): Promise<{ id: string }> {
  const r = await callJson<{ items: { id: string; login: string }[] }>(`/v4/users?login=${login}`, { auth: admin });
  const found = r.body.items?.find((u) => u.login === login);
  if (found) return found;
  throw new Error(`no user ${login}: ${r.status}`);
}

describe('recovery codes, step-up, enforcement, reset, admin removal', () => {
  it('10 recovery codes, shown once; each opens one login only', async () => {
    const { login, b } = await enrolled();
    const gen = await b.fetch(url('/v4/users/me/recovery-codes'), { method: 'POST' });
    expect(gen.status).toBe(201);
    const { codes } = (await gen.json()) as { codes: string[] };
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    const first = await firstStep(new Browser(b.origin), login);
    expect(first.body.factors).toEqual(['totp', 'recovery_code']);
    const used = await call('/v3/login/second-factor', {
      method: 'POST',
      json: { pendingToken: first.body.pendingToken, recoveryCode: codes[0]!.toUpperCase() },
    });
    expect(used.status).toBe(200);
    const second = await firstStep(new Browser(b.origin), login);
    const reused = await call('/v3/login/second-factor', {
      method: 'POST',
      json: { pendingToken: second.body.pendingToken, recoveryCode: codes[0] },
    });
    expect(reused.status).toBe(401);
    const listed = await callJson(`/v4/users/${(await adminUser(login)).id}/second-factors`, { auth: admin });
    expect((listed.body.recoveryCodes as { left: number }).left).toBe(9);
  });

  it('step-up: a sensitive operation needs a recent verification, and a code renews it', async () => {
    const { secret, b } = await enrolled();
    // The enrolment's session verified the factor just now: it may issue an API token.
    const fresh = await b.postJson(url('/v4/users/me/tokens'), { name: 'fresh' });
    expect(fresh.status).toBe(201);
    await moveClock(20 * MINUTE);
    const stale = await b.postJson(url('/v4/users/me/tokens'), { name: 'stale' });
    expect(stale.status).toBe(403);
    expect(((await stale.json()) as { code: string }).code).toBe('STEP_UP_REQUIRED');
    const stepUp = await b.postJson(url('/v4/users/me/second-factor'), { code: totp(secret) });
    expect(stepUp.status).toBe(204);
    // A factor removal is a sensitive operation too; renewed, it passes.
    const removed = await b.fetch(url('/v4/users/me/totp'), { method: 'DELETE' });
    expect(removed.status).toBe(204);
  });

  it('MFA_REQUIRED_ROLES: a session of such a role without a factor may only enrol', async () => {
    await withSettings({ MFA_REQUIRED_ROLES: 'auditor' }, async () => {
      const login = uniqueLogin('aud');
      await createUser(login, PASSWORD, { role: 'auditor' });
      const b = new Browser(new URL(baseUrl()).origin);
      expect((await b.postJson(url('/v3/login'), { login, password: PASSWORD })).status).toBe(200);
      expect((await b.fetch(url('/v4/users/me'))).status).toBe(200);
      const refused = await b.fetch(url('/v4/users/me/tokens'));
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { code: string }).code).toBe('MFA_ENROLMENT_REQUIRED');
      const basicRefused = await callJson('/v4/users/me/tokens', { auth: basic(login, PASSWORD) });
      expect(basicRefused.body.code).toBe('MFA_ENROLMENT_REQUIRED');
      const start = await b.fetch(url('/v4/users/me/totp'), { method: 'POST' });
      const secret = new URL(((await start.json()) as { otpauthUri: string }).otpauthUri).searchParams.get('secret')!;
      expect((await b.postJson(url('/v4/users/me/totp/confirm'), { code: totp(secret) })).status).toBe(204);
      expect((await b.fetch(url('/v4/users/me/tokens'))).status).toBe(200);
      // Another role is not concerned.
      const plain = uniqueLogin('usr');
      await createUser(plain, PASSWORD);
      const u = new Browser(b.origin);
      expect((await u.postJson(url('/v3/login'), { login: plain, password: PASSWORD })).status).toBe(200);
      expect((await u.fetch(url('/v4/users/me/tokens'))).status).toBe(200);
    });
  });

  it('a password reset does not remove or bypass the factor', async () => {
    const { login, id } = await enrolled();
    const reset = await call(`/v4/users/${id}/password`, {
      method: 'POST',
      auth: admin,
      json: { password: 'N3w$password', mustChangePassword: false },
    });
    expect(reset.status).toBeLessThan(300);
    const r = await callJson('/v3/login', { method: 'POST', json: { login, password: 'N3w$password' } });
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('SECOND_FACTOR_REQUIRED');
  });

  it('an administrator removes a lost factor: audited, sessions ended, the password alone logs in again', async () => {
    const { login, id, b } = await enrolled();
    expect((await b.fetch(url('/v4/users/me'))).status).toBe(200);
    const removed = await call(`/v4/users/${id}/second-factors`, { method: 'DELETE', auth: admin });
    expect(removed.status).toBe(204);
    expect((await b.fetch(url('/v4/users/me'))).status).toBe(401);
    const listed = await callJson(`/v4/users/${id}/second-factors`, { auth: admin });
    expect(listed.body.factors).toEqual([]);
    const r = await callJson('/v3/login', { method: 'POST', json: { login, password: PASSWORD } });
    expect(r.status).toBe(200);
    // Nothing left to remove: 204 again, and a new session lives on (nothing ends with an empty removal).
    const again = new Browser(new URL(baseUrl()).origin);
    expect((await again.postJson(url('/v3/login'), { login, password: PASSWORD })).status).toBe(200);
    expect((await call(`/v4/users/${id}/second-factors`, { method: 'DELETE', auth: admin })).status).toBe(204);
    expect((await again.fetch(url('/v4/users/me'))).status).toBe(200);
    // Nor does the removal of a TOTP factor the account no longer has: 404, the session lives on.
    expect((await again.fetch(url('/v4/users/me/totp'), { method: 'DELETE' })).status).toBe(404);
    expect((await again.fetch(url('/v4/users/me'))).status).toBe(200);
  });
});
