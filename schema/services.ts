import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/** Who may enter a protected service: any signed-in account, or those named by role, id or group. */
export interface ServiceAccess {
  /** true: any active account; the lists below are then ignored. */
  anyAccount: boolean;
  roles: string[];
  accounts: string[];
  groups: string[];
}

/** The names of the identity headers a protected service receives. */
export interface ServiceHeaders {
  user: string;
  name: string;
  email: string;
  groups: string;
  role: string;
}

/**
 * The platform's protected services (docs/integration.md): the hosts and URL prefixes a service
 * answers for, who may enter, and its credential for token introspection (the secret's SHA-256 only).
 */
export const protectedServices = sqliteTable('protected_services', {
  id: text('id').primaryKey(),
  name: text('name').notNull().unique(),
  /** Normalised host names (lower case, no trailing dot, IDNA A-labels), with a port where given. */
  hosts: text('hosts', { mode: 'json' }).$type<string[]>().notNull().default([]),
  /** Normalised URL prefixes (scheme, host, path): `https://example.com/app/`. */
  prefixes: text('prefixes', { mode: 'json' }).$type<string[]>().notNull().default([]),
  access: text('access', { mode: 'json' }).$type<ServiceAccess>().notNull(),
  requireSecondFactor: integer('require_second_factor', { mode: 'boolean' }).notNull().default(false),
  allowBasic: integer('allow_basic', { mode: 'boolean' }).notNull().default(false),
  headers: text('headers', { mode: 'json' }).$type<ServiceHeaders>().notNull(),
  clientId: text('client_id').notNull().unique(),
  secretHash: text('secret_hash').notNull(),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
});
