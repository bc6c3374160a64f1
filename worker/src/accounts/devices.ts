/**
 * The rows of device cookies (architecture.md §4, "Device cookies"; the cookie itself is
 * sessions/device-cookie.ts's): a successful session login touches its device or adds one. Rows end
 * with a password change or reset, a block and "sign out everywhere" (revokeDevicesStatement,
 * accounts/sessions.ts), and after DEVICE_COOKIE_MS unused (accounts/throttle.ts).
 */
import { and, eq, exists, sql, type SQLWrapper } from 'drizzle-orm';
import { auditInsert } from '../audit/events.js';
import type { RequestMeta } from '../http/scope.js';
import { CredentialCache } from '../store/credential-cache.js';
import { reusableStatement, type Db } from '../store/index.js';
import { devices, users } from '../../../schema/index.js';
import type { UserRow } from './model.js';
import type { SessionRow } from './sessions.js';
import { devicesOfAccount } from './writes.js';
import { liveAccounts } from './live.js';
import { reservationCondition, type ConditionValues } from './throttle.js';

/** A device cookie whose signature was verified (sessions/device-cookie.ts): still to be checked against its row. */
export interface DeviceClaim {
  id: string;
  userId: string;
}

/**
 * The device of a presented device cookie, when it is still a device of the live local account of
 * login key `lk` (not revoked, not another login's): then the attempt uses the device's own budget.
 */
export async function trustedDevice(db: Db, claim: DeviceClaim | undefined, lk: string): Promise<string | undefined> {
  if (!claim) return undefined;
  const rows = await trustedDeviceOfLogin(db, claim, lk);
  return rows[0]?.id;
}

/**
 * The query of `trustedDevice`, also for a batch: at most one row, when the claim's device is live and its
 * account a live local account, of login key `lk` when given (without it, the caller compares the account).
 */
export function trustedDeviceQuery(db: Db, claim: DeviceClaim, lk?: string) {
  return trustedDeviceSelect(db, claim.id, claim.userId, lk);
}

/** trustedDeviceQuery's statement, of values or of a statement's placeholders. */
function trustedDeviceSelect(db: Db, id: string | SQLWrapper, userId: string | SQLWrapper, lk?: string | SQLWrapper) {
  return db
    .select({ id: devices.id })
    .from(devices)
    .innerJoin(users, eq(users.id, devices.userId))
    .where(
      and(
        eq(devices.id, id),
        eq(devices.userId, userId),
        lk === undefined ? undefined : eq(users.loginKey, lk),
        liveAccounts,
        eq(users.source, 'local'),
      ),
    )
    .limit(1);
}

const DEVICE_NAMES = ['deviceId', 'deviceUser', 'deviceKey'] as const;
const deviceValues = (claim: DeviceClaim, lk: string) => ({
  deviceId: claim.id,
  deviceUser: claim.userId,
  deviceKey: lk,
});

const trustedDeviceBuilt = reusableStatement(
  (db, p) => trustedDeviceSelect(db, p.deviceId, p.deviceUser, p.deviceKey),
  DEVICE_NAMES,
);

/** trustedDeviceQuery of a login key, built once (a login's batch; architecture.md §6, "Statements built once"). */
export const trustedDeviceOfLogin = (db: Db, claim: DeviceClaim, lk: string) =>
  trustedDeviceBuilt(db, deviceValues(claim, lk));

/** A reservation's condition: the claim's device is a live device of the live local account of `lk`. */
const DEVICE_LIVE = reservationCondition(DEVICE_NAMES, (db, p) =>
  exists(trustedDeviceSelect(db, p.deviceId, p.deviceUser, p.deviceKey)),
);
export const deviceLive = (claim: DeviceClaim, lk: string): ConditionValues => ({
  condition: DEVICE_LIVE,
  values: deviceValues(claim, lk),
});

// The priority lane's check of a presented device cookie (auth/password-login.ts), kept like a session's
// lookup (store/credential-cache.ts): a warm device-cookie login makes no round trip for it. A device
// revoked here drops it at once (the revoking write invalidates devicesOfAccount; the account's other
// writes, as a login's new session, do not); one revoked on another instance keeps the lane for at most
// AUTH_REVOCATION_CHECK_SEC, and no more than the lane: the attempt's batch reads the row again and,
// finding it not live, reserves nothing, so the attempt is admitted again as anonymous (architecture.md
// §6, "A login with a device cookie").
const laneCache = new CredentialCache<DeviceClaim>(undefined, undefined, (d) => devicesOfAccount(d.userId));

/**
 * Whether `claim` names a live device of the live local account of `lk`: read at most every `recheckMs`
 * (AUTH_REVOCATION_CHECK_SEC) in this process, and at once after a write that ends the account's devices.
 */
export async function laneDevice(
  db: Db,
  claim: DeviceClaim,
  lk: string,
  now: number,
  recheckMs: number,
): Promise<boolean> {
  const found = await laneCache.get(
    `${claim.id} ${claim.userId} ${lk}`,
    now,
    () => true,
    async () => ((await trustedDevice(db, claim, lk)) === undefined ? undefined : claim),
    recheckMs,
  );
  return found !== undefined;
}

// A session login's device statements, built once.
const touchDevice = reusableStatement(
  (db, p) =>
    db
      .update(devices)
      .set({ lastUsedAt: sql`${p.now}` })
      .where(eq(devices.id, p.id)),
  ['id', 'now'],
);
const insertDevice = reusableStatement(
  (db, p) => db.insert(devices).values({ id: p.id, userId: p.userId, createdAt: p.now, lastUsedAt: p.now }),
  ['id', 'userId', 'now'],
);

/**
 * The writes of a successful session login for its device, to join the login's batch: the device it
 * presented is touched; a client without one gets a new device. `added`: the client presented no valid
 * cookie of a live device of the account at all, so the login comes from a new device: its
 * `device.added` event (the new-device mail, architecture.md §4) joins the writes. Returns the device
 * id for the cookie.
 */
export function deviceWrites(
  db: Db,
  user: UserRow,
  device: string | undefined,
  now: number,
  added?: { request: RequestMeta; via: SessionRow['kind'] },
) {
  if (device) return { id: device, writes: [touchDevice(db, { id: device, now })] };
  const id = crypto.randomUUID();
  const insert = insertDevice(db, { id, userId: user.id, now });
  if (!added) return { id, writes: [insert] };
  const subject = { id: user.id, login: user.login };
  const event = { stream: 'user_activity', type: 'device.added', subject, request: added.request } as const;
  return { id, writes: [insert, auditInsert(db, now, { ...event, data: { via: added.via } })] };
}
