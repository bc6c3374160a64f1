import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * OIDC identity providers, addressed by `name` in /v3/oidc/login/{idp_name}. The client secret is
 * stored encrypted (AES-GCM) with a key that is not in the database.
 */
export const identityProviders = sqliteTable('identity_providers', {
  name: text('name').primaryKey(),
  issuer: text('issuer').notNull(),
  clientId: text('client_id').notNull(),
  clientSecretEnc: text('client_secret_enc').notNull(),
  scopes: text('scopes').notNull().default('openid profile email'),
  claimLogin: text('claim_login').notNull().default('preferred_username'),
  claimDisplayName: text('claim_display_name').notNull().default('name'),
  claimEmail: text('claim_email').notNull().default('email'),
  /** A claim whose value (admin, auditor, user) sets the role; null: new accounts are users. */
  claimRole: text('claim_role'),
  /**
   * Whether the provider's `amr`/`acr` in its ID token may count as a second factor
   * (docs/security-mfa.md, "OIDC logins"); false: an account with a local factor is asked for it.
   */
  trustMfaClaims: integer('trust_mfa_claims', { mode: 'boolean' }).notNull().default(false),
  /** `acr` values that count as multi-factor when trustMfaClaims is set (with the `amr` rule). */
  acceptedAcr: text('accepted_acr', { mode: 'json' }).$type<string[]>().notNull().default([]),
  /** A claim (ID token or userinfo) listing the user's group names (docs/groups.md); null: none read. */
  claimGroups: text('claim_groups'),
  enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
});
