import { describe, expect, it } from 'vitest';
import { createHashSlots } from './hash-slots.js';

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
