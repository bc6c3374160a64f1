import { describe, expect, it } from 'vitest';
import { parseEnvironment } from '../config/index.js';
import { createHashSlots, hashConcurrency } from './hash-slots.js';
import { nativeHashConcurrency } from './password-hash/node-native.js';

/** A piece of work that finishes when told to. */
function gate() {
  let open!: () => void;
  const done = new Promise<void>((r) => (open = r));
  return { open, work: () => done };
}

describe('hash slots', () => {
  it(
    'runs at most `concurrency` at once, queues up to `queue`, refuses beyond with a 503 and ' + 'Retry-After',
    async () => {
      const slots = createHashSlots({ concurrency: 2, queue: 1 });
      let running = 0;
      let peak = 0;
      const gates = [gate(), gate(), gate()];
      const tracked = (g: ReturnType<typeof gate>) => async () => {
        running += 1;
        peak = Math.max(peak, running);
        await g.work();
        running -= 1;
      };
      const first = gates.map((g) => slots.run(tracked(g)));
      // Two run, one waits: a fourth finds neither a slot nor a waiting place.
      const refused = { code: 'SERVICE_UNAVAILABLE', headers: { 'Retry-After': '1' } };
      await expect(slots.run(async () => 'never')).rejects.toMatchObject(refused);
      gates[0]!.open();
      gates[1]!.open();
      gates[2]!.open();
      await Promise.all(first);
      expect(peak).toBe(2);
      // Free again.
      expect(await slots.run(async () => 'ok')).toBe('ok');
    },
  );

  it('a failing piece of work frees its slot', async () => {
    const slots = createHashSlots({ concurrency: 1, queue: 0 });
    await expect(slots.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await slots.run(async () => 'ok')).toBe('ok');
  });

  it('a slot held past the lease (its request was cancelled and never released it) is taken back', async () => {
    let now = 0;
    const slots = createHashSlots({ concurrency: 1, queue: 0, now: () => now });
    void slots.run(() => new Promise<never>(() => {}));
    await expect(slots.run(async () => 'x')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    now = 31_000;
    expect(await slots.run(async () => 'ok')).toBe('ok');
  });
});

describe('the bound in force', () => {
  it('unset: the host default; set: the variable, even when it equals the registry default', () => {
    expect(hashConcurrency(parseEnvironment({}), 1)).toBe(1);
    expect(hashConcurrency(parseEnvironment({}), undefined)).toBe(2);
    expect(hashConcurrency(parseEnvironment({ AUTH_PASSWORD_HASH_CONCURRENCY: '2' }), 1)).toBe(2);
    expect(hashConcurrency(parseEnvironment({ AUTH_PASSWORD_HASH_CONCURRENCY: '6' }), 1)).toBe(6);
  });

  it("the Node host's default: one per core, at most the libuv threads but two, at least one", () => {
    expect(nativeHashConcurrency(1, 4)).toBe(1);
    expect(nativeHashConcurrency(2, 4)).toBe(2);
    expect(nativeHashConcurrency(16, 4)).toBe(2);
    expect(nativeHashConcurrency(16, 16)).toBe(14);
    expect(nativeHashConcurrency(8, 2)).toBe(1);
  });
});
