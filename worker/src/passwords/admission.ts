/**
 * Admission of password work (docs/security-admission.md; docs/security.md, "Password checks under
 * load"; architecture.md §4): every password check or hash of a request is admitted per client address
 * before anything is hashed, read or written, then runs in one of a bounded number of hashing slots.
 *
 * Per address (IPv4 /32, IPv6 /64: addressKey), at most AUTH_PASSWORD_ADDRESS_IN_FLIGHT pieces of
 * work run or wait at once, and a token bucket (AUTH_PASSWORD_ADDRESS_RATE per minute, bursts of
 * AUTH_PASSWORD_ADDRESS_BURST) bounds their rate; beyond either, 429 PASSWORD_CHECKS_THROTTLED
 * with Retry-After at once. LDAP binds (`admit`) take the same admission but no slot: the bridge
 * checks the password.
 *
 * Slots (argon2id, 19 MiB and tens of milliseconds each): at most AUTH_PASSWORD_HASH_CONCURRENCY
 * run at once in a process (edge: an isolate), at most AUTH_PASSWORD_HASH_QUEUE wait. Waiters are
 * ordered by lane, then by round (security-admission.md, "Order"):
 * - the priority lane: a login presenting a valid device cookie of the login it tries (`trusted`,
 *   checked by the caller before admission). Served before everyone else, outside its address's
 *   bound and the queue's, within its own budget (PRIORITY_IN_FLIGHT in all, PRIORITY_PER_ACCOUNT
 *   per account; beyond either, it is admitted as anonymous): other clients never refuse it.
 * - clean addresses: no failed login from them in this process within SUSPECT_MS (`noteFailure`).
 * - suspect addresses: a recent failure, or another attempt sent while one of the address's own was
 *   running or waiting (until none is left). Lanes are decided afresh whenever waiters are compared,
 *   so an address turning suspect takes its waiting work along. Served only when no clean waiter is,
 *   and while others wait the addresses with a recent failure together start at most SUSPECT_SHARE
 *   of the slots' measured capacity, so a flood of failing addresses (each within its own bound,
 *   together beyond the capacity) leaves clean addresses their slots and the process's CPU (edge:
 *   the isolate the WASM hash blocks) to other requests. An address suspect only for its concurrent
 *   attempts is not held to the share: a busy client whose logins succeed keeps the slots busy.
 * Within a lane, rounds: an address's first waiting piece of work is in the current round, its
 * next ones each one round later, so one address's excess waits behind every other address's
 * first attempt (start-time fair queueing).
 *
 * A full queue makes room for a better placed newcomer by shedding its worst placed waiter (a
 * suspect address's before a clean one's, then the most queued address's last one) with a 429. A
 * newcomer placed no better is refused with a 429, except a clean address's first attempt: it
 * waits in an overflow of another AUTH_PASSWORD_HASH_QUEUE places (every waiter is then a clean
 * address's first attempt or better). Nothing here ever answers 503: a refused or shed client
 * gets 429 with the Retry-After of its own address's bucket (at least 1 s).
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
/** How often a waiter looks for a free slot (edge). */
const POLL_MS = 5;
/**
 * How often a waiter looks with handOver (Node), where a slot is handed to it as it frees and a suspect held
 * to its share is started by a timer set for the share's next token: only a lease to check. Its 5 ms
 * looks woke the process three times per login, each time taking the core from the password hash it
 * waits for (docs/performance.md, "Logins and the hot path").
 */
const HANDOVER_POLL_MS = 1_000;
/** The least Retry-After, in seconds. */
const RETRY_AFTER_S = 1;
/** Idle token buckets (and forgotten failures) are swept at most this often, once there are more than SWEEP_ABOVE. */
const SWEEP_EVERY_MS = 1_000;
const SWEEP_ABOVE = 1_000;
/** The priority lane's budget: pieces of work in it at once, in all and per account. */
export const PRIORITY_IN_FLIGHT = 8;
export const PRIORITY_PER_ACCOUNT = 2;
/** An address is suspect for this long after its last failed login (noteFailure). */
export const SUSPECT_MS = 10 * 60_000;
/** The share of the slots' capacity that suspect addresses may start together. */
export const SUSPECT_SHARE = 0.5;
/** The duration of a piece of work assumed before any has been measured. */
const FIRST_ESTIMATE_MS = 50;

/** The per-address bound (docs/security.md, "Password checks under load"). */
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
   * such clients share one bound). Throws the 429 problem when refused or shed: nothing ran.
   */
  run<T>(ip: string | null, work: () => Promise<T>, o?: AdmitOptions): Promise<T>;
  /** Runs `work` admitted for `ip` without a slot (an LDAP bind: the bridge checks the password). */
  admit<T>(ip: string | null, work: () => Promise<T>): Promise<T>;
  /**
   * Whether work of `ip` run now would start at once in the clean lane: the address has nothing running
   * or waiting, no recent failure and a token in its bucket, a slot is free and nobody waits. The
   * priority lane could then gain it nothing (a login reads its device's row for the lane only otherwise).
   */
  startsAtOnce(ip: string | null): boolean;
  /**
   * A failed login (a wrong password, an unknown login, or an attempt refused by a lock or the
   * address's failure budget) from `ip`: the address is suspect for SUSPECT_MS.
   */
  noteFailure(ip: string | null): void;
}

/** How a piece of work is admitted. */
export interface AdmitOptions {
  /**
   * The account of a valid device cookie that the request presented for the login it tries
   * (signature, login and live device row checked by the caller): the priority lane.
   */
  trusted?: string;
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

type Refusal = 'rate' | 'in_flight' | 'queue' | 'capacity';
const DETAILS: Record<Refusal, string> = {
  rate: 'too many password checks from this address; retry after Retry-After seconds',
  in_flight: 'too many password checks from this address at once; retry after Retry-After seconds',
  queue: 'too many password checks from this address are waiting; retry after Retry-After seconds',
  capacity:
    'every waiting place is taken by first attempts of other clients; retry after Retry-After seconds ' +
    '(nothing was checked)',
};
const REASONS: Record<Refusal, string> = {
  rate: 'address-rate',
  in_flight: 'address-in-flight',
  queue: 'address-queue',
  capacity: 'capacity',
};

/**
 * The 429 of a client beyond its bound, queued out or shed (never a 503: docs/security-admission.md,
 * "Answers"). Nothing was checked or counted.
 */
export function addressThrottled(reason: Refusal, retryAfterS: number = RETRY_AFTER_S): ProblemError {
  admissionsRefused.inc([reason]);
  // A flood is answered mostly with this: no stack trace to capture (it was a measurable share of a
  // refusal's CPU, and says nothing: the refusal is expected). V8 (Node, workerd) reads the limit.
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new ProblemError('PASSWORD_CHECKS_THROTTLED', {
      detail: DETAILS[reason],
      headers: { 'Retry-After': String(Math.max(RETRY_AFTER_S, Math.ceil(retryAfterS))) },
      extensions: { reason: REASONS[reason] },
    });
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** The lanes, in the order they are served. */
const PRIORITY = 0;
const CLEAN = 1;
const SUSPECT = 2;
type Lane = typeof PRIORITY | typeof CLEAN | typeof SUSPECT;

interface Waiter {
  id: number;
  /** The key its admission counts under: the address's, or (priority lane) the account's. */
  client: string;
  lane: Lane;
  /** Its round: the current one for an address's first waiting work, one more for each next. */
  round: number;
  since: number;
  /** Its last look (edge: a waiter that stops looking was cancelled). */
  seen: number;
  wake?: () => void;
  /** Set when a better placed newcomer took its place in a full queue. */
  refused?: ProblemError;
}

/** Whether `a` is served before `b`: the better lane, then the lower round, then the older. */
const before = (a: Waiter, b: Waiter) =>
  a.lane < b.lane || (a.lane === b.lane && (a.round < b.round || (a.round === b.round && a.id < b.id)));

/** Creates the bound of one process (or isolate). */
export function createHashSlots(o: HashSlotsOptions): HashSlots {
  const now = o.now ?? Date.now;
  const running = new Map<number, { since: number; client: string; lane: Lane }>();
  const queue: Waiter[] = [];
  /**
   * Per address (per account in the priority lane): its work running or waiting (or, through
   * `admit`, at the bridge), and its last round.
   */
  const clients = new Map<string, { inFlight: number; lastRound: number; concurrent?: boolean }>();
  const buckets = new Map<string, { tokens: number; at: number }>();
  /** Per address: the time of its last failed login (noteFailure). */
  const failures = new Map<string, number>();
  let priorityInFlight = 0;
  /** The suspect addresses' share: a token bucket refilled at SUSPECT_SHARE of the measured capacity. */
  const slotsAtOnce = Math.max(1, o.concurrency);
  let suspectTokens = slotsAtOnce;
  let suspectAt = now();
  /** The measured duration of a piece of work (a moving average), for the capacity. */
  let workMs = FIRST_ESTIMATE_MS;
  let round = 0;
  let nextId = 0;
  let swept = 0;

  const release = (w: { client: string; lane: Lane }) => {
    if (w.lane === PRIORITY) priorityInFlight -= 1;
    const c = clients.get(w.client);
    if (c && --c.inFlight <= 0) clients.delete(w.client);
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
        release(r);
      }
    for (const w of [...queue])
      if (t - w.since > LEASE_MS || (!o.handOver && t - w.seen > STALE_MS)) {
        dequeue(w);
        release(w);
      }
  };
  const isSuspect = (client: string, t: number) => {
    const last = failures.get(client);
    return last !== undefined && t - last < SUSPECT_MS;
  };
  /**
   * The lane of an address's work, decided afresh whenever waiters are compared: suspect while the
   * address has a recent failure, or since it sent another attempt while one was running or waiting
   * (admitted or refused), until none is left (a browser sends one login at a time; a flood sends the
   * next before the first is answered). So a flood of fresh addresses drops behind clean ones before
   * its first failures are known, and an address whose failure is noted takes its waiting work along.
   */
  const laneOf = (client: string, t: number): Lane =>
    isSuspect(client, t) || clients.get(client)?.concurrent ? SUSPECT : CLEAN;
  /** Decides the lanes of the waiters (the priority lane's stay). */
  const relane = (t: number) => {
    for (const w of queue) if (w.lane !== PRIORITY) w.lane = laneOf(w.client, t);
  };
  /** Seconds until `client`'s bucket holds a token again (at least RETRY_AFTER_S): its own budget. */
  const retryAfterOf = (client: string, t: number) => {
    const bound = o.perAddress;
    const b = buckets.get(client);
    if (!bound || !b) return RETRY_AFTER_S;
    const tokens = Math.min(bound.burst, b.tokens + ((t - b.at) * bound.perMinute) / 60_000);
    return tokens >= 1 ? RETRY_AFTER_S : ((1 - tokens) * 60) / bound.perMinute;
  };
  /**
   * Whether `w`'s start counts against the suspects' share: an address with a recent failure. One
   * that is suspect only for sending attempts concurrently (a busy client that has not failed, or a
   * flood before its first failure is known) waits behind clean addresses but is not held to the share:
   * with nobody better placed, its work keeps the slots busy (docs/security-admission.md, "Budgets").
   */
  const sharesSuspects = (w: { client: string; lane: Lane }, t: number) => w.lane === SUSPECT && isSuspect(w.client, t);
  /**
   * Whether `w` may start now: an address with a recent failure only within the suspects' share,
   * which binds while anyone else waits (a flood); a lone client with a past failure is not slowed by it.
   */
  const mayStart = (w: Waiter, t: number) => {
    if (!sharesSuspects(w, t)) return true;
    const perMs = (SUSPECT_SHARE * slotsAtOnce) / workMs;
    suspectTokens = Math.min(slotsAtOnce, suspectTokens + (t - suspectAt) * perMs);
    suspectAt = t;
    return suspectTokens >= 1 || queue.every((q) => q === w);
  };
  const best = (t: number) => {
    relane(t);
    return queue.reduce<Waiter | undefined>((b, w) => (b && before(b, w) ? b : w), undefined);
  };
  /**
   * The best placed waiter, when it may start now (a suspect waits for its share; nobody is placed before a clean one).
   */
  const next = (t: number) => {
    const w = best(t);
    return w && mayStart(w, t) ? w : undefined;
  };
  const start = (w: Waiter) => {
    running.set(w.id, { since: now(), client: w.client, lane: w.lane });
    if (sharesSuspects(w, now())) suspectTokens = Math.max(0, suspectTokens - 1);
    round = Math.max(round, w.round);
  };
  /** handOver: the timer that hands a free slot on when the suspects' share holds its next token. */
  let shareTimer: ReturnType<typeof setTimeout> | undefined;
  /** handOver: gives free slots to the best placed waiters, and wakes them. */
  const handOver = () => {
    const t = now();
    while (o.handOver && running.size < o.concurrency && queue.length > 0) {
      const w = next(t);
      if (!w) {
        // Only suspects wait, beyond their share (mayStart just brought its tokens up to `t`).
        if (shareTimer === undefined) {
          const perMs = (SUSPECT_SHARE * slotsAtOnce) / workMs;
          const ms = Math.min(HANDOVER_POLL_MS, Math.max(1, Math.ceil((1 - suspectTokens) / perMs)));
          shareTimer = setTimeout(() => {
            shareTimer = undefined;
            handOver();
          }, ms);
        }
        break;
      }
      dequeue(w);
      start(w);
      w.wake?.();
    }
  };

  /** Counts one piece of work of `client` in flight; returns its round. */
  const place = (client: string) => {
    const c = clients.get(client);
    const placed = c ? Math.max(round, c.lastRound + 1) : round;
    if (c) {
      c.inFlight += 1;
      c.lastRound = placed;
    } else clients.set(client, { inFlight: 1, lastRound: placed });
    return placed;
  };
  /** Admits one piece of work of address `client` (throws the 429 when beyond its bound); returns its round. */
  const admitOne = (client: string, t: number): number => {
    const bound = o.perAddress;
    const c = clients.get(client);
    if (c) c.concurrent = true;
    if (bound) {
      if ((clients.get(client)?.inFlight ?? 0) >= bound.inFlight) throw addressThrottled('in_flight');
      let b = buckets.get(client);
      if (b) b.tokens = Math.min(bound.burst, b.tokens + ((t - b.at) * bound.perMinute) / 60_000);
      else buckets.set(client, (b = { tokens: bound.burst, at: t }));
      b.at = t;
      if (b.tokens < 1) throw addressThrottled('rate', ((1 - b.tokens) * 60) / bound.perMinute);
      b.tokens -= 1;
      sweep(t, bound);
    }
    return place(client);
  };
  /** Forgets the buckets that have filled up again (the same as a new one) and failures no longer recent. */
  const sweep = (t: number, bound: AddressBound | undefined) => {
    if ((buckets.size <= SWEEP_ABOVE && failures.size <= SWEEP_ABOVE) || t - swept < SWEEP_EVERY_MS) return;
    swept = t;
    if (bound)
      for (const [k, b] of buckets)
        if (b.tokens + ((t - b.at) * bound.perMinute) / 60_000 >= bound.burst) buckets.delete(k);
    for (const [k, last] of failures) if (t - last >= SUSPECT_MS) failures.delete(k);
  };

  /** Waits until `w` holds a slot; throws when it was shed or waited past the lease. */
  const wait = async (w: Waiter) => {
    while (!running.has(w.id)) {
      if (w.refused) throw w.refused;
      // Waited past the lease: its own 429, like any client queued out.
      if (!queue.includes(w)) throw addressThrottled('queue', retryAfterOf(w.client, now()));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, o.handOver ? HANDOVER_POLL_MS : POLL_MS);
        w.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      w.wake = undefined;
      w.seen = now();
      forgetLost(w.seen);
      if (o.handOver) handOver();
      else if (running.size < o.concurrency && next(w.seen) === w) {
        // Without handOver (edge) a slot is only ever taken by a live request, at its own look:
        // a slot set aside for a waiter whose request Workers cancelled would stay lost.
        dequeue(w);
        start(w);
      }
    }
  };

  /**
   * Places a newcomer in the queue. The priority lane has its own places (its budget bounds them).
   * A full queue sheds its worst placed waiter for a better placed newcomer; a clean address's
   * first attempt placed no better waits in the overflow; any other newcomer is refused. Both with
   * the 429 of the client's own budget.
   */
  const enqueue = (w: Waiter, t: number) => {
    if (w.lane !== PRIORITY) {
      relane(t);
      const others = queue.filter((q) => q.lane !== PRIORITY);
      if (others.length >= o.queue) {
        const worst = others.reduce<Waiter | undefined>((x, q) => (x && before(q, x) ? x : q), undefined);
        const first = (clients.get(w.client)?.inFlight ?? 0) <= 1;
        if (worst && before(w, worst)) {
          dequeue(worst);
          release(worst);
          worst.refused = addressThrottled('queue', retryAfterOf(worst.client, t));
          worst.wake?.();
        } else if (!(w.lane === CLEAN && first && others.length < 2 * o.queue)) {
          throw addressThrottled(w.lane === CLEAN && first ? 'capacity' : 'queue', retryAfterOf(w.client, t));
        }
      }
    }
    queue.push(w);
  };

  return {
    async run(ip, work, opts) {
      const address = addressKey(ip);
      const t = now();
      forgetLost(t);
      let client = address;
      let lane: Lane;
      let placed: number;
      const account = opts?.trusted === undefined ? undefined : `account:${opts.trusted}`;
      if (
        account !== undefined &&
        priorityInFlight < PRIORITY_IN_FLIGHT &&
        (clients.get(account)?.inFlight ?? 0) < PRIORITY_PER_ACCOUNT
      ) {
        // The priority lane: the account's own budget, not its address's (which others may flood).
        // Beyond the lane's budget (in all, or the account's), admitted as anonymous below.
        client = account;
        lane = PRIORITY;
        priorityInFlight += 1;
        placed = place(client);
      } else {
        placed = admitOne(address, t);
        lane = laneOf(address, t);
      }
      const w: Waiter = { id: nextId++, client, lane, round: placed, since: t, seen: t };
      // A newcomer runs at once only when a slot is free and nobody waiting is placed before it.
      const first = best(t);
      if (running.size < o.concurrency && (!first || before(w, first)) && mayStart(w, t)) start(w);
      else {
        try {
          enqueue(w, t);
        } catch (err) {
          release(w);
          throw err;
        }
        try {
          await wait(w);
        } catch (err) {
          // Shed or lost: its place was already given up and its count released.
          if (dequeue(w)) release(w);
          throw err;
        }
      }
      try {
        return await work();
      } finally {
        const r = running.get(w.id);
        if (r && running.delete(w.id)) {
          release(w);
          workMs = 0.8 * workMs + 0.2 * Math.max(1, now() - r.since);
        }
        handOver();
      }
    },
    startsAtOnce(ip) {
      const client = addressKey(ip);
      const t = now();
      if (clients.has(client) || isSuspect(client, t) || queue.length > 0 || running.size >= o.concurrency)
        return false;
      const bound = o.perAddress;
      const b = buckets.get(client);
      return !bound || !b || b.tokens + ((t - b.at) * bound.perMinute) / 60_000 >= 1;
    },
    async admit(ip, work) {
      const client = addressKey(ip);
      admitOne(client, now());
      try {
        return await work();
      } finally {
        release({ client, lane: CLEAN });
      }
    },
    noteFailure(ip) {
      const t = now();
      failures.set(addressKey(ip), t);
      sweep(t, o.perAddress);
    },
  };
}

/** No bound (tests and tools that hash outside requests). */
export const UNBOUNDED: HashSlots = {
  run: (_ip, work) => work(),
  admit: (_ip, work) => work(),
  startsAtOnce: () => true,
  noteFailure: () => {},
};
