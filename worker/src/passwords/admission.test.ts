import { describe, expect, it, vi } from 'vitest';
import { parseEnvironment } from '../config/index.js';
import { addressKey, createHashSlots, hashConcurrency } from './admission.js';
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
    'runs at most `concurrency` at once, queues up to `queue` (clean first attempts up to twice that), ' +
      'refuses beyond with a 429 and Retry-After, never a 503',
    async () => {
      const slots = createHashSlots({ concurrency: 2, queue: 1 });
      let running = 0;
      let peak = 0;
      const gates = [gate(), gate(), gate(), gate()];
      const tracked = (g: ReturnType<typeof gate>) => async () => {
        running += 1;
        peak = Math.max(peak, running);
        await g.work();
        running -= 1;
      };
      const first = gates.slice(0, 3).map((g, i) => slots.run(`192.0.2.${i + 10}`, tracked(g)));
      // Two run, one waits; a fourth address's first attempt waits in the overflow (every waiter is
      // a clean address's first attempt); a fifth finds no place: 429 `capacity`, never 503.
      const overflow = slots.run('192.0.2.98', tracked(gates[3]!));
      const refused = {
        code: 'PASSWORD_CHECKS_THROTTLED',
        status: 429,
        headers: { 'Retry-After': '1' },
        extensions: { reason: 'capacity' },
      };
      await expect(slots.run('192.0.2.99', async () => 'never')).rejects.toMatchObject(refused);
      // Of an address with work in flight, it is that address's excess.
      await expect(slots.run('192.0.2.10', async () => 'never')).rejects.toMatchObject({
        status: 429,
        extensions: { reason: 'address-queue' },
      });
      for (const g of gates) g.open();
      await Promise.all([...first, overflow]);
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
    await expect(slots.run('192.0.2.2', async () => 'x')).rejects.toMatchObject({
      code: 'PASSWORD_CHECKS_THROTTLED',
      extensions: { reason: 'capacity' },
    });
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

  it('a waiter that waited past the lease gives up with a 429', async () => {
    let now = 0;
    const slots = createHashSlots({ concurrency: 1, queue: 1, now: () => now });
    void slots.run(A, () => new Promise<never>(() => {}));
    const waiting = slots.run(A, async () => 'x');
    now = 31_000;
    await expect(waiting).rejects.toMatchObject({ code: 'PASSWORD_CHECKS_THROTTLED', status: 429 });
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

describe('lanes (docs/security-admission.md)', () => {
  const B = '198.51.100.7';
  const perAddress = { inFlight: 2, perMinute: 60, burst: 3 };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it(
    "the priority lane: a device cookie's login runs ahead of waiters, outside its flooded address's " + 'bound',
    async () => {
      const slots = createHashSlots({ concurrency: 1, queue: 1, perAddress, handOver: true });
      const started: string[] = [];
      const first = gate();
      const running = slots.run(A, async () => {
        started.push('a0');
        await first.work();
      });
      const a1 = slots.run(A, async () => void started.push('a1'));
      // A's in-flight bound is taken, and the queue is full: anonymous attempts of A are refused.
      await expect(slots.run(A, async () => 'never')).rejects.toMatchObject({ status: 429 });
      const owner = slots.run(A, async () => void started.push('owner'), { trusted: 'user-1' });
      const owner2 = slots.run(A, async () => void started.push('owner2'), { trusted: 'user-1' });
      // Its own budget: two at once per account; beyond, admitted as anonymous (A's bound: 429).
      await expect(slots.run(A, async () => 'never', { trusted: 'user-1' })).rejects.toMatchObject({
        status: 429,
        extensions: { reason: 'address-in-flight' },
      });
      first.open();
      await Promise.all([running, a1, owner, owner2]);
      expect(started).toEqual(['a0', 'owner', 'owner2', 'a1']);
    },
  );

  it('work starts at once only for an idle, clean address with a token, a free slot and nobody waiting', async () => {
    let now = 0;
    const slots = createHashSlots({
      concurrency: 1,
      queue: 2,
      perAddress: { inFlight: 2, perMinute: 60, burst: 1 },
      handOver: true,
      now: () => now,
    });
    expect(slots.startsAtOnce(A)).toBe(true);
    const held = gate();
    const running = slots.run(A, held.work);
    // A has work running (and the one slot is taken): not at once, for A nor for B.
    expect(slots.startsAtOnce(A)).toBe(false);
    expect(slots.startsAtOnce(B)).toBe(false);
    held.open();
    await running;
    // A spent its one token: not until the bucket holds one again; B is idle.
    expect(slots.startsAtOnce(A)).toBe(false);
    expect(slots.startsAtOnce(B)).toBe(true);
    now = 1_000;
    expect(slots.startsAtOnce(A)).toBe(true);
    // A recent failure makes A suspect.
    slots.noteFailure(A);
    expect(slots.startsAtOnce(A)).toBe(false);
    // Somebody waiting: nobody starts at once.
    const first = gate();
    const busy = slots.run('203.0.113.9', first.work);
    const queued = slots.run('203.0.113.10', async () => {});
    now = 2_000;
    expect(slots.startsAtOnce(B)).toBe(false);
    first.open();
    await Promise.all([busy, queued]);
    expect(slots.startsAtOnce(B)).toBe(true);
  });

  it('an address with a recent failure waits behind clean addresses and is shed first from a full queue', async () => {
    const slots = createHashSlots({ concurrency: 1, queue: 2, perAddress, handOver: true });
    slots.noteFailure(A);
    const started: string[] = [];
    const first = gate();
    const running = slots.run('203.0.113.9', first.work);
    const a1 = slots.run(A, async () => void started.push('a1'));
    const c1 = slots.run('203.0.113.10', async () => void started.push('c1'));
    // The queue is full (a1, c1): a clean newcomer sheds the suspect's waiter, with its own Retry-After.
    const b1 = slots.run(B, async () => void started.push('b1'));
    await expect(a1).rejects.toMatchObject({
      code: 'PASSWORD_CHECKS_THROTTLED',
      headers: { 'Retry-After': '1' },
      extensions: { reason: 'address-queue' },
    });
    first.open();
    await Promise.all([running, c1, b1]);
    expect(started).toEqual(['c1', 'b1']);
  });

  it("while others wait, suspect addresses start at most their share; clean ones don't wait for it", async () => {
    let now = 0;
    const slots = createHashSlots({ concurrency: 1, queue: 4, handOver: true, now: () => now });
    slots.noteFailure(A);
    await slots.run(A, async () => {}); // the share's one token
    const held = gate();
    const running = slots.run(B, held.work);
    const started: string[] = [];
    const waiting = [
      slots.run(A, async () => void started.push('a1')),
      slots.run(A, async () => void started.push('a2')),
    ];
    held.open();
    await running;
    await sleep(30);
    expect(started).toEqual([]);
    // The slot is free: a clean address runs at once.
    expect(await slots.run('203.0.113.9', async () => 'ok')).toBe('ok');
    now = 1_000;
    await Promise.all(waiting);
    expect(started).toEqual(['a1', 'a2']);
  });

  it('with handOver, a suspect held to its share starts when the share has a token, not at its look', async () => {
    vi.useFakeTimers({ now: 0 });
    try {
      const slots = createHashSlots({ concurrency: 1, queue: 4, handOver: true, now: () => Date.now() });
      slots.noteFailure(A);
      await slots.run(A, async () => {}); // the share's one token
      const held = gate();
      const running = slots.run(B, held.work);
      const started: number[] = [];
      const waiting = [1, 2].map(() => slots.run(A, async () => void started.push(Date.now())));
      held.open();
      await running;
      expect(started).toEqual([]);
      // The share refills at half a slot's measured rate: a token within a few work durations, long
      // before a waiter's own look (a second on Node).
      await vi.advanceTimersByTimeAsync(300);
      expect(started).toHaveLength(2);
      expect(started[0]).toBeGreaterThan(0);
      await Promise.all(waiting);
    } finally {
      vi.useRealTimers();
    }
  });

  it('an address suspect only for its concurrent attempts waits behind clean ones, not held to the share', async () => {
    const now = 0;
    const slots = createHashSlots({ concurrency: 1, queue: 8, handOver: true, now: () => now });
    const held = gate();
    const running = slots.run(A, held.work);
    // A's next attempts arrive while its first runs: suspect (concurrent), but no failure.
    const started: string[] = [];
    const waiting = [1, 2, 3].map((i) => slots.run(A, async () => void started.push(`a${i}`)));
    const clean = slots.run(B, async () => void started.push('b'));
    held.open();
    await running;
    // The clock stands still: under the share, only its one token would start; all four run.
    await Promise.all([...waiting, clean]);
    expect(started).toEqual(['b', 'a1', 'a2', 'a3']);
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

describe('under a flood from many addresses (docs/security-admission.md, "Order")', () => {
  /** The fake hash's fixed duration. */
  const HASH_MS = 40;

  /**
   * 50 attacker addresses, each sending a wrong password every 222 ms (together 225/s, about 10 times
   * the capacity of one slot of HASH_MS), each within the production per-address bound; clean
   * addresses arrive one at a time, each once. Returns each clean arrival's wait for its slot, in
   * hash durations.
   */
  async function cleanWaits(handOver: boolean): Promise<number[]> {
    vi.useFakeTimers({ now: 0 });
    try {
      const slots = createHashSlots({
        concurrency: 1,
        queue: 32,
        perAddress: { inFlight: 4, perMinute: 60, burst: 20 },
        handOver,
        now: () => Date.now(),
      });
      const hash = () => new Promise<void>((r) => setTimeout(r, HASH_MS));
      const attackers = Array.from({ length: 50 }, (_, i) => `10.66.0.${i + 1}`);
      const settled: Promise<unknown>[] = [];
      let sent = 0;
      const attack = setInterval(() => {
        const ip = attackers[sent++ % attackers.length]!;
        // As password-login.ts: the failure is noted once the check is done (or refused by a lock).
        settled.push(
          slots.run(ip, hash).then(
            () => slots.noteFailure(ip),
            () => {},
          ),
        );
      }, 222 / attackers.length);
      const waits: number[] = [];
      for (let i = 0; i < 15; i++) {
        await vi.advanceTimersByTimeAsync(i === 0 ? 50 : 200);
        const arrived = Date.now();
        settled.push(
          slots.run(`198.51.100.${i + 1}`, async () => {
            waits.push((Date.now() - arrived) / HASH_MS);
            await hash();
          }),
        );
      }
      await vi.advanceTimersByTimeAsync(500);
      clearInterval(attack);
      await vi.advanceTimersByTimeAsync(60_000);
      await Promise.all(settled);
      return waits;
    } finally {
      vi.useRealTimers();
    }
  }

  it.each([
    ['with handOver (Node)', true],
    ['polling (edge)', false],
  ])(
    "%s: a clean address's attempt waits at most about one hash behind 50 flooding addresses, " +
      'also in the first second, before their first failures are known',
    async (_name, handOver) => {
      const waits = await cleanWaits(handOver);
      expect(waits).toHaveLength(15);
      // The first two arrive 50 and 250 ms into the flood, while attacker addresses that have sent
      // one attempt and not yet a second are strangers like them, served in turn with them (a few hashes).
      expect(Math.max(...waits.slice(0, 2))).toBeLessThanOrEqual(8);
      // Every later one (each attacker address has sent its second attempt): the running hash to
      // finish and at most about one more (the edge's polling), never the attackers' queue (before
      // the lanes were decided afresh: up to 50 hashes, one per attacker address).
      expect(Math.max(...waits.slice(2))).toBeLessThanOrEqual(2.5);
    },
    30_000,
  );
});
