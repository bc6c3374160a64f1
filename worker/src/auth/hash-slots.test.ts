import { describe, expect, it, vi } from 'vitest';
import { parseEnvironment } from '../config/index.js';
import { createHashSlots, hashConcurrency } from './hash-slots.js';
import { nativeHashConcurrency } from './password-hash/node-native.js';

const A = '192.0.2.1';

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
      const first = gates.map((g) => slots.run(A, tracked(g)));
      // Two run, one waits: a fourth finds neither a slot nor a waiting place.
      const refused = { code: 'SERVICE_UNAVAILABLE', headers: { 'Retry-After': '1' } };
      await expect(slots.run(A, async () => 'never')).rejects.toMatchObject(refused);
      gates[0]!.open();
      gates[1]!.open();
      gates[2]!.open();
      await Promise.all(first);
      expect(peak).toBe(2);
      // Free again.
      expect(await slots.run(A, async () => 'ok')).toBe('ok');
    },
  );

  it('a failing piece of work frees its slot', async () => {
    const slots = createHashSlots({ concurrency: 1, queue: 0 });
    await expect(slots.run(A, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await slots.run(A, async () => 'ok')).toBe('ok');
  });

  it('a slot held past the lease (its request was cancelled and never released it) is taken back', async () => {
    let now = 0;
    const slots = createHashSlots({ concurrency: 1, queue: 0, now: () => now });
    void slots.run(A, () => new Promise<never>(() => {}));
    await expect(slots.run(A, async () => 'x')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    now = 31_000;
    expect(await slots.run(A, async () => 'ok')).toBe('ok');
  });
});

describe('waiters', () => {
  it('with handOver (Node), are served first come, first served, before requests that arrive later', async () => {
    const slots = createHashSlots({ concurrency: 1, queue: 10, handOver: true });
    const started: string[] = [];
    const first = gate();
    const running = slots.run(A, async () => {
      started.push('first');
      await first.work();
    });
    const waiters = ['a', 'b', 'c'].map((name) =>
      slots.run(A, async () => {
        started.push(name);
      }),
    );
    // The slot frees while a latecomer arrives: the oldest waiter gets it, the latecomer queues last.
    first.open();
    await running;
    const late = slots.run(A, async () => {
      started.push('late');
    });
    await Promise.all([...waiters, late]);
    expect(started).toEqual(['first', 'a', 'b', 'c', 'late']);
  });

  it('without handOver (edge), a waiter takes a freed slot at its own look; none is set aside for it', async () => {
    const slots = createHashSlots({ concurrency: 1, queue: 10 });
    const started: string[] = [];
    const first = gate();
    const running = slots.run(A, async () => {
      started.push('first');
      await first.work();
    });
    const waiter = slots.run(A, async () => {
      started.push('waiter');
    });
    first.open();
    await running;
    // The slot is free until the waiter looks again: a request arriving now takes it.
    await slots.run(A, async () => {
      started.push('late');
    });
    await waiter;
    expect(started).toEqual(['first', 'late', 'waiter']);
  });

  it('with handOver, a waiter starts as soon as the slot is free, without waiting for its next look', async () => {
    // Timers stand still: the waiter's own look (every 5 ms) never comes, only the hand-over wakes it.
    vi.useFakeTimers();
    try {
      const slots = createHashSlots({ concurrency: 1, queue: 1, handOver: true });
      const first = gate();
      const running = slots.run(A, first.work);
      let started = false;
      const waiter = slots.run(A, async () => {
        started = true;
      });
      await Promise.resolve();
      expect(started).toBe(false);
      first.open();
      await Promise.all([running, waiter]);
      expect(started).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a waiter that waited past the lease gives up with a 503', async () => {
    let now = 0;
    const slots = createHashSlots({ concurrency: 1, queue: 1, now: () => now });
    void slots.run(A, () => new Promise<never>(() => {}));
    const waiting = slots.run(A, async () => 'x');
    now = 31_000;
    await expect(waiting).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
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
