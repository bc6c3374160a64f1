/**
 * Admission of password work (README, "Password checks under load"; architecture.md §4): every
 * password check or hash of a request is admitted per client address before anything is hashed,
 * read or written, then runs in one of a bounded number of hashing slots.
 *
 * Per address (IPv4 /32, IPv6 /64: addressKey), at most AUTH_PASSWORD_ADDRESS_IN_FLIGHT pieces of
 * work run or wait at once, and a token bucket (AUTH_PASSWORD_ADDRESS_RATE per minute, bursts of
 * AUTH_PASSWORD_ADDRESS_BURST) bounds their rate; beyond either, 429 PASSWORD_CHECKS_THROTTLED
 * with Retry-After at once. LDAP binds (`admit`) take the same admission but no slot: the bridge
 * checks the password.
 *
 * Slots (argon2id, 19 MiB and tens of milliseconds each): at most AUTH_PASSWORD_HASH_CONCURRENCY
 * run at once in a process (edge: an isolate), at most AUTH_PASSWORD_HASH_QUEUE wait. Waiters are
 * served fairly across addresses, in rounds: an address's first waiting piece of work is in the
 * current round, its next ones each one round later, so one address's excess waits behind every
 * other address's first attempt (start-time fair queueing). A full queue makes room for a better
 * placed newcomer by refusing its worst placed waiter (the most queued address's last one) with a
 * 429; a newcomer placed no better is refused: 429 when its address already has work in flight,
 * else (every waiter is some address's first attempt: the service really is at capacity) 503.
 *
 * On the Node host (`handOver`) a finishing check gives its slot to the best placed waiter and
 * wakes it at once. On the edge, waiting is polling on the waiter's own timer, never a promise
 * another request resolves: Workers cancel a request that waits on another request's work, and a
 * slot set aside for a cancelled waiter would be lost; there the best placed waiter takes a free
 * slot at its own look, and a waiter that has not looked for STALE_MS is dropped (its request was
 * cancelled). A slot or a place in the queue held longer than LEASE_MS is taken back (cancelled
 * without running its `finally`), so a lost request never shrinks the bound.
 */
import type { ConfigSnapshot } from '../config/index.js';
import { parseIp } from '../config/ip-ranges.js';
import { ProblemError } from '../http/problem.js';
import { admissionsRefused } from '../metrics/process.js';

/** How long a slot or a waiting place may be held before it is considered lost (and a waiter gives up). */
const LEASE_MS = 30_000;
/** Edge: a waiter that has not looked for this long was cancelled with its request. */
const STALE_MS = 2_000;
/** How often a waiter looks for a free slot. */
const POLL_MS = 5;
/** Retry-After of the 503 and of the in-flight 429, in seconds. */
const RETRY_AFTER_S = 1;
/** Idle token buckets are swept at most this often, once there are more than SWEEP_ABOVE of them. */
const SWEEP_EVERY_MS = 1_000;
const SWEEP_ABOVE = 1_000;

/** The per-address bound (README, "Password checks under load"). */
export interface AddressBound {
  /** Pieces of work one address may have running or waiting at once. */
  inFlight: number;
  /** Admissions per minute, refilled continuously. */
  perMinute: number;
  /** Admissions an idle address may make at once (the bucket's size). */
  burst: number;
}

/** The bound: slots running at once, places waiting, the per-address bound; `now` for tests. */
export interface HashSlotsOptions {
  concurrency: number;
  queue: number;
  /** Absent: no per-address bound (tools and unit tests). */
  perAddress?: AddressBound;
  now?: () => number;
  /**
   * A finishing piece of work wakes the waiter it gives its slot to (Node). Without it (the edge:
   * Workers cancel a request that waits on another request's promise) the waiter finds the slot
   * at its next look, within POLL_MS.
   */
  handOver?: boolean;
}

/** A process-wide (edge: isolate-wide) bound on password work, admitted per client address. */
export interface HashSlots {
  /**
   * Runs `work` holding one slot, admitted for the client at `ip` (null: the host cannot tell; all
   * such clients share one bound). Throws the 429 or 503 problem when refused: nothing ran.
   */
  run<T>(ip: string | null, work: () => Promise<T>): Promise<T>;
  /** Runs `work` admitted for `ip` without a slot (an LDAP bind: the bridge checks the password). */
  admit<T>(ip: string | null, work: () => Promise<T>): Promise<T>;
}

/**
 * The bound in force: AUTH_PASSWORD_HASH_CONCURRENCY when set (environment or settings), else the
 * host's own default (the Node host's cores, worker/node/native-hasher.ts), else the registry's default.
 */
export function hashConcurrency(config: ConfigSnapshot, hostDefault: number | undefined): number {
  return config.source('PASSWORD_HASH_CONCURRENCY') === 'default' && hostDefault
    ? hostDefault
    : config.get('PASSWORD_HASH_CONCURRENCY');
}

/** The per-address bound of the configuration. */
export function addressBound(config: ConfigSnapshot): AddressBound {
  return {
    inFlight: config.get('PASSWORD_ADDRESS_IN_FLIGHT'),
    perMinute: config.get('PASSWORD_ADDRESS_RATE'),
    burst: config.get('PASSWORD_ADDRESS_BURST'),
  };
}

/**
 * The key an address is admitted under: an IPv4 address itself (/32), an IPv6 address's /64 (one
 * subscriber usually holds a whole /64), "unknown" when the host cannot tell.
 */
export function addressKey(ip: string | null): string {
  const bytes = ip === null ? null : parseIp(ip);
  if (!bytes) return 'unknown';
  if (bytes.length === 4) return bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 8; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return `${groups.join(':')}::/64`;
}

/** The 503 of a queue full of distinct addresses' first attempts. It is not a login failure: nothing was checked. */
export function hashingBusy(): ProblemError {
  admissionsRefused.inc(['busy']);
  return new ProblemError('SERVICE_UNAVAILABLE', {
    detail: 'too many password checks at once; try again shortly',
    headers: { 'Retry-After': String(RETRY_AFTER_S) },
    extensions: { reason: 'password-hashing-busy' },
  });
}

type Refusal = 'rate' | 'in_flight' | 'queue';
const DETAILS: Record<Refusal, string> = {
  rate: 'too many password checks from this address; retry after Retry-After seconds',
  in_flight: 'too many password checks from this address at once; retry after Retry-After seconds',
  queue: 'too many password checks from this address are waiting; retry after Retry-After seconds',
};

/** The 429 of an address beyond its bound. Nothing was checked or counted. */
export function addressThrottled(reason: Refusal, retryAfterS: number = RETRY_AFTER_S): ProblemError {
  admissionsRefused.inc([reason]);
  return new ProblemError('PASSWORD_CHECKS_THROTTLED', {
    detail: DETAILS[reason],
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterS))) },
    extensions: { reason: `address-${reason.replace('_', '-')}` },
  });
}

interface Waiter {
  id: number;
  client: string;
  /** Its round: the current one for an address's first waiting work, one more for each next. */
  round: number;
  since: number;
  /** Its last look (edge: a waiter that stops looking was cancelled). */
  seen: number;
  wake?: () => void;
  /** Set when a better placed newcomer took its place in a full queue. */
  refused?: ProblemError;
}

/** Whether `a` is served before `b`: the lower round, then the older. */
const before = (a: Waiter, b: Waiter) => a.round < b.round || (a.round === b.round && a.id < b.id);

/** Creates the bound of one process (or isolate). */
export function createHashSlots(o: HashSlotsOptions): HashSlots {
  const now = o.now ?? Date.now;
  const running = new Map<number, { since: number; client: string }>();
  const queue: Waiter[] = [];
  /** Per address: its work running or waiting (or, through `admit`, at the bridge), and its last round. */
  const clients = new Map<string, { inFlight: number; lastRound: number }>();
  const buckets = new Map<string, { tokens: number; at: number }>();
  let round = 0;
  let nextId = 0;
  let swept = 0;

  const release = (client: string) => {
    const c = clients.get(client);
    if (c && --c.inFlight <= 0) clients.delete(client);
  };
  const dequeue = (w: Waiter) => {
    const i = queue.indexOf(w);
    if (i >= 0) queue.splice(i, 1);
    return i >= 0;
  };
  const forgetLost = (t: number) => {
    for (const [id, r] of running)
      if (t - r.since > LEASE_MS) {
        running.delete(id);
        release(r.client);
      }
    for (const w of [...queue])
      if (t - w.since > LEASE_MS || (!o.handOver && t - w.seen > STALE_MS)) {
        dequeue(w);
        release(w.client);
      }
  };
  const best = () => queue.reduce<Waiter | undefined>((b, w) => (b && before(b, w) ? b : w), undefined);
  const start = (w: { id: number; client: string; round: number }) => {
    running.set(w.id, { since: now(), client: w.client });
    round = Math.max(round, w.round);
  };
  /** handOver: gives free slots to the best placed waiters, and wakes them. */
  const handOver = () => {
    while (o.handOver && running.size < o.concurrency && queue.length > 0) {
      const next = best()!;
      dequeue(next);
      start(next);
      next.wake?.();
    }
  };

  /** Admits one piece of work of `client` (throws the 429 when beyond its bound); returns its round. */
  const admitOne = (client: string, t: number): number => {
    const c = clients.get(client);
    const bound = o.perAddress;
    if (bound) {
      if ((c?.inFlight ?? 0) >= bound.inFlight) throw addressThrottled('in_flight');
      let b = buckets.get(client);
      if (b) b.tokens = Math.min(bound.burst, b.tokens + ((t - b.at) * bound.perMinute) / 60_000);
      else buckets.set(client, (b = { tokens: bound.burst, at: t }));
      b.at = t;
      if (b.tokens < 1) throw addressThrottled('rate', ((1 - b.tokens) * 60) / bound.perMinute);
      b.tokens -= 1;
      sweep(t, bound);
    }
    const placed = c ? Math.max(round, c.lastRound + 1) : round;
    if (c) {
      c.inFlight += 1;
      c.lastRound = placed;
    } else clients.set(client, { inFlight: 1, lastRound: placed });
    return placed;
  };
  /** Forgets the buckets that have filled up again (the same as a new one). */
  const sweep = (t: number, bound: AddressBound) => {
    if (buckets.size <= SWEEP_ABOVE || t - swept < SWEEP_EVERY_MS) return;
    swept = t;
    for (const [k, b] of buckets)
      if (b.tokens + ((t - b.at) * bound.perMinute) / 60_000 >= bound.burst) buckets.delete(k);
  };

  /** Waits until `w` holds a slot; throws when it was refused or waited past the lease. */
  const wait = async (w: Waiter) => {
    while (!running.has(w.id)) {
      if (w.refused) throw w.refused;
      if (!queue.includes(w)) throw hashingBusy(); // waited past the lease
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        w.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      w.wake = undefined;
      w.seen = now();
      forgetLost(w.seen);
      if (o.handOver) handOver();
      else if (running.size < o.concurrency && best() === w) {
        // Without handOver (edge) a slot is only ever taken by a live request, at its own look:
        // a slot set aside for a waiter whose request Workers cancelled would stay lost.
        dequeue(w);
        start(w);
      }
    }
  };

  /** Places a newcomer in the queue, making room by refusing the worst placed waiter if it is placed better. */
  const enqueue = (w: Waiter) => {
    if (queue.length >= o.queue) {
      const worst = queue.reduce<Waiter | undefined>((x, q) => (x && before(q, x) ? x : q), undefined);
      if (!worst || !before(w, worst)) {
        // Placed no better than anyone waiting: its address's excess (429), or the service is at
        // capacity with first attempts of distinct addresses (503).
        throw (clients.get(w.client)?.inFlight ?? 0) > 1 ? addressThrottled('queue') : hashingBusy();
      }
      dequeue(worst);
      release(worst.client);
      worst.refused = addressThrottled('queue');
      worst.wake?.();
    }
    queue.push(w);
  };

  return {
    async run(ip, work) {
      const client = addressKey(ip);
      const t = now();
      forgetLost(t);
      const placed = admitOne(client, t);
      const w: Waiter = { id: nextId++, client, round: placed, since: t, seen: t };
      // A newcomer runs at once only when a slot is free and nobody waiting is placed before it.
      const first = best();
      if (running.size < o.concurrency && (!first || before(w, first))) start(w);
      else {
        try {
          enqueue(w);
        } catch (err) {
          release(client);
          throw err;
        }
        try {
          await wait(w);
        } catch (err) {
          // Refused or lost: its place was already given up and its count released.
          if (dequeue(w)) release(client);
          throw err;
        }
      }
      try {
        return await work();
      } finally {
        if (running.delete(w.id)) release(client);
        handOver();
      }
    },
    async admit(ip, work) {
      const client = addressKey(ip);
      admitOne(client, now());
      try {
        return await work();
      } finally {
        release(client);
      }
    },
  };
}

/** No bound (tests and tools that hash outside requests). */
export const UNBOUNDED: HashSlots = { run: (_ip, work) => work(), admit: (_ip, work) => work() };
