/**
 * The answers to a directory that refuses an account (schema/bridge/ldap.ts outcomes `disabled`,
 * `password-expired`, `locked-out`), worded as for local accounts: ACCOUNT_BLOCKED and
 * PASSWORD_EXPIRED (the password was right), ACCOUNT_LOCKED (it was not checked).
 */
import type { LdapRefusalReason } from '../../../schema/bridge/index.js';
import { ProblemError } from '../http/problem.js';

const BLOCKED_DETAILS: Record<LdapRefusalReason, string> = {
  'account-disabled': 'the account is disabled in the directory; ask its administrator',
  'locked-out': 'the account is locked out in the directory; ask its administrator',
  'account-expired': 'the account has expired in the directory; ask its administrator',
  'logon-hours': 'the directory does not let this account log in at this time',
  workstation: 'the directory lets this account log in from other workstations only',
};

/** 403 ACCOUNT_BLOCKED of an account the directory refuses although the password is right. */
export function directoryBlockedProblem(reason: LdapRefusalReason | undefined): ProblemError {
  return new ProblemError('ACCOUNT_BLOCKED', {
    detail: reason ? BLOCKED_DETAILS[reason] : 'the directory refuses this account; ask its administrator',
    extensions: { reason: 'directory', ...(reason ? { directoryReason: reason } : {}) },
  });
}

/**
 * 403 PASSWORD_EXPIRED of a directory password that is right but expired or to be changed. This
 * service cannot change it (no `changePassword` link, unlike local accounts): the user changes it
 * in the directory.
 */
export function directoryPasswordExpiredProblem(reason: 'password-expired' | 'must-change'): ProblemError {
  const what =
    reason === 'must-change'
      ? 'the directory requires a new password at the next login'
      : 'the password has expired in the directory';
  return new ProblemError('PASSWORD_EXPIRED', {
    detail: `${what}: change it in the directory (e.g. at a workstation of the domain), then log in again`,
    extensions: { directoryReason: reason },
  });
}

/**
 * 401 ACCOUNT_LOCKED of an account the directory has locked out (AD 775). The directory answers so
 * before checking the password, so right and wrong passwords get this same answer, as for a
 * login locked here; no Retry-After: the directory's lockout lasts as long as it decides.
 */
export function directoryLockedProblem(challenge: string): ProblemError {
  return new ProblemError('ACCOUNT_LOCKED', {
    detail: 'the directory has locked this account after too many failed logins; try later or ask its administrator',
    headers: { 'WWW-Authenticate': challenge },
    extensions: { directoryReason: 'locked-out' },
  });
}
