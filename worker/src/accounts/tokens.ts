/**
 * API tokens (architecture.md §4): 256 random bits, shown once, stored only as SHA-256 (a slow hash adds
 * nothing to a secret of that entropy), with a visible prefix, optional expiry, revocable.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { and, desc, eq, gt, isNull, or, sql, type Placeholder } from 'drizzle-orm';
import { z } from '@hono/zod-openapi';
import { auditInsert, auditInsertWhen } from '../audit/events.js';
import { CredentialCache, preparedPerDb, writeMark, type Db } from '../store/index.js';
import type { UserRow } from './model.js';
import { apiTokens, users } from '../../../schema/index.js';
import type { RequestMeta } from '../http/scope.js';
import { isoOrNull, isoTime } from '../http/iso-time.js';
import { accountWrite, runAccountBatch, type AccountWrite } from './writes.js';
import { activeAccounts } from './live.js';
import { TOKEN_SCOPE_NAMES, type TokenScope } from './token-scopes.js';

const TOKEN_PREFIX = 'ast_';

export const TokenSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().openapi({ description: 'the first characters of the token, to recognise it' }),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable().openapi({ description: 'updated at most once a minute' }),
    lastUsedIp: z
      .string()
      .nullable()
      .openapi({ description: 'the client address of the last use recorded (with lastUsedAt)' }),
    expiresAt: z.string().nullable(),
    scopes: z
      .array(z.enum(TOKEN_SCOPE_NAMES))
      .nullable()
      .openapi({
        description:
          'what the token may be used for (docs/api.md, "API token scopes"), within its owner\'s rights; null: ' +
          'everything its owner may do (a token made without scopes, as every token made before scopes existed); ' +
          "empty: none of this service's API (a token for its audiences only)",
      }),
    audiences: z
      .array(z.string())
      .nullable()
      .openapi({
        description:
          'the protected services (names of /v4/services) the gate and introspection admit the token for ' +
          '(docs/api.md, "API token audiences"); null: no audience limit',
      }),
  })
  .openapi('ApiToken');

export const IssuedTokenSchema = TokenSchema.extend({
  token: z.string().openapi({ description: 'the secret: shown only in this response' }),
}).openapi('IssuedApiToken');

type TokenRow = typeof apiTokens.$inferSelect;

/** Public shape of a token (never its hash). */
export function toPublicToken(t: TokenRow): z.infer<typeof TokenSchema> {
  return {
    id: t.id,
    name: t.name,
    prefix: t.prefix,
    createdAt: isoTime(t.createdAt),
    lastUsedAt: isoOrNull(t.lastUsedAt),
    lastUsedIp: t.lastUsedIp,
    expiresAt: isoOrNull(t.expiresAt),
    scopes: (t.scopes as TokenScope[] | null) ?? null,
    audiences: t.audiences ?? null,
  };
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

/**
 * Node's one-shot hash (node:crypto `hash`, Node 20.12 and later), reached without an import so
 * that the edge bundle, where there is no node:crypto, still builds; undefined there.
 */
const nodeHash = (
  globalThis as {
    process?: { getBuiltinModule?: (id: string) => { hash?: (algorithm: string, data: string) => string } };
  }
).process?.getBuiltinModule?.('node:crypto')?.hash;

/**
 * Hex SHA-256 of a token, the only form stored. Synchronous: on Node, WebCrypto's digest goes
 * through the thread pool, which costs more than hashing 47 bytes. Node's one-shot `hash` where
 * there is one (0.3 µs), else @noble/hashes (about 2 µs: the edge). Every Bearer request hashes
 * its token before its cached lookup (architecture.md §6).
 */
export function tokenHash(token: string): string {
  return nodeHash ? nodeHash('sha256', token) : bytesToHex(sha256(utf8ToBytes(token)));
}

/** Issues a token for `user`; the audit event is written in the same batch. */
export async function issueToken(
  db: Db,
  user: UserRow,
  o: {
    name: string;
    expiresAt: number | null;
    /** null: every scope (what the owner may do) */
    scopes: readonly TokenScope[] | null;
    /** null: no audience limit */
    audiences?: readonly string[] | null;
    now: number;
    actor: UserRow;
    request?: RequestMeta;
  },
): Promise<z.infer<typeof IssuedTokenSchema>> {
  const token = TOKEN_PREFIX + base64url(crypto.getRandomValues(new Uint8Array(32)));
  const row: TokenRow = {
    id: crypto.randomUUID(),
    userId: user.id,
    name: o.name,
    prefix: token.slice(0, 12),
    secretHash: tokenHash(token),
    createdAt: o.now,
    lastUsedAt: null,
    expiresAt: o.expiresAt,
    revokedAt: null,
    scopes: o.scopes ? [...new Set(o.scopes)] : null,
    lastUsedIp: null,
    audiences: o.audiences ? [...new Set(o.audiences)] : null,
  };
  await runAccountBatch(db, [
    accountWrite(user.id, db.insert(apiTokens).values(row)),
    auditInsert(db, o.now, {
      stream: user.id === o.actor.id ? 'crud_user' : 'crud_admin',
      type: 'token.issued',
      actor: o.actor,
      subject: user,
      request: o.request,
      data: {
        tokenId: row.id,
        name: row.name,
        prefix: row.prefix,
        expiresAt: isoOrNull(row.expiresAt),
        scopes: row.scopes,
        audiences: row.audiences,
      },
    }),
  ]);
  return { ...toPublicToken(row), token };
}

/** The live tokens of a user, newest first. */
export async function listTokens(db: Db, userId: string, now: number) {
  const rows = await db
    .select()
    .from(apiTokens)
    .where(
      and(
        eq(apiTokens.userId, userId),
        isNull(apiTokens.revokedAt),
        or(isNull(apiTokens.expiresAt), gt(apiTokens.expiresAt, now)),
      ),
    )
    .orderBy(desc(apiTokens.createdAt));
  return rows.map(toPublicToken);
}

/** Revokes one token of a user; false when there is no such live token. */
export async function revokeToken(
  db: Db,
  user: UserRow,
  tokenId: string,
  o: { now: number; actor: { id: string | null; login: string }; request?: RequestMeta },
): Promise<boolean> {
  const [result] = await runAccountBatch(db, [
    accountWrite(
      user.id,
      db
        .update(apiTokens)
        .set({ revokedAt: o.now })
        .where(and(eq(apiTokens.id, tokenId), eq(apiTokens.userId, user.id), isNull(apiTokens.revokedAt))),
    ),
    // Audited only when the update above changed a row (changes() reads the previous statement).
    auditInsertWhen(
      db,
      o.now,
      {
        stream: user.id === o.actor.id ? 'crud_user' : 'crud_admin',
        type: 'token.revoked',
        actor: o.actor,
        subject: user,
        request: o.request,
        data: { tokenId },
      },
      sql`changes() > 0`,
    ),
  ]);
  if (result.rowsAffected === 0) return false;
  return true;
}

/** The statement revoking every live token of a user (an administrator's password reset). */
export function revokeAllTokensStatement(db: Db, userId: string, now: number): AccountWrite {
  return accountWrite(
    userId,
    db
      .update(apiTokens)
      .set({ revokedAt: now })
      .where(and(eq(apiTokens.userId, userId), isNull(apiTokens.revokedAt))),
  );
}

/** A live token and its account (the cached value: `lastUsedAt` is updated by touchToken). */
export interface TokenAccount {
  user: UserRow;
  tokenId: string;
  userId: string;
  lastUsedAt: number | null;
  expiresAt: number | null;
  /** null: every scope (accounts/token-scopes.ts) */
  scopes: string[] | null;
  /** The services the gate admits it for (names); null: no audience limit */
  audiences: string[] | null;
}

// At most one query per token per AUTH_REVOCATION_CHECK_SEC (store/credential-cache.ts: the staleness bound).
const tokenCache = new CredentialCache<TokenAccount>(undefined, undefined, (t) => t.userId);

/** Database lookups of tokens made by this process (tests: a cached answer costs none). */
export const tokenLookups = (): number => tokenCache.loads;

/**
 * The account behind a Bearer token, in one query, or none while the token's lookup is cached (for
 * `recheckMs`, AUTH_REVOCATION_CHECK_SEC: a revocation elsewhere is seen within it): the
 * token is live (not revoked, not expired) and its account is a live, active, local account;
 * anything else is undefined. Expiry is checked at every use, cached or not.
 */
export async function accountOfToken(
  db: Db,
  token: string,
  now: number,
  recheckMs: number,
): Promise<TokenAccount | undefined> {
  if (!token.startsWith(TOKEN_PREFIX)) return undefined;
  const hash = tokenHash(token);
  const live = (t: TokenAccount) => t.expiresAt === null || t.expiresAt > now;
  const load = async () => {
    const found = await tokenLookup(db).get({ hash, now });
    // Shared by the requests of this token until the cache drops it: nobody may change it.
    if (found) Object.freeze(found.user);
    return found;
  };
  return tokenCache.get(hash, now, live, load, recheckMs);
}

/**
 * The lookup of `accountOfToken` as a statement of a batch, for an isolate's first request, whose
 * start-up reads carry it (one round trip, architecture.md §6, "A far database"): `keep` hands its
 * rows to the token cache, as if `accountOfToken` had read them at `now`. Undefined for what is no
 * API token. The caller keeps nothing when the start-up reads refuse the database.
 */
export function tokenLookupInBatch(db: Db, token: string, now: number) {
  if (!token.startsWith(TOKEN_PREFIX) || token.includes('.')) return undefined;
  const hash = tokenHash(token);
  const since = writeMark();
  return {
    query: tokenLookupQuery(db, hash, now),
    /** `rows`: what `query` read. */
    keep(rows: readonly unknown[] | undefined) {
      const found = (rows as TokenAccount[] | undefined)?.[0];
      if (!found || (found.expiresAt !== null && found.expiresAt <= now)) return;
      Object.freeze(found.user);
      tokenCache.keep(hash, { ...found }, now, since);
    },
  };
}

// The hot path of every Bearer request: prepared once per handle; its batchable form for a first request.
const tokenLookup = preparedPerDb((db) =>
  tokenLookupQuery(db, sql.placeholder('hash'), sql.placeholder('now')).prepare(),
);

function tokenLookupQuery(db: Db, hash: string | Placeholder, now: number | Placeholder) {
  return db
    .select({
      user: users,
      tokenId: apiTokens.id,
      userId: apiTokens.userId,
      lastUsedAt: apiTokens.lastUsedAt,
      expiresAt: apiTokens.expiresAt,
      scopes: apiTokens.scopes,
      audiences: apiTokens.audiences,
    })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(
      and(
        eq(apiTokens.secretHash, hash),
        isNull(apiTokens.revokedAt),
        or(isNull(apiTokens.expiresAt), gt(apiTokens.expiresAt, now)),
        activeAccounts,
        eq(users.source, 'local'),
      ),
    )
    .limit(1);
}

/**
 * Records a token's use, and the account's activity (a token login keeps it from inactivity
 * blocking), at most once a minute: the write when one is due, which the caller runs off the request's
 * critical path, else undefined (decided at once: most requests schedule nothing). `t` is the
 * (cached) lookup: its `lastUsedAt` moves at once, so concurrent requests do not touch again.
 */
export function touchToken(
  db: Db,
  t: { tokenId: string; userId: string; lastUsedAt: number | null },
  now: number,
  ip: string | null = null,
): (() => Promise<unknown>) | undefined {
  if (t.lastUsedAt !== null && now - t.lastUsedAt < 60_000) return undefined;
  t.lastUsedAt = now;
  return () =>
    db.batch([
      db.update(apiTokens).set({ lastUsedAt: now, lastUsedIp: ip }).where(eq(apiTokens.id, t.tokenId)),
      db.update(users).set({ lastActivityAt: now }).where(eq(users.id, t.userId)),
    ]);
}
