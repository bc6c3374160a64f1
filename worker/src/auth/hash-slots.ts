/**
 * A bound on concurrent password hashing (argon2id, 19 MiB and tens of milliseconds each): at most
 * AUTH_PASSWORD_HASH_CONCURRENCY password checks run at once in a process (edge: an isolate), at
 * most AUTH_PASSWORD_HASH_QUEUE wait for a slot, and beyond that the caller gets a 503 with
 * Retry-After at once. Without it, a burst of logins would hold every libuv thread on Node (which
 * WebCrypto and file access share) and queue without limit.
 *
 * On the Node host (`handOver`) waiters are served first come, first served: a finishing check
 * gives its slot to the oldest waiter and wakes it at once, and a request that arrives meanwhile
 * queues behind (before, latecomers took freed slots while waiters slept, and a few logins waited
 * seconds under load). On the edge, waiting is polling on the waiter's own timer, never a promise
 * another request resolves: Workers cancel a request that waits on another request's work, and a
 * slot set aside for a cancelled waiter would be lost; there a waiter takes a free slot at its own
 * look. A slot or a place in the queue held longer than LEASE_MS is taken back (its request was
 * cancelled, as Workers do when the client goes away, without running its `finally`), so a lost
 * request never shrinks the bound.
 */
import type { ConfigSnapshot } from '../config/index.js';
import { ProblemError } from '../http/problem.js';

/** How long a slot or a waiting place may be held before it is considered lost (and a waiter gives up). */
const LEASE_MS = 30_000;
/** How often a waiter looks for a free slot. */
const POLL_MS = 5;
/** Retry-After of the 503, in seconds. */
const RETRY_AFTER_S = 1;

/** The bound: slots running at once, places waiting; `now` for tests. */
export interface HashSlotsOptions {
  concurrency: number;
  queue: number;
  now?: () => number;
  /**
   * A finishing piece of work wakes the waiter it gives its slot to (Node). Without it (the edge:
   * Workers cancel a request that waits on another request's promise) the waiter finds the slot
   * at its next look, within POLL_MS.
   */
  handOver?: boolean;
}

/** A process-wide (edge: isolate-wide) bound on concurrent password work. */
export interface HashSlots {
  /** Runs `work` holding one slot; throws a 503 problem when every slot and waiting place is taken. */
  run<T>(work: () => Promise<T>): Promise<T>;
}

/** The 503 of a full queue. It is not a login failure: nothing was checked. */
/**
 * The bound in force: AUTH_PASSWORD_HASH_CONCURRENCY when set (environment or settings), else the
 * host's own default (the Node host's cores, node-native.ts), else the registry's default.
 */
export function hashConcurrency(config: ConfigSnapshot, hostDefault: number | undefined): number {
  return config.source('PASSWORD_HASH_CONCURRENCY') === 'default' && hostDefault
    ? hostDefault
    : config.get('PASSWORD_HASH_CONCURRENCY');
}

export function hashingBusy(): ProblemError {
  return new ProblemError('SERVICE_UNAVAILABLE', {
    detail: 'too many password checks at once; try again shortly',
    headers: { 'Retry-After': String(RETRY_AFTER_S) },
    extensions: { reason: 'password-hashing-busy' },
  });
}

/** Creates the bound of one process (or isolate). */
export function createHashSlots(o: HashSlotsOptions): HashSlots {
  const now = o.now ?? Date.now;
  const running = new Map<number, number>();
  /** Waiters, oldest first. */
  const queue: Array<{ id: number; since: number; wake?: () => void }> = [];
  let nextId = 0;
  const forgetLost = (t: number) => {
    for (const [id, since] of running) if (t - since > LEASE_MS) running.delete(id);
    while (queue.length > 0 && t - queue[0]!.since > LEASE_MS) queue.shift();
  };
  /** handOver: gives free slots to the oldest waiters, and wakes them. */
  const handOver = () => {
    while (o.handOver && running.size < o.concurrency && queue.length > 0) {
      const next = queue.shift()!;
      running.set(next.id, now());
      next.wake?.();
    }
  };

  return {
    async run(work) {
      const id = nextId++;
      forgetLost(now());
      // With handOver, a latecomer queues behind the waiters even when a slot is free this instant.
      if (running.size >= o.concurrency || (o.handOver && queue.length > 0)) {
        if (queue.length >= o.queue) throw hashingBusy();
        const entry: { id: number; since: number; wake?: () => void } = { id, since: now() };
        queue.push(entry);
        while (!running.has(id)) {
          if (!queue.includes(entry)) throw hashingBusy(); // waited past the lease
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, POLL_MS);
            entry.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          entry.wake = undefined;
          forgetLost(now());
          if (o.handOver) handOver();
          else if (running.size < o.concurrency && queue.includes(entry)) {
            // Without handOver (edge) a slot is only ever taken by a live request, at its own look:
            // a slot set aside for a waiter whose request Workers cancelled would stay lost.
            queue.splice(queue.indexOf(entry), 1);
            running.set(id, now());
          }
        }
      } else {
        running.set(id, now());
      }
      try {
        return await work();
      } finally {
        running.delete(id);
        handOver();
      }
    },
  };
}

/** No bound (tests and tools that hash outside requests). */
export const UNBOUNDED: HashSlots = { run: (work) => work() };
