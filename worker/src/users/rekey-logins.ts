/** Re-keys stored logins when the login key function changes (run after the migrations). */
import { setLoginKey } from '../accounts/account-writes.js';
import { sql } from 'drizzle-orm';
import type { Db } from '../store/index.js';
import { loginReservations, users } from '../../../schema/index.js';
import { loginKey } from '../accounts/login-name.js';
import { isUniqueViolation } from '../store/unique-violation.js';

/**
 * Recomputes the stored keys of non-ASCII logins after the key function changed (ASCII keys never
 * change). Runs after the migrations; a key another live account already holds is left as it was
 * and returned, for an administrator to resolve (rename or delete one of the two).
 */
export async function rekeyLogins(db: Db): Promise<string[]> {
  const conflicts: string[] = [];
  const nonAscii = sql`glob '*[^ -~]*'`;
  const rows = await db
    .select({ id: users.id, login: users.login, key: users.loginKey })
    .from(users)
    .where(sql`${users.loginKey} ${nonAscii}`);
  for (const row of rows) {
    const key = loginKey(row.login);
    if (key === row.key) continue;
    try {
      // The skeleton follows the key: filled again by the backfill (login-skeletons.ts), which runs after the start.
      await setLoginKey(db, row.id, key);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      conflicts.push(row.login);
    }
  }
  const reserved = await db.select().from(loginReservations).where(sql`${loginReservations.loginKey} ${nonAscii}`);
  for (const r of reserved) {
    const key = loginKey(r.loginKey);
    if (key === r.loginKey) continue;
    await db.batch([
      db.run(sql`insert into ${loginReservations} (login_key, until) values (${key}, ${r.until})
                 on conflict (login_key) do update set until = max(until, excluded.until), skeleton = null`),
      db.delete(loginReservations).where(sql`${loginReservations.loginKey} = ${r.loginKey}`),
    ]);
  }
  return conflicts;
}
