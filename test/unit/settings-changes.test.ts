/**
 * The settings' changes (worker/src/settings/changes.ts), the domain code under PATCH and DELETE
 * /v3/settings (test/http/settings.test.ts holds the HTTP behaviour on both hosts): a change reads the
 * saved settings once, and the configuration it returns is what the store then holds.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settings, users } from '../../schema/index.js';
import { ProblemError } from '../../worker/src/http/problem.js';
import { changeSettings, resetSetting } from '../../worker/src/settings/changes.js';
import { loadSavedSettings, type Db } from '../../worker/src/store/index.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { ADMIN } from '../harness/client.js';
import { testScope } from '../harness/scope.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** `db`, counting the reads of the settings table (each read is a `select` of it). */
function countingSettingsReads(db: Db): { db: Db; reads: () => number } {
  let reads = 0;
  const counted = new Proxy(db, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (key !== 'select' || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const query = value.apply(target, args);
        return new Proxy(query, {
          get(q, k, r) {
            const from = Reflect.get(q, k, r);
            if (k !== 'from' || typeof from !== 'function') return from;
            return (table: unknown, ...rest: unknown[]) => {
              if (table === settings) reads++;
              return from.apply(q, [table, ...rest]);
            };
          },
        });
      };
    },
  });
  return { db: counted, reads: () => reads };
}

describe('settings changes', () => {
  it('a change reads the saved settings once and returns what the store then holds', async () => {
    const [admin] = await t.db.select().from(users).where(eq(users.login, ADMIN.login));
    const { db, reads } = countingSettingsReads(t.db);
    const scope = testScope(db, t.service.config.env);
    const after = await changeSettings(scope, t.service.config, admin!, {
      AUTH_FAILED_COUNT: 7,
      USER_PASSWORD_MIN_LENGTH: '10',
    });
    expect(reads()).toBe(1);
    expect([after.get('AUTH_FAILED_COUNT'), after.source('AUTH_FAILED_COUNT')]).toEqual([7, 'ui']);
    expect(after.get('USER_PASSWORD_MIN_LENGTH')).toBe(10);
    expect(await loadSavedSettings(t.db)).toMatchObject({ AUTH_FAILED_COUNT: '7', USER_PASSWORD_MIN_LENGTH: '10' });
    // This instance serves the change at once.
    expect((await t.service.config.current()).get('AUTH_FAILED_COUNT')).toBe(7);

    const reset = await resetSetting(scope, t.service.config, admin!, 'AUTH_FAILED_COUNT');
    expect(reads()).toBe(2);
    expect(reset.source('AUTH_FAILED_COUNT')).not.toBe('ui');
    expect(await loadSavedSettings(t.db)).not.toHaveProperty('AUTH_FAILED_COUNT');
    expect(reset.get('USER_PASSWORD_MIN_LENGTH')).toBe(10);
  });

  it('a refused change names each bad variable and writes nothing', async () => {
    const [admin] = await t.db.select().from(users).where(eq(users.login, ADMIN.login));
    const before = await loadSavedSettings(t.db);
    const refused = await changeSettings(testScope(t.db, t.service.config.env), t.service.config, admin!, {
      AUTH_FAILED_COUNT: 'many',
      NOT_A_SETTING: 1,
    }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ProblemError);
    const paths = ((refused as ProblemError).extensions.errors as { path: string }[]).map((e) => e.path);
    expect(paths.sort()).toEqual(['values.AUTH_FAILED_COUNT', 'values.NOT_A_SETTING']);
    expect(await loadSavedSettings(t.db)).toEqual(before);
  });
});
