/** Stored login keys follow the key function (worker/src/users/rekey-logins.ts), on a real libSQL database. */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginReservations, users } from '../../schema/index.js';
import { rekeyLogins } from '../../worker/src/users/rekey-logins.js';
import { createTestApp, type TestApp } from '../harness/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** An account as the previous key function (NFC, lower case) stored it. */
const legacy = (login: string, deletedAt: number | null = null) => ({
  id: crypto.randomUUID(),
  login,
  loginKey: login.normalize('NFC').toLowerCase(),
  createdAt: Date.now(),
  updatedAt: Date.now(),
  deletedAt,
});

describe('rekeyLogins', () => {
  it('recomputes non-ASCII keys and reservations; leaves a key another live account holds, reported', async () => {
    await t.db.insert(users).values(['ＷＩＤＥ', 'Straße', 'Ｍaße', 'masse', 'plain'].map((login) => legacy(login)));
    const later = Date.now() + 5000;
    await t.db.insert(loginReservations).values([
      { loginKey: 'ｇｏｎｅ', until: later },
      { loginKey: 'gone', until: later - 4000 },
    ]);

    expect(await rekeyLogins(t.db)).toEqual(['Ｍaße']);
    const key = async (login: string) =>
      (await t.db.select({ k: users.loginKey }).from(users).where(eq(users.login, login)))[0]!.k;
    expect(await key('ＷＩＤＥ')).toBe('wide');
    expect(await key('Straße')).toBe('strasse');
    expect(await key('masse')).toBe('masse');
    expect(await key('Ｍaße')).toBe('ｍaße');
    expect(await key('plain')).toBe('plain');
    // The two reservations are one login now: the later end wins.
    const gone = await t.db.select().from(loginReservations).where(eq(loginReservations.loginKey, 'gone'));
    // Its skeleton is filled again after the rekey (the backfill of users/login-skeletons.ts, after the start).
    expect(gone).toEqual([{ loginKey: 'gone', until: later, skeleton: null }]);
    expect((await t.db.select().from(loginReservations)).map((r) => r.loginKey).sort()).toEqual(['gone']);

    // A second run changes nothing (and reports the same conflict).
    expect(await rekeyLogins(t.db)).toEqual(['Ｍaße']);
  });
});
