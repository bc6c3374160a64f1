/**
 * The migration that keys OIDC identities by issuer: a database holding links made before it
 * (schema/migrations up to 0004) is upgraded with each OIDC link stamped with the issuer of its
 * provider record as it is then, LDAP links keyed as before, and orphaned OIDC links inert.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from '@libsql/client';
import { drizzle } from 'drizzle-orm/libsql';
import { migrate } from 'drizzle-orm/libsql/migrator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_FOLDER } from '../../worker/node/migrate.js';

let dir: string;
let client: Client;

/** The migrations folder as it was up to `lastTag` (a copy whose journal stops there). */
function folderUpTo(lastTag: string): string {
  const copy = join(dir, `migrations-${lastTag}`);
  cpSync(MIGRATIONS_FOLDER, copy, { recursive: true });
  const journalPath = join(copy, 'meta/_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { tag: string }[] };
  const end = journal.entries.findIndex((e) => e.tag === lastTag);
  expect(end).toBeGreaterThanOrEqual(0);
  writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, end + 1) }));
  return copy;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'auth-migration-'));
  client = createClient({ url: `file:${join(dir, 'auth.db')}` });
});

afterAll(() => {
  client?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('migration: identities keyed by issuer', () => {
  it(
    'stamps OIDC links with their record’s issuer, leaves LDAP links keyed as before, and orphaned ' +
      'OIDC links inert',
    async () => {
      const db = drizzle(client);
      await migrate(db, { migrationsFolder: folderUpTo('0004_ldap_servers') });
      const now = Date.now();
      await client.batch([
        {
          sql:
            `insert into users (id, login, login_key, source, created_at, updated_at) values ('u1', 'ann', 'ann', ` +
            `'oidc', ?, ?), ('u2', 'ben', 'ben', 'local', ?, ?), ('u3', 'cy', 'cy', 'ldap', ?, ?), ('u4', 'dee', ` +
            `'dee', 'oidc', ?, ?)`,
          args: [now, now, now, now, now, now, now, now],
        },
        {
          sql:
            `insert into identity_providers (name, issuer, client_id, client_secret_enc, created_at, updated_at) ` +
            `values ('sso', 'https://idp.example', 'c', 'x', ?, ?)`,
          args: [now, now],
        },
        {
          sql: `insert into user_identities (id, user_id, source, source_name, external_id, created_at) values
          ('i1', 'u1', 'oidc', 'sso', 'sub-ann', ?), ('i2', 'u2', 'oidc', 'sso', 'sub-ben', ?),
          ('i3', 'u3', 'ldap', 'corp', 'uuid-cy', ?), ('i4', 'u4', 'oidc', 'gone', 'sub-dee', ?)`,
          args: [now, now, now, now],
        },
      ]);

      await migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
      const rows = await client.execute(
        'select id, source, source_name, issuer, external_id from user_identities order by id',
      );
      expect(rows.rows.map((r) => [r.id, r.issuer])).toEqual([
        ['i1', 'https://idp.example'],
        ['i2', 'https://idp.example'],
        ['i3', ''],
        ['i4', ''],
      ]);
      // The new key: the same subject under another issuer is another identity; the same key twice is refused.
      await client.execute({
        sql:
          `insert into user_identities (id, user_id, source, source_name, issuer, external_id, created_at) values ` +
          `('i5', 'u1', 'oidc', 'sso', 'https://other.example', 'sub-ann', ?)`,
        args: [now],
      });
      await expect(
        client.execute({
          sql:
            `insert into user_identities (id, user_id, source, source_name, issuer, external_id, created_at) values ` +
            `('i6', 'u2', 'oidc', 'sso', 'https://idp.example', 'sub-ann', ?)`,
          args: [now],
        }),
      ).rejects.toThrow(/UNIQUE/);
    },
  );
});
