/** The public shape of an account and the one mapper from a database row to it. */
import { z } from '@hono/zod-openapi';
import type { InferSelectModel } from 'drizzle-orm';
import type { ConfigSnapshot } from '../config/index.js';
import { ROLES, type users } from '../../../schema/index.js';
import { isoOrNull, isoTime } from '../http/iso-time.js';
import { toJsonText, type JsonText } from '../http/json-text.js';

export type UserRow = InferSelectModel<typeof users>;
export type Role = UserRow['role'];
export { ROLES };

export const DAY_MS = 86_400_000;

export const PublicUserSchema = z
  .object({
    id: z.string(),
    login: z.string(),
    displayName: z.string(),
    email: z.string().nullable(),
    role: z.enum(ROLES),
    source: z.enum(['local', 'ldap', 'oidc']),
    kind: z.enum(['person', 'service']).openapi({
      description: 'service: an account that owns API tokens and never signs in (docs/api.md, "Service accounts")',
    }),
    sourceName: z
      .string()
      .nullable()
      .openapi({ description: 'LDAP server record or OIDC provider of an external account' }),
    status: z.enum(['active', 'blocked']),
    blockedReason: z.enum(['admin', 'inactivity']).nullable(),
    lockedUntil: z.string().nullable().openapi({ description: 'set while failed logins lock the account' }),
    passwordChangedAt: z.string().nullable(),
    passwordExpiresAt: z.string().nullable(),
    mustChangePassword: z.boolean(),
    lastLoginAt: z.string().nullable(),
    sessionLimit: z.number().int().nullable().openapi({ description: 'null: AUTH_SESSIONS_DEFAULT_COUNT' }),
    superAccessUntil: z.string().nullable(),
    groups: z
      .array(
        z.object({
          name: z.string(),
          source: z.enum(['local', 'ldap', 'oidc']).openapi({
            description: "local: an administrator's membership; ldap, oidc: read at the account's last login",
          }),
        }),
      )
      .openapi({
        description: 'the groups of the account, one entry per group and source of the membership (docs/groups.md)',
      }),
    language: z.enum(['ru', 'en']).nullable().openapi({
      description: "the account's language (the console's choice): its mails' language; null: MAIL_LANGUAGE",
    }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('User');

export type PublicUser = z.infer<typeof PublicUserSchema>;

/** When the password of `user` expires under the current configuration (null: never). */
export function passwordExpiresAt(user: UserRow, config: ConfigSnapshot): number | null {
  const days = config.get('USER_PASSWORD_EXPIRATION_DAY');
  if (user.source !== 'local' || days === 0 || user.passwordChangedAt === null) return null;
  return user.passwordChangedAt + days * DAY_MS;
}

/** Maps a row to its public shape: never the hash, never internal columns. */
export function toPublicUser(user: UserRow, config: ConfigSnapshot, lockedUntil: number | null = null): PublicUser {
  return {
    id: user.id,
    login: user.login,
    displayName: user.displayName,
    email: user.email,
    role: user.role,
    source: user.source,
    kind: user.kind,
    sourceName: user.sourceName,
    status: user.status,
    blockedReason: user.blockedReason,
    lockedUntil: isoOrNull(lockedUntil),
    passwordChangedAt: isoOrNull(user.passwordChangedAt),
    passwordExpiresAt: isoOrNull(passwordExpiresAt(user, config)),
    mustChangePassword: user.mustChangePassword,
    lastLoginAt: isoOrNull(user.lastLoginAt),
    sessionLimit: user.sessionLimit,
    superAccessUntil: isoOrNull(user.superAccessUntil),
    groups: user.groups.map((g) => ({ name: g.name, source: g.source })),
    language: user.language,
    createdAt: isoTime(user.createdAt),
    updatedAt: isoTime(user.updatedAt),
  };
}

const publicJsonOfRow = new WeakMap<UserRow, { config: ConfigSnapshot; json: JsonText<PublicUser> }>();

/**
 * `toPublicUser(user, config)` as JSON text, kept per row object and configuration snapshot: the
 * credential caches share one frozen row per entry, and a write of the account replaces the row, so
 * `GET /v4/users/me` serialises an account once per version of it, not once per request
 * (architecture.md §6, "The request's own overhead").
 */
export function publicUserJson(user: UserRow, config: ConfigSnapshot): JsonText<PublicUser> {
  const kept = publicJsonOfRow.get(user);
  if (kept?.config === config) return kept.json;
  const json = toJsonText(toPublicUser(user, config));
  if (Object.isFrozen(user)) publicJsonOfRow.set(user, { config, json });
  return json;
}

/** The role in force: an account with live super-access acts as an admin until it ends. */
export function effectiveRole(user: UserRow, now: number): Role {
  return user.superAccessUntil !== null && user.superAccessUntil > now ? 'admin' : user.role;
}

const namesOfRow = new WeakMap<UserRow, readonly string[]>();

/**
 * The names of the groups of `user` (each once, whatever the sources of its memberships), read from
 * its row: no query. Kept per row object (the credential caches share one frozen row per entry).
 */
export function groupNamesOf(user: UserRow): readonly string[] {
  let names = namesOfRow.get(user);
  if (!names) {
    names = Object.freeze([...new Set(user.groups.map((g) => g.name))]);
    namesOfRow.set(user, names);
  }
  return names;
}
