/**
 * A reservation with a further condition (reserveAttempt's `also`, a returning browser's device budget):
 * built once per condition and database handle, it reserves in every budget only while the condition holds.
 */
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useEmbeddedDb } from '../../../test/harness/embedded-db.js';
import { parseEnvironment } from '../config/index.js';
import { loginAttempts } from '../../../schema/index.js';
import { attemptPlan, both, notReserved, reservationCondition, reserveAttempt, throttleKey } from './throttle.js';

const t = useEmbeddedDb('throttle');

let builds = 0;
const FLAG = reservationCondition(['flag'], (_d, p) => {
  builds++;
  return sql`${p.flag} = 1`;
});
const flag = (v: number) => ({ condition: FLAG, values: { flag: v } });
const config = parseEnvironment({});
const attemptsOf = async (key: string) =>
  (await t.db.select().from(loginAttempts).where(eq(loginAttempts.throttleKey, key))).length;

describe('reserveAttempt with a condition', () => {
  it('reserves in every budget while the condition holds, nothing when it does not; built once', async () => {
    const plan = attemptPlan(config, throttleKey('cond-a'), '10.9.0.1');
    expect((await reserveAttempt(t.db, plan, 1_000, flag(0))).rowsAffected).toBe(0);
    expect(await attemptsOf(plan.main.key)).toBe(0);
    const other = attemptPlan(config, throttleKey('cond-a'), '10.9.0.1');
    expect((await reserveAttempt(t.db, other, 1_001, flag(1))).rowsAffected).toBe(3); // the login, all, the address
    expect(await attemptsOf(plan.main.key)).toBe(1);
    expect(builds).toBe(1);
  });

  it('both: the two conditions with their own values; notReserved holds until the plan reserved', async () => {
    const byDevice = attemptPlan(config, throttleKey('cond-b'), '10.9.0.2', 'device-b');
    const untrusted = attemptPlan(config, throttleKey('cond-b'), '10.9.0.2');
    const [none, fallback] = await t.db.batch([
      reserveAttempt(t.db, untrusted, 2_000, both(flag(0), notReserved(byDevice))),
      reserveAttempt(t.db, untrusted, 2_000, both(flag(1), notReserved(byDevice))),
    ]);
    expect([none.rowsAffected, fallback.rowsAffected]).toEqual([0, 3]);
    const again = attemptPlan(config, throttleKey('cond-b'), '10.9.0.2');
    const [mine, after] = await t.db.batch([
      reserveAttempt(t.db, byDevice, 2_001),
      reserveAttempt(t.db, again, 2_001, both(flag(1), notReserved(byDevice))),
    ]);
    expect(mine.rowsAffected).toBeGreaterThan(0);
    expect(after.rowsAffected).toBe(0);
  });

  it("refuses a condition that names one of the reservation's own placeholders, or another condition's", () => {
    const clash = reservationCondition(['now'], (_d, p) => sql`${p.now} > 0`);
    const plan = attemptPlan(config, throttleKey('cond-c'), '10.9.0.3');
    expect(() => reserveAttempt(t.db, plan, 3_000, { condition: clash, values: { now: 1 } })).toThrow(/now/);
    const again = reservationCondition(['flag'], (_d, p) => sql`${p.flag} = 2`);
    expect(() => both(flag(1), { condition: again, values: { flag: 2 } })).toThrow(/flag/);
  });
});
