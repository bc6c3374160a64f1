import { describe, expect, it, vi } from 'vitest';
import { parseEnvironment } from '../config/index.js';
import { addressKey, createHashSlots, hashConcurrency } from './hash-slots.js';
import { nativeHashConcurrency } from '../../node/native-hasher.js';

const A = '192.0.2.1';

/** A piece of work that finishes when told to. */
function gate() {
  let open!: () => void;
  const done = new Promise<void>((r) => (open = r));
  return { open, work: () => done };
}

describe('hash slots', () => {
  it(
    'runs at most `concurrency` at once, queues up to `queue`, refuses beyond with a 503 (429 for an address ' +
      'with work in flight) and Retry-After',
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
      const first = gates.map((g, i) => slots.run(`192.0.2.${i + 10}`, tracked(g)));
      // Two run, one waits: a fourth (a first attempt of its address too) finds neither a slot nor
      // a waiting place; of an address with work in flight, it is that address's excess (429).
      const refused = { code: 'SERVICE_UNAVAILABLE', headers: { 'Retry-After': '1' } };
      await expect(slots.run('192.0.2.99', async () => 'never')).rejects.toMatchObject(refused);
      await expect(slots.run('192.0.2.10', async () => 'never')).rejects.toMatchObject({ status: 429 });
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
    await expect(slots.run('192.0.2.2', async () => 'x')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
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

  it('without handOver (edge), a waiter takes a freed slot at its own look; a latecomer queues behind it', async () => {
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
    // The slot is free until the waiter looks again, but a latecomer placed no better waits for it.
    const late = slots.run(A, async () => {
      started.push('late');
    });
    await Promise.all([waiter, late]);
    expect(started).toEqual(['first', 'waiter', 'late']);
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

describe('per client address', () => {
  const B = '198.51.100.7';
  const perAddress = { inFlight: 2, perMinute: 60, burst: 3 };

  it('the IPv4 /32 and the IPv6 /64 are the key; IPv4-mapped IPv6 is IPv4; no address is one key', () => {
    expect(addressKey('192.0.2.1')).toBe('192.0.2.1');
    expect(addressKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe(addressKey('2001:db8:1:2:bbbb::9'));
    expect(addressKey('2001:db8:1:2::1')).not.toBe(addressKey('2001:db8:1:3::1'));
    expect(addressKey(null)).toBe('unknown');
  });

  it('beyond its in-flight bound an address gets 429 at once; another address is not affected', async () => {
    const slots = createHashSlots({ concurrency: 4, queue: 10, perAddress });
    const g = gate();
    const held = [slots.run(A, g.work), slots.run(A, g.work)];
    await expect(slots.run(A, async () => 'never')).rejects.toMatchObject({
      code: 'PASSWORD_CHECKS_THROTTLED',
      status: 429,
      headers: { 'Retry-After': '1' },
      extensions: { reason: 'address-in-flight' },
    });
    // LDAP binds (admit) count toward the same bound.
    await expect(slots.admit(A, async () => 'never')).rejects.toMatchObject({ code: 'PASSWORD_CHECKS_THROTTLED' });
    expect(await slots.run(B, async () => 'ok')).toBe('ok');
    g.open();
    await Promise.all(held);
  });

  it('beyond its burst an address gets 429 with the Retry-After of its next token', async () => {
    let now = 0;
    const slots = createHashSlots({ concurrency: 4, queue: 10, perAddress, now: () => now });
    for (let i = 0; i < 3; i++) await slots.run(A, async () => {});
    await expect(slots.run(A, async () => {})).rejects.toMatchObject({
      code: 'PASSWORD_CHECKS_THROTTLED',
      headers: { 'Retry-After': '1' },
      extensions: { reason: 'address-rate' },
    });
    now = 1_000; // one token a second
    expect(await slots.run(A, async () => 'ok')).toBe('ok');
  });

  it("an address's excess waits behind every other address's first attempt", async () => {
    const slots = createHashSlots({ concurrency: 1, queue: 10, handOver: true });
    const started: string[] = [];
    const first = gate();
    const running = slots.run(A, async () => {
      started.push('a0');
      await first.work();
    });
    const track = (ip: string, name: string) => slots.run(ip, async () => void started.push(name));
    const waiting = [track(A, 'a1'), track(A, 'a2'), track(A, 'a3'), track(B, 'b1'), track('203.0.113.9', 'c1')];
    first.open();
    await Promise.all([running, ...waiting]);
    expect(started).toEqual(['a0', 'b1', 'c1', 'a1', 'a2', 'a3']);
  });

  it("a full queue: another address's first attempt takes the place of the most queued address's last", async () => {
    const slots = createHashSlots({ concurrency: 1, queue: 2, handOver: true });
    const first = gate();
    const running = slots.run(A, first.work);
    const a1 = slots.run(A, async () => 'a1');
    const a2 = slots.run(A, async () => 'a2');
    const b1 = slots.run(B, async () => 'b1');
    await expect(a2).rejects.toMatchObject({
      code: 'PASSWORD_CHECKS_THROTTLED',
      extensions: { reason: 'address-queue' },
    });
    // A further attempt of A is placed no better than anyone waiting: refused with 429 too.
    await expect(slots.run(A, async () => 'never')).rejects.toMatchObject({ code: 'PASSWORD_CHECKS_THROTTLED' });
    first.open();
    expect(await Promise.all([running, a1, b1])).toEqual([undefined, 'a1', 'b1']);
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
