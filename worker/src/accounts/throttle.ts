/**
 * Failed-login restrictions (architecture.md §4, "Failed logins"), atomic by construction: a
 * password is checked only after a single conditional INSERT has reserved an attempt in every budget
 * the attempt counts against, and that INSERT succeeds only while none of them is locked or full.
 * SQLite runs each statement atomically, so however many requests race across instances, no budget
 * admits more passwords than its count per window. The budgets of one attempt:
 * - the login's, for untrusted clients (`local:…`, `ldap:…`): AUTH_FAILED_COUNT within
 *   AUTH_FAILED_TIMEOUT_MIN, then locked for that long for untrusted clients only;
 * - or, for a browser presenting a valid device cookie of that login, the device's own (`device:…`),
 *   same count and window, locked for that device only (it then counts as untrusted);
 * - the account's total (`all:…`): at most TOTAL_FAILED_COUNT failures within a day for every
 *   client, trusted or not (NIST SP 800-63B: at most 100 consecutive failures per account);
 * - the client address's (`addr:…`, IPv4 /32, IPv6 /64): AUTH_ADDRESS_FAILED_COUNT failures across
 *   all logins within AUTH_ADDRESS_FAILED_WINDOW_MIN, then 429 for every login from it.
 * Unknown logins are throttled the same way, so a lock reveals nothing.
 */
import { and, eq, gt, inArray, lt, sql, type Placeholder, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { ConfigSnapshot } from '../config/index.js';
import { addressBucket } from '../config/ip-ranges.js';
import type { BatchItem } from 'drizzle-orm/batch';
import { reusableStatement, type Db, type PlaceholderValues } from '../store/index.js';
import { devices, loginAttempts, loginLocks, mfaPendingUses } from '../../../schema/index.js';

export interface ThrottlePolicy {
  count: number;
  windowMs: number;
}

/** NIST SP 800-63B's bound on consecutive failures per account, for every client. */
export const TOTAL_FAILED_COUNT = 100;
/** The window of that bound (also the horizon of the housekeeping of attempts). */
export const TOTAL_WINDOW_MS = 1440 * 60_000;

/** AUTH_FAILED_COUNT and AUTH_FAILED_TIMEOUT_MIN, read at request time. */
export function throttlePolicy(config: ConfigSnapshot): ThrottlePolicy {
  return { count: config.get('AUTH_FAILED_COUNT'), windowMs: config.get('AUTH_FAILED_TIMEOUT_MIN') * 60_000 };
}

/** AUTH_ADDRESS_FAILED_COUNT and AUTH_ADDRESS_FAILED_WINDOW_MIN, read at request time. */
export function addressPolicy(config: ConfigSnapshot): ThrottlePolicy {
  return {
    count: config.get('ADDRESS_FAILED_COUNT'),
    windowMs: config.get('ADDRESS_FAILED_WINDOW_MIN') * 60_000,
  };
}

/** One budget an attempt counts against: its row is `id`. */
interface Budget {
  id: string;
  key: string;
  policy: ThrottlePolicy;
}

/** The budgets of one password attempt, reserved together or not at all. */
export interface AttemptPlan {
  /** The budget whose failures lock (the login's for untrusted clients, or the device's). */
  main: Budget;
  /** The account's total, for every client. */
  total: Budget;
  /** The client address's; absent when the host cannot tell the address. */
  address?: Budget;
  /** The device whose own budget this is (a valid device cookie of the login). */
  device?: string;
}

/**
 * The budgets of an attempt on `accountKey` (throttleKey's) from `ip`, by a device (its id) or an
 * untrusted client.
 */
export function attemptPlan(
  config: ConfigSnapshot,
  accountKey: string,
  ip: string | null | undefined,
  device?: string,
  id: string = crypto.randomUUID(),
): AttemptPlan {
  const policy = throttlePolicy(config);
  return {
    main: { id, key: device ? `device:${device}` : accountKey, policy },
    total: {
      id: `${id}.all`,
      key: `all:${accountKey}`,
      policy: { count: TOTAL_FAILED_COUNT, windowMs: TOTAL_WINDOW_MS },
    },
    ...(ip ? { address: { id: `${id}.addr`, key: `addr:${addressBucket(ip)}`, policy: addressPolicy(config) } } : {}),
    ...(device ? { device } : {}),
  };
}

function budgets(plan: AttemptPlan): Budget[] {
  return plan.address ? [plan.main, plan.total, plan.address] : [plan.main, plan.total];
}

/** SQL: the attempts of `key` after `since` (a value, or a placeholder of a statement built once). */
const countSince = (key: unknown, since: unknown) =>
  sql`(select count(*) from ${loginAttempts} where throttle_key = ${key} and at > ${since})`;

const windowCount = (key: string, now: number, p: ThrottlePolicy) => countSince(key, now - p.windowMs);

/**
 * A further condition of a reservation (`reserveAttempt`'s `also`): its SQL, built from the placeholders
 * `names` once with the reservation's statement. Made once (a module's constant): the statements are kept
 * per condition object.
 */
export interface ReservationCondition<K extends string = string> {
  readonly names: readonly K[];
  readonly sql: (db: Db, p: { readonly [N in K]: Placeholder<N> }) => SQL;
}

/** A condition with this attempt's values. */
export interface ConditionValues {
  readonly condition: ReservationCondition;
  readonly values: Readonly<Record<string, unknown>>;
}

/** `reservationCondition(names, sql)`: a condition of a reservation (see ReservationCondition). */
export const reservationCondition = <K extends string>(
  names: readonly K[],
  build: ReservationCondition<K>['sql'],
): ReservationCondition<K> => ({ names, sql: build });

const bothOf = new WeakMap<ReservationCondition, WeakMap<ReservationCondition, ReservationCondition>>();

/** Both conditions hold (made once per pair, so that its statements are built once too). */
export function both(a: ConditionValues, b: ConditionValues): ConditionValues {
  let pairs = bothOf.get(a.condition);
  if (!pairs) bothOf.set(a.condition, (pairs = new WeakMap()));
  let condition = pairs.get(b.condition);
  if (!condition) {
    const [x, y] = [a.condition, b.condition];
    const shared = x.names.find((name) => y.names.includes(name));
    if (shared) throw new Error(`two conditions of a reservation may not share the placeholder ${shared}`);
    condition = reservationCondition([...x.names, ...y.names], (db, p) => and(x.sql(db, p), y.sql(db, p))!);
    pairs.set(b.condition, condition);
  }
  return { condition, values: { ...a.values, ...b.values } };
}

/**
 * The one statement reserving an attempt in every budget of `plan`: it inserts a row per budget
 * (rowsAffected > 0) only when none is locked or full (and `also` holds, when given), and nothing otherwise.
 * Built once per number of budgets and condition (architecture.md §6, "Statements built once").
 */
export function reserveAttempt(db: Db, plan: AttemptPlan, now: number, also?: ConditionValues) {
  const all = budgets(plan);
  const values: Record<string, unknown> = { ...also?.values, now };
  all.forEach((b, i) => {
    const v = budgetValues(b, now);
    values[`id${i}`] = v.id;
    values[`key${i}`] = v.key;
    values[`since${i}`] = v.since;
    values[`count${i}`] = v.count;
  });
  return reservationStatement(all.length, also?.condition)(db, values as PlaceholderValues<string>);
}

/** A budget's values in the reservation: its row, its key, the start of its window and its count. */
interface BudgetValues<V> {
  id: V;
  key: V;
  since: V;
  count: V;
}

const budgetValues = (b: Budget, now: number): BudgetValues<string | number> => ({
  id: b.id,
  key: b.key,
  since: now - b.policy.windowMs,
  count: b.policy.count,
});

function reservation(all: BudgetValues<unknown>[], now: unknown, also?: SQL): SQL {
  const rows = sql.join(
    all.map((b) => sql`select ${b.id} as id, ${b.key} as k`),
    sql` union all `,
  );
  const allowed = sql.join(
    all.map(
      (b) => sql`not exists (select 1 from ${loginLocks} where throttle_key = ${b.key} and until > ${now})
        and ${countSince(b.key, b.since)} < ${b.count}`,
    ),
    sql` and `,
  );
  const where = also ? sql`${allowed} and ${also}` : allowed;
  return sql`insert into ${loginAttempts} (id, throttle_key, at) select id, k, ${now} from (${rows}) where ${where}`;
}

const BUDGET_NAMES = ['id', 'key', 'since', 'count'] as const;

/**
 * The reservation of `n` budgets (and `also`), its values placeholders: `now`, `id0`, `key0`, `since0`,
 * `count0`, ..., and the condition's names.
 */
function reservationOf(n: number, also?: ReservationCondition) {
  const own = ['now', ...[0, 1, 2].slice(0, n).flatMap((i) => BUDGET_NAMES.map((f) => `${f}${i}`))];
  const clash = also?.names.find((name) => own.includes(name));
  if (clash) throw new Error(`a reservation's condition may not name its placeholder ${clash}`);
  return reusableStatement(
    (db, p) => {
      const at = (name: string) => (p as Record<string, unknown>)[name];
      const all = [0, 1, 2].slice(0, n).map((i) => ({
        id: at(`id${i}`),
        key: at(`key${i}`),
        since: at(`since${i}`),
        count: at(`count${i}`),
      }));
      return db.run(reservation(all, p.now, also?.sql(db, p as Record<string, Placeholder>)));
    },
    [...own, ...(also?.names ?? [])],
  );
}

type Reservation = ReturnType<typeof reservationOf>;
const unconditional: Reservation[] = [];
const conditional = new WeakMap<ReservationCondition, Reservation[]>();

/** The reservation of `n` budgets and `also`, built at its first use. */
function reservationStatement(n: number, also?: ReservationCondition): Reservation {
  let kept = also ? conditional.get(also) : unconditional;
  if (!kept) conditional.set(also!, (kept = []));
  kept[n] ??= reservationOf(n, also);
  return kept[n];
}

/** The main budget of `plan` holds no reservation of this attempt (its statement inserted nothing). */
const NOT_RESERVED = reservationCondition(
  ['reserved'],
  (_db, p) => sql`not exists (select 1 from ${loginAttempts} where id = ${p.reserved})`,
);
export const notReserved = (plan: AttemptPlan): ConditionValues => ({
  condition: NOT_RESERVED,
  values: { reserved: plan.main.id },
});

/**
 * The statement that locks the plan's main budget after a wrong password once its count lies in
 * the window (the reserved attempt stays counted as a failure, in every budget).
 */
export function lockIfExhausted(db: Db, plan: AttemptPlan, now: number) {
  const { key, policy } = plan.main;
  return db.run(sql`
    insert into ${loginLocks} (throttle_key, until)
    select ${key}, ${now + policy.windowMs}
    where ${windowCount(key, now, policy)} >= ${policy.count}
    on conflict (throttle_key) do update set until = excluded.until`);
}

/** Whether this failure filled the account's total (an SQL condition, read in the failure's batch). */
export function totalJustFilled(plan: AttemptPlan, now: number) {
  return sql`${windowCount(plan.total.key, now, plan.total.policy)} = ${plan.total.policy.count}`;
}

/** Whether this failure filled the address's budget (an SQL condition, read in the failure's batch). */
export function addressJustFilled(plan: AttemptPlan, now: number) {
  const a = plan.address;
  return a ? sql`${windowCount(a.key, now, a.policy)} = ${a.policy.count}` : sql`0`;
}

/** Releases a reserved attempt that judged nothing (the directory or the bridge failed). */
export function releaseAttempt(db: Db, plan: AttemptPlan) {
  return db.delete(loginAttempts).where(
    inArray(
      loginAttempts.id,
      budgets(plan).map((b) => b.id),
    ),
  );
}

/**
 * After a correct password: the failures of the main budget and of the account's total are
 * forgotten, and this attempt no longer counts against the address (only failures do). A device's
 * success leaves the untrusted budget as it is: the owner's login lifts nothing for others. With
 * `when`, only while it holds (a success decided by an earlier statement of the same batch).
 */
export function successStatements(db: Db, plan: AttemptPlan, when?: SQL): SuccessStatements {
  if (!when) {
    const clear = [clearKey(db, { key: plan.main.key }), clearKey(db, { key: plan.total.key })] as const;
    return plan.address ? [...clear, clearRow(db, { id: plan.address.id })] : clear;
  }
  return [
    clearAttempts(db, plan.main.key, when),
    clearAttempts(db, plan.total.key, when),
    ...(plan.address ? [db.delete(loginAttempts).where(and(eq(loginAttempts.id, plan.address.id), when))] : []),
  ];
}

/** The statements of successStatements (two or three). */
type SuccessStatements = readonly [BatchItem<'sqlite'>, BatchItem<'sqlite'>, ...BatchItem<'sqlite'>[]];

// A success's statements without a condition (every login's), built once.
const clearKey = reusableStatement(
  (db, p) => db.delete(loginAttempts).where(eq(loginAttempts.throttleKey, p.key)),
  ['key'],
);
const clearRow = reusableStatement((db, p) => db.delete(loginAttempts).where(eq(loginAttempts.id, p.id)), ['id']);

/** Forgets the failures of `key` (only while `when` holds, when given: a success decided in the same batch). */
export function clearAttempts(db: Db, key: string, when?: SQL) {
  return when ? db.delete(loginAttempts).where(and(eq(loginAttempts.throttleKey, key), when)) : clearKey(db, { key });
}

/**
 * Admin unlock (and a password reset): removes the lock and the counted failures of the login, its
 * account's total and, given the account, the locks of its devices.
 */
export function unlockStatements(db: Db, key: string, userId?: string) {
  const deviceKeys = sql`(select 'device:' || id from ${devices} where user_id = ${userId ?? ''})`;
  return [
    db.delete(loginLocks).where(eq(loginLocks.throttleKey, key)),
    clearAttempts(db, key),
    clearAttempts(db, `all:${key}`),
    db.delete(loginLocks).where(sql`throttle_key in ${deviceKeys}`),
  ] as const;
}

/**
 * Whether the login of `key` is restricted at `now` (SQL, to condition the event of a lift in the
 * batch that lifts it): locked for untrusted clients, or its account's total of failures full.
 */
export function restrictedSql(key: string, now: number): SQL {
  return sql`(exists (select 1 from ${loginLocks}
                      where ${loginLocks.throttleKey} = ${key} and ${loginLocks.until} > ${now})
    or (select count(*) from ${loginAttempts} where ${loginAttempts.throttleKey} = ${`all:${key}`}
        and ${loginAttempts.at} > ${now - TOTAL_WINDOW_MS}) >= ${TOTAL_FAILED_COUNT})`;
}

/** The end of the lock of `key` (for untrusted clients, or for every client once its total is full), if any. */
export async function lockedUntil(db: Db, key: string, now: number): Promise<number | null> {
  const [locks, total] = await db.batch([
    db
      .select({ until: loginLocks.until })
      .from(loginLocks)
      .where(and(eq(loginLocks.throttleKey, key), gt(loginLocks.until, now))),
    oldestInWindow(db, `all:${key}`, now, TOTAL_WINDOW_MS, TOTAL_FAILED_COUNT),
  ]);
  const totalUntil = total[0] ? total[0].at + TOTAL_WINDOW_MS : null;
  const lock = locks[0]?.until ?? null;
  return lock === null ? totalUntil : totalUntil === null ? lock : Math.max(lock, totalUntil);
}

/** The `count`-th newest attempt of `key` in the window (present only when the window is full). */
function oldestInWindow(db: Db, key: string, now: number, windowMs: number, count: number) {
  return db
    .select({ at: loginAttempts.at })
    .from(loginAttempts)
    .where(and(eq(loginAttempts.throttleKey, key), gt(loginAttempts.at, now - windowMs)))
    .orderBy(sql`${loginAttempts.at} desc`)
    .limit(1)
    .offset(count - 1);
}

/**
 * Why a plan was refused, until when: its address is throttled (429), the login is restricted (401), or
 * no restriction holds but every attempt of the window is still in flight (401, retry in a second).
 */
export type Refusal = { kind: 'address' | 'locked' | 'in-flight'; until: number };

/** Tells why `plan`'s reservation was refused, with the end of the restriction. */
export async function refusalOf(db: Db, plan: AttemptPlan, now: number): Promise<Refusal> {
  const a = plan.address;
  const [addr, lock, total] = await db.batch([
    a ? oldestInWindow(db, a.key, now, a.policy.windowMs, a.policy.count) : oldestInWindow(db, '', now, 1, 1),
    db
      .select({ until: loginLocks.until })
      .from(loginLocks)
      .where(and(eq(loginLocks.throttleKey, plan.main.key), gt(loginLocks.until, now))),
    oldestInWindow(db, plan.total.key, now, TOTAL_WINDOW_MS, TOTAL_FAILED_COUNT),
  ]);
  if (a && addr[0]) return { kind: 'address', until: addr[0].at + a.policy.windowMs };
  if (total[0]) return { kind: 'locked', until: total[0].at + TOTAL_WINDOW_MS };
  if (lock[0]) return { kind: 'locked', until: lock[0].until };
  return { kind: 'in-flight', until: now + 1000 };
}

/**
 * Housekeeping: attempts older than the longest window, expired locks, devices unused for a cookie's
 * life, used pending logins past their expiry (their tokens are refused by their signature's expiry).
 */
export async function purgeThrottle(db: Db, now: number): Promise<void> {
  await db.batch([
    db.delete(loginAttempts).where(lt(loginAttempts.at, now - TOTAL_WINDOW_MS)),
    db.delete(loginLocks).where(lt(loginLocks.until, now)),
    db.delete(devices).where(lt(devices.lastUsedAt, now - DEVICE_COOKIE_MS)),
    db.delete(mfaPendingUses).where(lt(mfaPendingUses.expiresAt, now)),
  ]);
}

/** How long a device cookie lives (renewed at each login with it). */
export const DEVICE_COOKIE_MS = 365 * 86_400_000;

const LOCAL = 'local:';

/** The throttle key of a local login, or of a login at an LDAP server record. */
export function throttleKey(loginKey: string, ldapServer?: string): string {
  return ldapServer === undefined ? `${LOCAL}${loginKey}` : `ldap:${ldapServer}:${loginKey}`;
}

/** The lock for untrusted clients of local logins, joined to accounts by their login key (a column). */
export function localLockOf(loginKeyColumn: SQLWrapper, now: number): SQL | undefined {
  return and(eq(loginLocks.throttleKey, sql`${LOCAL} || ${loginKeyColumn}`), gt(loginLocks.until, now));
}

/** The end of the lock for untrusted clients of the local login `loginKey`, if any. */
export async function localLockUntil(db: Db, loginKey: string, now: number): Promise<number | null> {
  const rows = await db
    .select({ until: loginLocks.until })
    .from(loginLocks)
    .where(and(eq(loginLocks.throttleKey, throttleKey(loginKey)), gt(loginLocks.until, now)));
  return rows[0]?.until ?? null;
}
