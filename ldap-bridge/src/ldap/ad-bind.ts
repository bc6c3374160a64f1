/**
 * Active Directory's reasons for refusing a simple bind. AD answers result 49 (invalidCredentials)
 * for all of them and names the reason in the diagnostic message, e.g.
 * `80090308: LdapErr: DSID-0C0903A9, comment: AcceptSecurityContext error, data 533, v1db1`:
 * the `data` value is a Windows error code (the same on Samba AD DC).
 *
 * Which of them prove the password: AD (and Samba, checked in test/http/ad.test.ts) checks the
 * password before it answers 530, 531, 532, 533, 701 or 773 (with a wrong password it answers
 * 52e), so those may tell the account's state; 775 (locked out) comes before any password check,
 * so it says nothing about the password. 525 (no such user) and 52e (wrong password) are wrong
 * credentials, as is any code not listed here.
 */
import type { LdapAuthenticateResponse } from '../../../schema/bridge/index.js';

/** The Windows error codes AD puts after `data` (hexadecimal). */
export const AD_BIND_CODES = {
  NO_SUCH_USER: 0x525,
  WRONG_PASSWORD: 0x52e,
  LOGON_HOURS: 0x530,
  WORKSTATION: 0x531,
  PASSWORD_EXPIRED: 0x532,
  ACCOUNT_DISABLED: 0x533,
  ACCOUNT_EXPIRED: 0x701,
  MUST_CHANGE_PASSWORD: 0x773,
  LOCKED_OUT: 0x775,
} as const;

/** The `data` sub-code of an AD bind refusal's diagnostic message, or null when it has none. */
export function adBindSubCode(message: string): number | null {
  const m = /\bdata ([0-9a-f]{1,8})\b/i.exec(message);
  return m ? Number.parseInt(m[1]!, 16) : null;
}

/** The outcome of an AD bind refused with result 49 and `message` (see the file comment). */
export function adBindOutcome(message: string): LdapAuthenticateResponse {
  switch (adBindSubCode(message)) {
    case AD_BIND_CODES.ACCOUNT_DISABLED:
      return { outcome: 'disabled', reason: 'account-disabled' };
    case AD_BIND_CODES.ACCOUNT_EXPIRED:
      return { outcome: 'disabled', reason: 'account-expired' };
    case AD_BIND_CODES.LOGON_HOURS:
      return { outcome: 'disabled', reason: 'logon-hours' };
    case AD_BIND_CODES.WORKSTATION:
      return { outcome: 'disabled', reason: 'workstation' };
    case AD_BIND_CODES.PASSWORD_EXPIRED:
      return { outcome: 'password-expired', reason: 'password-expired' };
    case AD_BIND_CODES.MUST_CHANGE_PASSWORD:
      return { outcome: 'password-expired', reason: 'must-change' };
    case AD_BIND_CODES.LOCKED_OUT:
      return { outcome: 'locked-out' };
    default:
      // 52e, 525, anything else, or no sub-code: a wrong login or password, counted as such.
      return { outcome: 'invalid-credentials' };
  }
}
