/**
 * Device cookies (architecture.md §4, "Device cookies"; OWASP "Slow Down Online Guessing Attacks
 * with Device Cookies"): a successful session login gives the browser `__Host-auth_device` (plain
 * `auth_device` over http://, as the session cookie drops its prefix), a token signed with the
 * session keys (rotation as for sessions) holding the account's id and a random device id. A
 * login that presents it, for that login, while the device's row lives, uses the device's own
 * failure budget: others' failures do not restrict it, and its password check is admitted in the
 * priority lane, ahead of anonymous attempts and outside its address's bound (docs/security-admission.md).
 * It is never a session: it proves nothing without the password. Its rows are written by accounts/devices.ts.
 */
import type { Context } from 'hono';
import type { DeviceClaim } from '../accounts/devices.js';
import { DEVICE_COOKIE_MS } from '../accounts/throttle.js';
import type { AppEnv } from '../http/context.js';
import { readHostCookie, setHostCookie } from '../http/cookies.js';
import type { RequestScope } from '../http/scope.js';
import { signClaims, verifyClaims } from '../accounts/session-keys.js';

/** The cookie's base name (`__Host-` prefixed over HTTPS). */
export const DEVICE_COOKIE = 'auth_device';
const DEVICE_AUDIENCE = 'auth-device';

/** The device cookie of the request, when its signature, audience and expiry are valid. */
export async function readDeviceClaim(c: Context<AppEnv>): Promise<DeviceClaim | undefined> {
  const token = readHostCookie(c, DEVICE_COOKIE);
  if (!token) return undefined;
  const scope = c.var.scope;
  const claims = await verifyClaims(await scope.sessionKeys(), token, DEVICE_AUDIENCE, scope.now());
  if (!claims || typeof claims.did !== 'string' || typeof claims.sub !== 'string') return undefined;
  return { id: claims.did, userId: claims.sub };
}

/** Sets (or renews) the device cookie of `deviceId` for the account `userId`. */
export async function setDeviceCookie(c: Context<AppEnv>, scope: RequestScope, userId: string, deviceId: string) {
  const expiresAt = scope.now() + DEVICE_COOKIE_MS;
  const token = await signClaims(await scope.sessionKeys(), { sub: userId, did: deviceId }, expiresAt, DEVICE_AUDIENCE);
  setHostCookie(c, DEVICE_COOKIE, token, expiresAt);
}
