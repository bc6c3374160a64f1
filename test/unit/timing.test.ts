/**
 * compareTimings (test/harness/timing.ts) counts what a majority of its measurements say, not the best
 * one: the timing attacks' tests (attacks-logins, attacks-ldap) pass on a loaded machine whose spike
 * spoils one measurement, and fail on a difference that shows in two, the same kind slower in both. The
 * clock is a fake one that each kind of request moves by the time given for the measurement at hand.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { compareTimings } from '../harness/timing.js';

const ROUNDS = 3;

/** Kinds `a` and `b` taking, in measurement i, `ms[i]` ms each; and how many measurements ran. */
function kinds(ms: [number, number][]) {
  let clock = 0;
  let calls = 0;
  vi.spyOn(performance, 'now').mockImplementation(() => clock);
  // Calls per measurement: (rounds + 2) rounds of both kinds; the third measurement has twice the rounds.
  const bounds = [2 * (ROUNDS + 2), 4 * (ROUNDS + 2), 4 * (ROUNDS + 2) + 2 * (2 * ROUNDS + 2)];
  const at = () => bounds.findIndex((b) => calls < b);
  const step = (k: 0 | 1) => async () => {
    clock += ms[at()]![k];
    calls++;
  };
  return { kinds: { a: step(0), b: step(1) }, measurements: () => bounds.filter((b) => calls >= b).length };
}

afterEach(() => vi.restoreAllMocks());

describe('compareTimings: a majority of measurements decides', () => {
  it('two measurements within the tolerance pass, without a third', async () => {
    const k = kinds([
      [10, 10.5],
      [10, 10.2],
    ]);
    const r = await compareTimings(k.kinds, { rounds: ROUNDS });
    expect(r.ratios).toEqual([1.05, 1.02]);
    expect(r.ratio).toBeCloseTo(1.05);
    expect(k.measurements()).toBe(2);
  });

  it('one spoilt measurement of three does not decide: within the tolerance', async () => {
    const r = await compareTimings(
      kinds([
        [10, 14],
        [10, 10.3],
        [10, 10.1],
      ]).kinds,
      { rounds: ROUNDS },
    );
    expect(r.ratios).toEqual([1.4, 1.03, 1.01]);
    expect(r.ratio).toBeLessThan(1.1);
  });

  it('a difference in two measurements of three fails, though one was within the tolerance', async () => {
    const r = await compareTimings(
      kinds([
        [10, 10.2],
        [10, 13],
        [10, 12.5],
      ]).kinds,
      { rounds: ROUNDS },
    );
    expect(r.ratios).toEqual([1.02, 1.3, 1.25]);
    expect(r.ratio).toBeCloseTo(1.25);
  });

  it('a difference in the first two fails, without a third', async () => {
    const k = kinds([
      [10, 12],
      [10, 13],
    ]);
    const r = await compareTimings(k.kinds, { rounds: ROUNDS });
    expect(r.ratio).toBeCloseTo(1.2);
    expect(k.measurements()).toBe(2);
  });

  it('the slower side changing from one measurement to the next is no difference', async () => {
    // A loaded machine: b slower, then a slower, then within. No kind is slower in a majority.
    const k = kinds([
      [10, 12],
      [13, 10],
      [10, 10.4],
    ]);
    const r = await compareTimings(k.kinds, { rounds: ROUNDS });
    expect(r.ratios).toEqual([1.2, 1.3, 1.04]);
    expect(r.ratio).toBeCloseTo(1.04);
    expect(k.measurements()).toBe(3);
  });

  it('the same slower side in two of three fails, whatever the other one says', async () => {
    const r = await compareTimings(
      kinds([
        [10, 12],
        [13, 10],
        [10, 12.5],
      ]).kinds,
      { rounds: ROUNDS },
    );
    expect(r.ratios).toEqual([1.2, 1.3, 1.25]);
    expect(r.ratio).toBeCloseTo(1.2);
    expect(r.medians.b).toBeGreaterThan(r.medians.a!);
  });
});
