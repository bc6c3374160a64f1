import { InvalidCredentialsError } from 'ldapts';
import { describe, expect, it } from 'vitest';
import { LdapAuthenticateResponseSchema } from '../../../schema/bridge/index.js';
import { adBindOutcome, adBindSubCode } from './ad-bind.js';

/** The message ldapts makes of a result-49 bind answer with AD's diagnostic message. */
const refusal = (data: string, dsid = 'DSID-0C0903A9', version = 'v1db1') => {
  const diagnostic = `80090308: LdapErr: ${dsid}, comment: AcceptSecurityContext error, data ${data}, ${version}`;
  return new InvalidCredentialsError(diagnostic).message;
};

describe('AD bind sub-codes', () => {
  it('reads the data sub-code of the messages Samba AD DC and Windows send (as ldapts passes them on)', () => {
    // Exactly as observed from Samba 4.17 through ldapts (see test/http/ad.test.ts).
    expect(refusal('533')).toBe(
      '80090308: LdapErr: DSID-0C0903A9, comment: AcceptSecurityContext error, data 533, v1db1 Code: 0x31',
    );
    expect(adBindSubCode(refusal('533'))).toBe(0x533);
    expect(adBindSubCode(refusal('52e', 'DSID-0C09042A', 'v3839'))).toBe(0x52e);
    expect(adBindSubCode(refusal('52E'))).toBe(0x52e);
    expect(adBindSubCode(refusal('00000775'))).toBe(0x775);
    expect(adBindSubCode(new InvalidCredentialsError().message)).toBeNull();
    expect(adBindSubCode(new InvalidCredentialsError('').message)).toBeNull();
    expect(adBindSubCode('invalid metadata 533')).toBeNull();
  });

  it('maps each sub-code to the outcome the worker answers (docs/ldap.md, "Active Directory")', () => {
    const cases: [string, unknown][] = [
      ['533', { outcome: 'disabled', reason: 'account-disabled' }],
      ['701', { outcome: 'disabled', reason: 'account-expired' }],
      ['530', { outcome: 'disabled', reason: 'logon-hours' }],
      ['531', { outcome: 'disabled', reason: 'workstation' }],
      ['532', { outcome: 'password-expired', reason: 'password-expired' }],
      ['773', { outcome: 'password-expired', reason: 'must-change' }],
      ['775', { outcome: 'locked-out' }],
      ['52e', { outcome: 'invalid-credentials' }],
      ['525', { outcome: 'invalid-credentials' }],
      // Codes not listed (e.g. 568: too many security IDs) stay wrong credentials.
      ['568', { outcome: 'invalid-credentials' }],
    ];
    for (const [data, outcome] of cases) {
      const got = adBindOutcome(refusal(data));
      expect(got, data).toEqual(outcome);
      // Every answer is inside the bridge contract the worker parses.
      expect(LdapAuthenticateResponseSchema.safeParse(got).success, data).toBe(true);
    }
    expect(adBindOutcome(new InvalidCredentialsError().message)).toEqual({ outcome: 'invalid-credentials' });
  });
});
