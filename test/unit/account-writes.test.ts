/**
 * accounts/ is the only writer of the credential tables (architecture.md §6): no file of worker/src
 * outside accounts/ inserts, updates or deletes rows of `users`, `sessions`, `api_tokens`,
 * `password_history`, the second factors (`mfa_totp`, `mfa_recovery_codes`, `mfa_pending_uses`,
 * `passkeys`, `passkey_challenges_used`), the device cookies' `devices` or the group memberships'
 * `group_members` (through drizzle or raw SQL),
 * or builds an AccountWrite (which would skip nothing, but names accounts a reviewer cannot see); so
 * every such write invalidates the credential cache for its account, and every change of a credential
 * and its consequences (sessions ended, the audit event) is one batch built in one place. The scanner
 * is tested on planted bypasses first.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { matchesAcrossLines, sourceFiles } from '../harness/source-scan.js';

const ROOT = join(import.meta.dirname, '../../worker/src');
const TABLES = {
  users: 'users',
  sessions: 'sessions',
  apiTokens: 'api_tokens',
  passwordHistory: 'password_history',
  mfaTotp: 'mfa_totp',
  mfaRecoveryCodes: 'mfa_recovery_codes',
  mfaPendingUses: 'mfa_pending_uses',
  passkeys: 'passkeys',
  passkeyChallengesUsed: 'passkey_challenges_used',
  devices: 'devices',
  groupMembers: 'group_members',
};
const idents = Object.keys(TABLES).join('|');
const names = Object.values(TABLES).join('|');

const WRITE_VERB = '(insert\\s+(or\\s+\\w+\\s+)?into|replace\\s+into|update|delete\\s+from)';

const PATTERNS: RegExp[] = [
  // drizzle: db.insert(users), tx.update(schema.sessions), .delete(\n apiTokens)
  new RegExp(`\\.(insert|update|delete)\\(\\s*(schema\\.)?(${idents})\\s*,?\\s*\\)`),
  // raw SQL through a template: insert into ${users}, update ${sessions}, delete from ${apiTokens}
  new RegExp(`\\b${WRITE_VERB}\\s+\\$\\{\\s*(schema\\.)?(${idents})\\s*\\}`, 'i'),
  // raw SQL by name: insert into users, update "sessions" set, delete from api_tokens
  new RegExp(`\\b(insert\\s+(or\\s+\\w+\\s+)?into|replace\\s+into|delete\\s+from)\\s+["\`]?(${names})\\b`, 'i'),
  new RegExp(`\\bupdate\\s+["\`]?(${names})["\`]?\\s+set\\b`, 'i'),
  // an AccountWrite built outside accounts/
  /\b(accountWrite\s*\(|new\s+AccountWrite\b|AccountWrite\.statementOf)/,
];

/** What the scanner finds in `source`. */
const credentialWrites = (source: string) => matchesAcrossLines(source, PATTERNS);

describe('accounts/ is the only writer of the credential tables', () => {
  it('the scanner finds planted bypasses, in every form', () => {
    const planted = [
      'await db.update(users).set({ status: "blocked" }).where(eq(users.id, id));',
      'db\n  .delete(\n    sessions,\n  )\n  .where(x)',
      'scope.db.insert(schema.apiTokens).values(row)',
      'db.insert(passwordHistory).values(row)',
      `db.run(sql\`update \${users} set role = \${role}\`)`,
      `db.run(sql\`delete from \${apiTokens} where user_id = \${id}\`)`,
      "client.execute('UPDATE \"users\" SET status = ?', ['blocked'])",
      "client.execute('delete from sessions where user_id = ?')",
      "client.execute('insert or replace into api_tokens values (?)')",
      'await runAccountBatch(db, [accountWrite(id, db.run(x))])',
      'db\n  .insert(mfaTotp)\n  .values(row)\n  .onConflictDoUpdate(x)',
      'db.delete(schema.mfaRecoveryCodes).where(x)',
      'db.insert(mfaPendingUses).values(row)',
      'scope.db.update(passkeys).set({ counter }).where(x)',
      'db.insert(passkeyChallengesUsed).values(row)',
      'db.update(devices).set({ lastUsedAt: now })',
      `db.run(sql\`delete from \${passkeys} where user_id = \${id}\`)`,
      "client.execute('DELETE FROM mfa_totp WHERE user_id = ?')",
      'client.execute(\'update "devices" set last_used_at = ?\')',
      "client.execute('insert into passkey_challenges_used values (?)')",
    ];
    for (const code of planted) expect(credentialWrites(code), code).not.toEqual([]);
    const reads = [
      'db.select().from(users).where(eq(users.id, id))',
      `sql\`exists (select 1 from \${users} where id = \${id})\``,
      'db.update(userIdentities).set(x)',
      'db.delete(auditOutbox).where(x)',
      'db.select().from(passkeys).where(eq(passkeys.userId, id))',
      `sql\`(select 'device:' || id from \${devices} where user_id = \${id})\``,
      '// update the user row through accounts/',
      'endSessionsStatement(db, user.id, now, "admin")',
    ];
    for (const code of reads) expect(credentialWrites(code), code).toEqual([]);
  });

  it('no file outside accounts/ writes a credential, second-factor or device table', () => {
    const found = sourceFiles(ROOT)
      .filter((f) => !relative(ROOT, f).startsWith('accounts/'))
      .flatMap((f) => credentialWrites(readFileSync(f, 'utf8')).map((w) => `${relative(ROOT, f)}: ${w}`));
    expect(found).toEqual([]);
  });
});
