/**
 * The first administrator (architecture.md §4): created from AUTH_BOOTSTRAP_ADMIN_LOGIN and
 * AUTH_BOOTSTRAP_ADMIN_PASSWORD only while no live administrator exists. The password must pass
 * the password policy (its blocklist rules included), the login the login rule of every account. No default password
 * anywhere.
 */
import { auditInsert } from '../audit/events.js';
import { passwordBlocklist } from '../passwords/blocklist/index.js';
import { checkPassword, passwordPolicy } from '../passwords/policy.js';
import type { PasswordHasher } from '../passwords/hash/index.js';
import type { ConfigSnapshot } from '../config/index.js';
import type { Db } from '../store/index.js';
import { loginViolation, normaliseLogin } from '../accounts/login-name.js';
import { adminExists } from '../accounts/lookup.js';
import { createLocalUser } from './create.js';

export type BootstrapResult = 'created' | 'admin-exists' | 'not-configured';

/** Creates the first admin when none exists; throws naming what is wrong with the variables. */
export async function bootstrapAdmin(
  db: Db,
  config: ConfigSnapshot,
  hasher: PasswordHasher,
  now: number,
): Promise<BootstrapResult> {
  const login = normaliseLogin(config.get('AUTH_BOOTSTRAP_ADMIN_LOGIN').trim());
  const password = config.get('AUTH_BOOTSTRAP_ADMIN_PASSWORD');
  if (await adminExists(db)) return 'admin-exists';
  if (login === '' && password === '') return 'not-configured';
  if (login === '' || password === '')
    throw new Error(
      'set both AUTH_BOOTSTRAP_ADMIN_LOGIN and AUTH_BOOTSTRAP_ADMIN_PASSWORD to create the first administrator',
    );
  const badLogin = loginViolation(login);
  if (badLogin) throw new Error(`AUTH_BOOTSTRAP_ADMIN_LOGIN does not pass the login rule: ${badLogin}`);
  const violations = checkPassword(password, passwordPolicy(config), { login, blocklist: passwordBlocklist });
  if (violations.length > 0) {
    throw new Error(
      `AUTH_BOOTSTRAP_ADMIN_PASSWORD does not pass the password policy: ${violations.map((v) => v.message).join('; ')}`,
    );
  }
  const user = await createLocalUser(db, {
    login,
    displayName: login,
    role: 'admin',
    passwordHash: await hasher.hash(password),
    now,
    extra: (created) => [
      auditInsert(db, now, {
        stream: 'crud_admin',
        type: 'user.created',
        subject: created,
        data: { role: 'admin', via: 'bootstrap' },
      }),
    ],
  });
  return user ? 'created' : 'admin-exists';
}

/** The path of the first-run page below ROOT_PATH (offered while no administrator exists). */
export const FIRST_RUN_PATH = '/first-run';

/**
 * What a host says once at start about the first administrator: that it was created, that the
 * bootstrap variables are ignored because an administrator exists (so a changed password is not
 * silently dropped), or how to get one. `firstRunUrl` is the first-run page, when the host offers it.
 */
export function bootstrapNotice(
  result: BootstrapResult,
  config: ConfigSnapshot,
  firstRun?: { url: string; code: string },
): { level: 'INFO' | 'WARNING'; msg: string } | undefined {
  const login = config.get('AUTH_BOOTSTRAP_ADMIN_LOGIN').trim();
  if (result === 'created') return { level: 'INFO', msg: `created the first administrator "${login}"` };
  if (result === 'admin-exists') {
    if (login === '' && config.get('AUTH_BOOTSTRAP_ADMIN_PASSWORD') === '') return undefined;
    return {
      level: 'WARNING',
      msg:
        'an administrator exists, so AUTH_BOOTSTRAP_ADMIN_LOGIN and AUTH_BOOTSTRAP_ADMIN_PASSWORD are ignored (they ' +
        'only create the first one). For a locked-out or forgotten administrator: npm run ops -- unlock <login>, ' +
        'or npm run ops -- reset-password <login>',
    };
  }
  const page = firstRun
    ? `open ${firstRun.url} in a browser on this machine and enter the one-time code ${firstRun.code}, or `
    : '';
  return {
    level: 'WARNING',
    msg:
      `no administrator exists yet: ${page}set AUTH_BOOTSTRAP_ADMIN_LOGIN and AUTH_BOOTSTRAP_ADMIN_PASSWORD ` +
      'and restart, or run npm run ops -- create-admin <login>',
  };
}
