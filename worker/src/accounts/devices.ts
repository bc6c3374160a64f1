/**
 * The rows of device cookies (architecture.md §4, "Device cookies"; the cookie itself is
 * sessions/device-cookie.ts's): a successful session login touches its device or adds one. Rows end
 * with a password change or reset, a block and "sign out everywhere" (revokeDevicesStatement,
 * accounts/sessions.ts), and after DEVICE_COOKIE_MS unused (accounts/throttle.ts).
 */
import { eq } from 'drizzle-orm';
import { auditInsert } from '../audit/events.js';
import type { RequestMeta } from '../http/scope.js';
import type { Db } from '../store/index.js';
import { devices } from '../../../schema/index.js';
import type { UserRow } from './model.js';
import type { SessionRow } from './sessions.js';

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
  if (device) {
    return { id: device, writes: [db.update(devices).set({ lastUsedAt: now }).where(eq(devices.id, device))] };
  }
  const id = crypto.randomUUID();
  const insert = db.insert(devices).values({ id, userId: user.id, createdAt: now, lastUsedAt: now });
  if (!added) return { id, writes: [insert] };
  const subject = { id: user.id, login: user.login };
  const event = { stream: 'user_activity', type: 'device.added', subject, request: added.request } as const;
  return { id, writes: [insert, auditInsert(db, now, { ...event, data: { via: added.via } })] };
}
