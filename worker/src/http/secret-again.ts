/**
 * The rule every stored secret follows (docs/ldap.md and docs/mail.md): a change that would
 * send a stored secret somewhere it did not go before (another server, the clear, another CA) must
 * carry the secret again in the same request, or whoever may edit the record or setting could point
 * it at their own server and read a secret that is "never returned". Used by the LDAP server and
 * identity-provider records and by the Mail settings.
 */
import { ProblemError, type FieldError } from './problem.js';

export interface SecretMove {
  /** Where the secret's field is (body, json) and its path there (bindPassword, values.EMAIL_HOST_PASSWORD). */
  location: string;
  path: string;
  /** The secret in words: "service password". */
  what: string;
  /** Why the change moves it ("urls names a new server"); empty: it goes nowhere new. */
  reasons: readonly string[];
  /** Whether a secret is stored (or otherwise in force) that would follow the change. */
  stored: boolean;
  /** Whether the request gives the secret again. */
  given: boolean;
}

/** The field error when the change moves a stored secret that the request does not give again; else null. */
export function secretRequiredAgain(m: SecretMove): FieldError | null {
  if (m.given || !m.stored || m.reasons.length === 0) return null;
  const message = `required again when the stored ${m.what} would go somewhere new (${m.reasons.join(', ')})`;
  return { location: m.location, path: m.path, message };
}

/** 422 VALIDATION naming the secret's field when `secretRequiredAgain` finds one; nothing changes then. */
export function assertSecretGivenAgain(m: SecretMove): void {
  const error = secretRequiredAgain(m);
  if (error)
    throw new ProblemError('VALIDATION', {
      detail: `${error.path}: ${error.message}`,
      extensions: { errors: [error] },
    });
}
