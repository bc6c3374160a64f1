/**
 * The one code path that checks a local login and password, for every endpoint that accepts them
 * (Basic, session logins, /v4/users): the lockout here; blocked accounts, inactivity and password
 * expiry by the account rule (accounts/login-rule.ts), as for LDAP and OIDC logins.
 */
import { and, eq, exists, sql } from 'drizzle-orm';
import { runAccountBatch, type AccountBatchItem } from '../accounts/writes.js';
import { deviceLive, laneDevice, trustedDeviceOfLogin, type DeviceClaim } from '../accounts/devices.js';
import { auditInsert, auditInsertWhen } from '../audit/events.js';
import { ProblemError } from '../http/problem.js';
import { reusableStatement, type Db } from '../store/index.js';
import {
  assertMayLogIn,
  blockedProblem,
  passwordChangeReason,
  loggedIn,
  loginSuccessStatements,
} from '../accounts/login-rule.js';
import type { UserRow } from '../accounts/model.js';
import { devices, loginLocks, users } from '../../../schema/index.js';
import { factorsAmong, factorsOfLoginKey, type FactorKind } from '../accounts/factors.js';
import { loginKey } from './credentials.js';
import {
  TOTAL_WINDOW_MS,
  addressJustFilled,
  attemptPlan,
  lockIfExhausted,
  refusalOf,
  both,
  notReserved,
  releaseAttempt,
  reserveAttempt,
  successStatements,
  throttleKey,
  totalJustFilled,
  type AttemptPlan,
} from '../accounts/throttle.js';
import type { RequestScope, Scope } from '../http/scope.js';
import { revocationCheckMs } from '../accounts/sessions.js';
import { countLockedAttempt, loginMethod, lockouts, restrictions } from '../metrics/process.js';
import { liveAccounts } from '../accounts/live.js';

/**
 * What a password check needs of the scope: the attempt is reserved and a success recorded on
 * `lazyDb` when there is one (architecture.md §6).
 */
export type LoginScope = Scope & Pick<RequestScope, 'verifier'>;

/** A password login's own options. */
export interface LoginOptions {
  /** WWW-Authenticate challenge for 401 answers. */
  challenge: string;
  /**
   * Statements committed with a success's record, in its transaction (a session login's new
   * session and device: sessions/login.ts); not run when the login fails or the password has
   * expired. `device`: the device whose valid cookie this login presented, when its budget was used;
   * `known`: whether the client presented a valid cookie of a live device of the account at all (its
   * budget spent or not: not a new device, architecture.md §4).
   */
  alsoOnSuccess?: (db: Db, user: UserRow, device: string | undefined, known: boolean) => AccountBatchItem[];
  /** The device cookie the client presented (session logins only: Basic and API clients are untrusted). */
  device?: DeviceClaim;
}

export interface LoginResult {
  user: UserRow;
  /** The password is right but expired (or must be changed): only a password change is allowed. */
  passwordExpired: boolean;
  /** Why the password must be changed (with passwordExpired): reset by an administrator, or expired. */
  passwordReason?: PasswordReason;
  /** The device whose valid cookie the login presented (its own budget was used). */
  device?: string;
  /**
   * The password is right but the account has a second factor: nothing was opened, no failure
   * forgotten (only the second step does that, so a known password gives no fresh code guesses);
   * the plan is the one code guesses count on (docs/security-mfa.md).
   */
  secondFactor?: { factors: FactorKind[]; plan: AttemptPlan; known: boolean };
}

/**
 * Finds the live local account of a login (case-insensitive) that signs in: a service account never
 * does (docs/api.md, "Service accounts"), so its login is answered as an unknown one.
 */
export const liveLocalUser = reusableStatement(
  (db, p) =>
    db
      .select()
      .from(users)
      .where(and(eq(users.loginKey, p.key), liveAccounts, eq(users.source, 'local'), eq(users.kind, 'person')))
      .limit(1),
  ['key'],
);

/**
 * Checks a local login and password. Throws ACCOUNT_LOCKED (password not even checked),
 * INVALID_CREDENTIALS (unknown login or wrong password: one answer), or, only after a correct
 * password, ACCOUNT_BLOCKED. Returns the account, flagging an expired password.
 */
export async function authenticateLocalPassword(
  scope: LoginScope,
  login: string,
  password: string,
  o: LoginOptions,
): Promise<LoginResult> {
  const { db, config } = scope;
  const now = scope.now();
  const lk = loginKey(login);
  const key = throttleKey(lk);
  const ip = scope.request?.ip;
  const untrusted = attemptPlan(config, key, ip);

  // The check holds a hashing slot from before the attempt is reserved: when the client is refused
  // or shed, its 429 comes before anything is counted (never a failed login). One round trip: reserve
  // an attempt (atomic), read the account and its factors. On the Node host's lazy connection the
  // commit does not wait for the disk (architecture.md §6): atomicity is the same, a crash of the
  // process keeps it, and it reaches the disk within a second. A failure is then committed with an
  // fsync before its answer, which makes this reservation durable too.
  // `claim`: a signed device cookie presented for this login. Its device's own budget first; once that
  // is spent (or refused), the device counts as untrusted (accounts/throttle.ts), in the same statement
  // batch, which reads the row too: the device's budget is reserved only while the row is live. `inLane`:
  // the claim was admitted in the priority lane, its row found live before; then a row no longer live
  // (revoked, another login's) reserves nothing (`notLive`), and the attempt is made again as anonymous.
  // Otherwise a row not live just leaves the untrusted budget.
  const attempt =
    (claim: DeviceClaim | undefined, inLane = false) =>
    async () => {
      const rdb = scope.lazyDb ?? db;
      let plan = untrusted;
      let reserved: boolean;
      let rows: UserRow[];
      let factorRows: Awaited<ReturnType<typeof factorsOfLoginKey>>;
      let known = false;
      if (claim) {
        const byDevice = attemptPlan(config, key, ip, claim.id);
        const live = deviceLive(claim, lk);
        let deviceRows: { id: string }[];
        let mine: { rowsAffected: number };
        let fallback: { rowsAffected: number };
        [mine, fallback, deviceRows, rows, factorRows] = await rdb.batch([
          reserveAttempt(rdb, byDevice, now, live),
          reserveAttempt(rdb, untrusted, now, inLane ? both(live, notReserved(byDevice)) : notReserved(byDevice)),
          trustedDeviceOfLogin(rdb, claim, lk),
          liveLocalUser(rdb, { key: lk }),
          factorsOfLoginKey(rdb, { key: lk }),
        ]);
        if (deviceRows.length === 0 && inLane) return { notLive: true as const };
        known = deviceRows.length > 0;
        if (mine.rowsAffected > 0) plan = byDevice;
        reserved = mine.rowsAffected > 0 || fallback.rowsAffected > 0;
      } else {
        let one: { rowsAffected: number };
        [one, rows, factorRows] = await rdb.batch([
          reserveAttempt(rdb, untrusted, now),
          liveLocalUser(rdb, { key: lk }),
          factorsOfLoginKey(rdb, { key: lk }),
        ]);
        reserved = one.rowsAffected > 0;
      }
      if (!reserved) return { refused: true as const, plan };
      const user = rows[0];
      const ok = await scope.verifier.verify(user?.passwordHash, password);
      // The new hash of an outdated one is made in the same slot; it is stored only after a login.
      const outdated = ok && user?.passwordHash && scope.verifier.needsRehash(user.passwordHash);
      const rehash = outdated ? await scope.verifier.hasher.hash(password) : undefined;
      return { refused: false as const, user, ok, rehash, plan, factorRows, known };
    };
  // A valid device cookie of this login, its row live, takes the priority lane: admitted outside its
  // address's bound, ahead of anonymous attempts (docs/security-admission.md, "Priority lane"). When
  // the attempt would start at once anyway (its address idle, a slot free, nobody waiting), the lane
  // gains nothing and the row is read only in the attempt's batch: two round trips, as without the
  // cookie. Otherwise the row is read before admission (or found kept: laneDevice, accounts/devices.ts),
  // so that only a device found live is admitted in the lane (a cookie of another login, or of a device
  // revoked here, is admitted as anonymous); the attempt's batch reads it again and reserves on the
  // device's budget only while it is still live.
  const ipKey = ip ?? null;
  const claim = o.device;
  let checked: Awaited<ReturnType<ReturnType<typeof attempt>>> | undefined;
  if (claim && scope.verifier.startsAtOnce(ipKey)) {
    checked = await scope.verifier.limit(ipKey, attempt(claim));
  } else if (claim) {
    const live = await laneDevice(scope.db, claim, lk, scope.now(), revocationCheckMs(config));
    checked = await scope.verifier.limit(
      ipKey,
      attempt(live ? claim : undefined, live),
      live ? { trusted: claim.userId } : undefined,
    );
  }
  if (!checked || 'notLive' in checked) checked = await scope.verifier.limit(ipKey, attempt(undefined));
  if ('notLive' in checked) throw new Error('an attempt without a device found a device not live');
  // Locked, throttled, or every attempt of the window is in flight: the password is not checked,
  // so right and wrong passwords get this same answer and the lock is no oracle. Like a wrong
  // password, it makes the address wait behind clean ones for a while (admission.ts).
  if (checked.refused) {
    scope.verifier.noteFailure(ip ?? null);
    throw await lockedProblem(scope, o.challenge, checked.plan);
  }

  const { user, ok, rehash, plan, factorRows, known } = checked;
  const audit = { request: scope.request };
  if (!user || !ok) {
    scope.verifier.noteFailure(ip ?? null);
    throw await failedLogin(scope, o.challenge, plan, login, user ?? null, { source: 'local' });
  }

  // The password is right: from here on the caller may learn the account's state.
  const subject = { id: user.id, login: user.login };
  await assertMayLogIn(scope, user, { source: 'local' }, [...successStatements(db, plan)]);
  const passwordReason = passwordChangeReason(user, config, now) ?? undefined;
  const passwordExpired = passwordReason !== undefined;
  const factors = factorsAmong(factorRows, user.id);
  // A password that must be changed: only a change is allowed. Without a second factor the password
  // proves enough to make it (with Basic); with one, the change needs the second step's session, which
  // may do nothing else (authentication/middleware.ts; docs/security.md, "What ends what").
  if (passwordExpired && factors.length === 0) {
    await db.batch([
      ...successStatements(db, plan),
      auditInsert(db, now, { ...audit, stream: 'user_activity', type: 'login.password_expired', subject }),
    ]);
    return { user, passwordExpired, passwordReason };
  }

  // An account with a second factor: the password step ends here (docs/security-mfa.md); its
  // attempt is released (a right password is no failure), the earlier failures stay counted.
  if (factors.length > 0) {
    const ldb = scope.lazyDb ?? db;
    await ldb.batch([
      releaseAttempt(ldb, plan),
      auditInsert(ldb, now, {
        ...audit,
        stream: 'user_activity',
        type: 'login.second_factor_required',
        subject,
        data: { source: 'local', factors },
      }),
    ]);
    return {
      user,
      passwordExpired,
      ...(passwordReason ? { passwordReason } : {}),
      device: plan.device,
      secondFactor: { factors, plan, known },
    };
  }

  // A success's bookkeeping (the failures forgotten, the last login, its event, a new hash of the
  // same password, and `alsoOnSuccess`: a session login's session) commits in one transaction, also
  // on the lazy connection, in the same order as the reservation: a power
  // failure within the second before it reaches the disk loses the login's record and its
  // reservation together, as if it never happened; failures, locks and refusals keep their fsync.
  const ldb = scope.lazyDb ?? db;
  await runAccountBatch(ldb, [
    ...successStatements(ldb, plan),
    ...loginSuccessStatements(ldb, now, user, { ...audit, data: { source: 'local' }, rehash }),
    ...(o.alsoOnSuccess?.(ldb, user, plan.device, known) ?? []),
  ]);
  return { user: loggedIn(user, now), passwordExpired, device: plan.device };
}

/**
 * Checks the current password of a signed-in local account (PUT /v4/users/me/password) through
 * the same atomic attempt reservation as a login, on the same throttle key: a stolen session or
 * token must not give unthrottled password guesses. Locked: ACCOUNT_LOCKED without checking the
 * password. Wrong: counted (and may lock the account's logins too), 401 INVALID_CREDENTIALS. Right:
 * the failures are forgotten, as after a login.
 */
export async function verifyCurrentPassword(
  scope: LoginScope,
  user: UserRow,
  password: string,
  challenge: string,
): Promise<void> {
  const plan = attemptPlan(scope.config, throttleKey(loginKey(user.login)), scope.request?.ip);
  const reserved = await reserveAttempt(scope.db, plan, scope.now());
  if (reserved.rowsAffected === 0) throw await lockedProblem(scope, challenge, plan);
  if (!(await scope.verifier.verify(user.passwordHash, password))) {
    scope.verifier.noteFailure(scope.request?.ip ?? null);
    await failedLogin(scope, challenge, plan, user.login, user, { source: 'local', via: 'password_change' });
    const headers = { 'WWW-Authenticate': challenge };
    throw new ProblemError('INVALID_CREDENTIALS', { detail: 'the current password is wrong', headers });
  }
  await scope.db.batch([...successStatements(scope.db, plan)]);
}

/**
 * The answer to a refused reservation (the password was not checked), with Retry-After: 429
 * ADDRESS_THROTTLED when the client's address spent its budget, else 401 ACCOUNT_LOCKED.
 */
export async function lockedProblem(scope: Scope, challenge: string, plan: AttemptPlan): Promise<ProblemError> {
  const now = scope.now();
  const refusal = await refusalOf(scope.db, plan, now);
  countLockedAttempt(plan.main.key, refusal.kind === 'address' ? 'throttled' : 'locked');
  const retryAfter = String(Math.max(1, Math.ceil((refusal.until - now) / 1000)));
  if (refusal.kind === 'address') {
    return new ProblemError('ADDRESS_THROTTLED', {
      detail: 'too many failed logins from this address; try again later',
      headers: { 'Retry-After': retryAfter },
    });
  }
  // In flight: another request holds the reservation. Neither answer depends on this request's
  // password, which was not checked: no oracle.
  return new ProblemError('ACCOUNT_LOCKED', {
    detail:
      refusal.kind === 'in-flight'
        ? 'another login attempt for this login is in progress; retry in a moment'
        : 'too many failed logins; try again later',
    headers: { 'WWW-Authenticate': challenge, 'Retry-After': retryAfter },
  });
}

/**
 * Records a wrong password (or unknown login) for `plan`: the reserved attempts stay counted, the
 * main budget locks once its window holds AUTH_FAILED_COUNT of them; the lock, a filled account
 * total and a filled address budget are each audited (restrictions applied) in the same batch
 * (with `also`: an LDAP login's directory-call event). Returns the one 401 answer of every wrong login.
 */
export async function failedLogin(
  scope: Scope,
  challenge: string,
  plan: AttemptPlan,
  login: string,
  user: UserRow | null,
  data: Record<string, unknown>,
  also: AccountBatchItem[] = [],
): Promise<ProblemError> {
  const { db } = scope;
  const now = scope.now();
  const lockUntil = now + plan.main.policy.windowMs;
  const audit = { request: scope.request, stream: 'user_activity' as const, subject: user, subjectLogin: login };
  const restriction = plan.device ? 'device' : 'untrusted-clients';
  const iso = (t: number) => new Date(t).toISOString();
  const [locked, , lockEvent, totalEvent, addressEvent] = await runAccountBatch(db, [
    lockIfExhausted(db, plan, now),
    auditInsert(db, now, {
      ...audit,
      type: 'login.failure',
      data: { ...data, ...(plan.device ? { device: true } : {}) },
    }),
    auditInsertWhen(
      db,
      now,
      { ...audit, type: 'account.locked', data: { ...data, restriction, until: iso(lockUntil) } },
      sql`exists (select 1 from ${loginLocks} where throttle_key = ${plan.main.key} and until = ${lockUntil})`,
    ),
    auditInsertWhen(
      db,
      now,
      {
        ...audit,
        type: 'account.locked',
        data: { ...data, restriction: 'all-clients', until: iso(now + TOTAL_WINDOW_MS) },
      },
      totalJustFilled(plan, now),
    ),
    auditInsertWhen(
      db,
      now,
      {
        request: scope.request,
        stream: 'user_activity',
        type: 'address.throttled',
        data: { ...data, until: iso(now + (plan.address?.policy.windowMs ?? 0)) },
      },
      addressJustFilled(plan, now),
    ),
    ...also,
  ]);
  if (locked.rowsAffected > 0) lockouts.inc([loginMethod(data.source)]);
  if (lockEvent.rowsAffected > 0) restrictions.inc([restriction]);
  if (totalEvent.rowsAffected > 0) restrictions.inc(['all-clients']);
  if (addressEvent.rowsAffected > 0) restrictions.inc(['address']);
  return new ProblemError('INVALID_CREDENTIALS', {
    detail: 'wrong login or password',
    headers: { 'WWW-Authenticate': challenge },
  });
}

/** The 403 of a blocked account (the account rule's). */
export const blocked = blockedProblem;

/**
 * Why a local password must be changed: `initial` (a new account's first password, set by an
 * administrator), `reset` by an administrator, or `expired`.
 */
export type PasswordReason = 'initial' | 'reset' | 'expired';

const PASSWORD_REASON_DETAIL: Record<PasswordReason, string> = {
  initial: 'choose your own password: the one the account was created with is for the first sign-in only',
  reset: 'the password was reset by an administrator: change it',
  expired: 'the password has expired: change it',
};

/**
 * The 403 of a password that must be changed, with `passwordReason` (initial, reset or expired) so
 * that a client tells the user which (a new account's first password is no reset, a reset no expiry).
 */
export function passwordExpiredProblem(reason: PasswordReason = 'expired'): ProblemError {
  return new ProblemError('PASSWORD_EXPIRED', {
    detail: `${PASSWORD_REASON_DETAIL[reason]} (the old password is required)`,
    extensions: { passwordReason: reason },
  });
}
