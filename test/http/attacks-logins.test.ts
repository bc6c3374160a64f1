/**
 * Hostile suite (docs/testing.md, "The hostile suite"), attacks on password logins, on the shared host of each kind:
 * login variants, the lock as an oracle, the session limit, timing. Each `it` is one attack. The LDAP
 * side of these is in attacks-ldap.test.ts, the split across two hosts in attacks-hosts.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN, basic, call, callJson, createUser, setClockOffset, uniqueLogin } from '../harness/client.js';
import { compareTimings } from '../harness/timing.js';

const PATH = '/v3/login_without_session';
const PASSWORD = 'Str0ng$pass';
const WRONG = 'Wr0ng$pass';
const admin = basic(ADMIN.login, ADMIN.password);

const attempt = (login: string, password: string) => callJson(PATH, { method: 'POST', auth: basic(login, password) });

/** The full-width form of an ASCII login (`ａｂｃ` for `abc`, `－` for `-`). */
const fullWidth = (s: string) => [...s].map((ch) => String.fromCodePoint(ch.codePointAt(0)! + 0xfee0)).join('');

async function settings(values: Record<string, unknown>) {
  const r = await callJson('/v3/settings', { method: 'PATCH', auth: admin, json: { values } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

afterEach(() => setClockOffset(0));

describe('attacks on password logins', () => {
  it(
    'case and Unicode-normalisation variants of a login share one counter and one account (Admin, ' +
      'ADMIN, full-width, a trailing space)',
    async () => {
      const login = uniqueLogin('variant');
      const id = await createUser(login, PASSWORD);
      const capital = login[0]!.toUpperCase() + login.slice(1);
      const variants = [
        capital,
        login.toUpperCase(),
        fullWidth(login),
        fullWidth(login.toUpperCase()),
        `${login} `,
        ` ${login}`,
      ];
      // With the right password every variant is the one account.
      for (const v of variants) {
        const r = await callJson<{ id: string }>('/v4/users/me', { auth: basic(v, PASSWORD) });
        expect(r.status, `${JSON.stringify(v)}: ${JSON.stringify(r.body)}`).toBe(200);
        expect(r.body.id).toBe(id);
      }
      // AUTH_FAILED_COUNT wrong passwords, each under another variant, lock the login in every form.
      for (const v of [`${login} `, fullWidth(login), login.toUpperCase()]) {
        expect((await attempt(v, WRONG)).body.code, JSON.stringify(v)).toBe('INVALID_CREDENTIALS');
      }
      for (const v of [login, ...variants])
        expect((await attempt(v, PASSWORD)).body.code, JSON.stringify(v)).toBe('ACCOUNT_LOCKED');
      // No variant is a second account either.
      expect(
        (
          await call('/v4/users', {
            method: 'POST',
            auth: admin,
            json: { login: login.toUpperCase(), password: PASSWORD },
          })
        ).status,
      ).toBe(409);
      expect(
        (
          await call('/v4/users', {
            method: 'POST',
            auth: admin,
            json: { login: fullWidth(login), password: PASSWORD },
          })
        ).status,
      ).toBe(409);
    },
  );

  it('no lock oracle: right and wrong passwords, known and unknown logins get one answer while locked', async () => {
    const known = uniqueLogin();
    await createUser(known, PASSWORD);
    const unknown = uniqueLogin('ghost');
    for (const login of [known, unknown]) {
      for (let i = 0; i < 3; i++) expect((await attempt(login, WRONG)).body.code).toBe('INVALID_CREDENTIALS');
    }
    const answers = [
      await attempt(known, PASSWORD),
      await attempt(known, WRONG),
      await attempt(unknown, PASSWORD),
      await attempt(unknown, WRONG),
    ];
    const shape = (r: (typeof answers)[number]) => ({
      status: r.status,
      body: { ...r.body, requestId: 0 },
      retryAfter: Math.round(Number(r.res.headers.get('retry-after')) / 60),
      challenge: r.res.headers.get('www-authenticate'),
      type: r.res.headers.get('content-type'),
    });
    for (const r of answers) {
      expect(r.status).toBe(401);
      expect(r.body.code).toBe('ACCOUNT_LOCKED');
      expect(Number(r.res.headers.get('retry-after'))).toBeGreaterThan(14 * 60);
      expect(r.res.headers.get('www-authenticate')).toContain('Basic');
      expect(shape(r)).toEqual(shape(answers[0]!));
    }
  });

  it(
    'a session-limit refusal is not a failure: logins beyond the limit and the ended sessions count ' + 'nothing',
    async () => {
      // A login beyond the session limit is not refused: it ends the oldest session. Neither it nor the
      // ended session's cookie may spend the attempts of the login's lockout.
      const login = uniqueLogin('limit');
      await createUser(login, PASSWORD, { sessionLimit: 1 });
      const cookies: string[] = [];
      for (let i = 0; i < 2; i++) expect((await attempt(login, WRONG)).status).toBe(401);
      for (let i = 0; i < 5; i++) {
        const r = await call('/v3/login', { method: 'POST', json: { login, password: PASSWORD } });
        expect(r.status, `login ${i + 1} beyond the limit`).toBe(200);
        cookies.push(
          r.headers
            .getSetCookie()
            .map((c) => c.split(';')[0]!)
            .find((c) => c.startsWith('auth_session='))!,
        );
      }
      for (const cookie of cookies.slice(0, -1)) {
        for (let i = 0; i < 2; i++)
          expect((await call('/v4/users/me', { headers: { Cookie: cookie } })).status).toBe(401);
      }
      // Two more wrong passwords: had any of the above counted, the login would be locked now.
      for (let i = 0; i < 2; i++) expect((await attempt(login, WRONG)).body.code).toBe('INVALID_CREDENTIALS');
      expect((await attempt(login, PASSWORD)).status).toBe(200);
      expect((await call('/v4/users/me', { headers: { Cookie: cookies.at(-1)! } })).status).toBe(200);
    },
  );

  it('timing of unknown and known local logins (wrong password) within 10 %', async () => {
    // Enough attempts for the samples without a lock (reset to its default after). Like with like: one
    // unknown and one known login, each tried again and again (an attacker's first try of a login
    // costs a new lockout row whether or not the account exists).
    await settings({ AUTH_FAILED_COUNT: 100 });
    try {
      const known = uniqueLogin('timing');
      await createUser(known, PASSWORD);
      const result = await compareTimings({
        unknown: async () => void (await attempt(`${known}x`, WRONG)),
        known: async () => void (await attempt(known, WRONG)),
      });
      expect(result.ratio, JSON.stringify(result)).toBeLessThan(1.1);
    } finally {
      expect((await call('/v3/settings/AUTH_FAILED_COUNT', { method: 'DELETE', auth: admin })).status).toBe(200);
    }
  });
});
