/**
 * Where the mail password may go (docs/mail.md): the LDAP/OIDC rule of
 * http/secret-again.ts for the Mail settings. A change of EMAIL_HOST or EMAIL_PORT, or EMAIL_USE_TLS
 * turned off, needs EMAIL_HOST_PASSWORD in the same request; the environment's password never goes
 * to a server set through the settings API; and credentials never travel without TLS. Checked on
 * each write (PATCH, reset); the mail sender and the bridge refuse a send without TLS too, for
 * settings that come from the environment.
 */
import { REGISTRY, type ConfigSnapshot, type VarName } from '../config/index.js';
import type { FieldError } from '../http/problem.js';
import { secretRequiredAgain } from '../http/secret-again.js';

/** The settings as a write would leave them (or as they are): value and source of each. */
export type SettingsView = Pick<ConfigSnapshot, 'get' | 'source'>;

const DESTINATION = ['EMAIL_HOST', 'EMAIL_PORT', 'EMAIL_USE_TLS'] as const satisfies readonly VarName[];
const MAIL_VARS: readonly VarName[] = [...DESTINATION, 'EMAIL_HOST_USER', 'EMAIL_HOST_PASSWORD'];

/**
 * Whether `v` authenticates to the mail server with a real password: a user and a password set
 * through the settings API or the environment (the registry's placeholder is no secret).
 */
export function mailCredentialsSet(v: SettingsView): boolean {
  return (
    v.get('EMAIL_HOST_USER') !== '' &&
    v.get('EMAIL_HOST_PASSWORD') !== '' &&
    v.get('EMAIL_HOST_PASSWORD') !== REGISTRY.EMAIL_HOST_PASSWORD.default
  );
}

/** Why the mail password would go somewhere new from `before` to `after`. */
function moves(before: SettingsView, after: SettingsView): string[] {
  const reasons: string[] = [];
  if (after.get('EMAIL_HOST') !== before.get('EMAIL_HOST')) reasons.push('EMAIL_HOST changed');
  if (after.get('EMAIL_PORT') !== before.get('EMAIL_PORT')) reasons.push('EMAIL_PORT changed');
  if (before.get('EMAIL_USE_TLS') && !after.get('EMAIL_USE_TLS')) reasons.push('EMAIL_USE_TLS turned off');
  return reasons;
}

/**
 * The refusals of a write that changes `changed` from `before` to `after` (`env`: the values of the
 * environment and defaults). Empty when the write touches no Mail connection setting.
 */
export function mailSecretErrors(
  before: SettingsView,
  after: SettingsView,
  changed: readonly VarName[],
  env: SettingsView,
): FieldError[] {
  if (!changed.some((n) => MAIL_VARS.includes(n))) return [];
  const errors: FieldError[] = [];
  const credentials = mailCredentialsSet(after);
  const again = secretRequiredAgain({
    location: 'json',
    path: 'values.EMAIL_HOST_PASSWORD',
    what: 'mail password',
    reasons: moves(before, after),
    stored: credentials,
    given: changed.includes('EMAIL_HOST_PASSWORD') && after.source('EMAIL_HOST_PASSWORD') === 'ui',
  });
  if (again) errors.push(again);
  // A reset of EMAIL_HOST_PASSWORD brings the environment's password back: only to the environment's server.
  if (credentials && after.source('EMAIL_HOST_PASSWORD') === 'env' && before.source('EMAIL_HOST_PASSWORD') === 'ui') {
    const elsewhere = DESTINATION.filter((n) => after.source(n) === 'ui' && after.get(n) !== env.get(n));
    if (elsewhere.length > 0)
      errors.push({
        location: 'json',
        path: 'values.EMAIL_HOST_PASSWORD',
        message:
          `the environment's password would go to a server set through the settings API (${elsewhere.join(', ')}): ` +
          'reset those first, or set a password',
      });
  }
  if (credentials && !after.get('EMAIL_USE_TLS'))
    errors.push({
      location: 'json',
      path: 'values.EMAIL_USE_TLS',
      message:
        'off while EMAIL_HOST_USER and EMAIL_HOST_PASSWORD are set: credentials are never sent without TLS ' +
        '(an empty EMAIL_HOST_USER sends without authentication)',
    });
  return errors;
}
