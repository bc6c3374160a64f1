/**
 * The first administrator (DESIGN.md §1): created from AUTH_BOOTSTRAP_ADMIN_LOGIN and
 * AUTH_BOOTSTRAP_ADMIN_PASSWORD only while no live administrator exists. The password must pass
 * the password policy, the login the login rule of every account. No default password anywhere.
 */
import { and, eq, isNull } from 'drizzle-orm';
import { auditInsert } from '../audit/events.js';
import { checkPassword, passwordPolicy } from '../auth/password-policy.js';
import type { PasswordHasher } from '../auth/password-hash/index.js';
import type { ConfigSnapshot } from '../config/index.js';
import type { Db } from '../store/index.js';
import { users } from '../../../schema/index.js';
import { loginViolation, normaliseLogin } from './login-name.js';
import { createLocalUser } from './store.js';

export type BootstrapResult = 'created' | 'admin-exists' | 'not-configured';

/** Creates the first admin when none exists; throws naming what is wrong with the variables. */
export async function bootstrapAdmin(db: Db, config: ConfigSnapshot, hasher: PasswordHasher, now: number): Promise<BootstrapResult> {
  const login = normaliseLogin(config.get('AUTH_BOOTSTRAP_ADMIN_LOGIN').trim());
  const password = config.get('AUTH_BOOTSTRAP_ADMIN_PASSWORD');
  const admins = await db.select({ id: users.id }).from(users).where(and(eq(users.role, 'admin'), isNull(users.deletedAt))).limit(1);
  if (admins.length > 0) return 'admin-exists';
  if (login === '' && password === '') return 'not-configured';
  if (login === '' || password === '') throw new Error('set both AUTH_BOOTSTRAP_ADMIN_LOGIN and AUTH_BOOTSTRAP_ADMIN_PASSWORD to create the first administrator');
  const badLogin = loginViolation(login);
  if (badLogin) throw new Error(`AUTH_BOOTSTRAP_ADMIN_LOGIN does not pass the login rule: ${badLogin}`);
  const violations = checkPassword(password, passwordPolicy(config));
  if (violations.length > 0) {
    throw new Error(`AUTH_BOOTSTRAP_ADMIN_PASSWORD does not pass the password policy: ${violations.map((v) => v.message).join('; ')}`);
  }
  const user = await createLocalUser(db, {
    login,
    displayName: login,
    role: 'admin',
    passwordHash: await hasher.hash(password),
    now,
    extra: (created) => [auditInsert(db, now, { stream: 'crud_admin', type: 'user.created', subject: created, data: { role: 'admin', via: 'bootstrap' } })],
  });
  return user ? 'created' : 'admin-exists';
}
