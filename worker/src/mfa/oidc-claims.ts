/**
 * Whether an OIDC login counts as two-factor (docs/security-mfa.md, "OIDC logins"): only for a
 * provider record with trustMfaClaims, when its ID token's `amr` names a multi-factor method or its
 * `acr` is one of the record's acceptedAcr.
 */
import type { identityProviders } from '../../../schema/index.js';

/**
 * The `amr` values (RFC 8176 §2) that prove more than a password: `mfa` itself, and the possession
 * and biometric methods a provider lists beside the password (`pwd`) it asked for.
 */
export const MULTI_FACTOR_AMR: readonly string[] = [
  'mfa',
  'otp',
  'hwk',
  'swk',
  'sc',
  'sms',
  'tel',
  'fpt',
  'face',
  'iris',
  'retina',
  'vbm',
];

type Provider = Pick<typeof identityProviders.$inferSelect, 'trustMfaClaims' | 'acceptedAcr'>;

/** Whether the ID token `claims` prove a second factor for `provider`; which claim did (for the audit). */
export function multiFactorOfClaims(provider: Provider, claims: Record<string, unknown>): string | undefined {
  if (!provider.trustMfaClaims) return undefined;
  const amr = Array.isArray(claims.amr) ? claims.amr.filter((v): v is string => typeof v === 'string') : [];
  const hit = amr.find((v) => MULTI_FACTOR_AMR.includes(v));
  if (hit !== undefined) return `amr:${hit}`;
  const acr = typeof claims.acr === 'string' ? claims.acr : undefined;
  if (acr !== undefined && provider.acceptedAcr.includes(acr)) return `acr:${acr}`;
  return undefined;
}
