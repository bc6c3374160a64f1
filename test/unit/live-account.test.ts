/**
 * A live account (not deleted) and an active one (live, not blocked) are said once, in SQL, by
 * `worker/src/accounts/live.ts` (docs/architecture.md §2, "accounts/"): no other file of worker/src writes
 * the condition by hand, in drizzle (`isNull(users.deletedAt)`, `eq(users.status, 'active')`) or in a `sql`
 * template (`deleted_at is null`, `status = 'active'`), so a change of what "live" means is made in one place.
 * The scanner is tested on planted copies first.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { matchesAcrossLines, sourceFiles } from '../harness/source-scan.js';

const ROOT = join(import.meta.dirname, '../../worker/src');
const DEFINITION = 'accounts/live.ts';

const PATTERNS: RegExp[] = [
  // drizzle: isNull(users.deletedAt), isNull(other.deletedAt), isNull(schema.users.deletedAt)
  /\bisNull\(\s*[\w.]*\bdeletedAt\s*\)/,
  // drizzle: eq(users.status, 'active'), ne(u.status, "active")
  /\b(eq|ne)\(\s*[\w.]*\bstatus\s*,\s*['"`]active['"`]\s*\)/,
  // raw SQL: deleted_at is null, "users"."deleted_at" IS NULL, ${users.deletedAt} is null
  /(\bdeleted_at["`]?|\$\{\s*[\w.]*\bdeletedAt\s*\})\s+is\s+(not\s+)?null\b/i,
  // raw SQL: status = 'active', other.status <> 'active', ${users.status} = 'active'
  /(\bstatus["`]?|\$\{\s*[\w.]*\bstatus\s*\})\s*(=|==|<>|!=)\s*'active'/i,
];

/** What the scanner finds in `source`. */
const handWritten = (source: string) => matchesAcrossLines(source, PATTERNS);

describe('one definition of a live and of an active account', () => {
  it('the scanner finds planted copies, in every form', () => {
    const planted = [
      '.where(and(eq(users.id, id), isNull(users.deletedAt)))',
      'and(\n  isNull(\n    users.deletedAt\n  ),\n  x)',
      'isNull(other.deletedAt)',
      "and(eq(users.status, 'active'), x)",
      'eq(users.status,\n "active")',
      `sql\`select 1 from \${users} where deleted_at is null\``,
      `sql\`select 1 from \${users} where deleted_at IS NULL and status = 'active'\``,
      `sql\`where \${users.deletedAt} is null\``,
      `sql\`where \${users.status} = 'active'\``,
      'client.execute(\'select * from users where "deleted_at" is null\')',
      `client.execute("select * from users u where u.status <> 'active'")`,
    ];
    for (const code of planted) expect(handWritten(code), code).not.toEqual([]);
    const others = [
      '.where(and(eq(users.id, id), liveAccounts))',
      `sql\`not exists (select 1 from \${users} where role = 'admin' and \${liveAccounts})\``,
      'q.status ? eq(users.status, q.status) : undefined',
      'isNull(sessions.revokedAt)',
      "if (user.status !== 'active') throw blocked();",
      'deletedAt: null,',
      "eq(jobs.state, 'active')",
    ];
    for (const code of others) expect(handWritten(code), code).toEqual([]);
  });

  it(`no file of worker/src but ${DEFINITION} writes the condition by hand`, () => {
    const found = sourceFiles(ROOT)
      .filter((f) => relative(ROOT, f) !== DEFINITION)
      .flatMap((f) => handWritten(readFileSync(f, 'utf8')).map((w) => `${relative(ROOT, f)}: ${w}`));
    expect(found).toEqual([]);
  });
});
