/** The drizzle schema of the service's libSQL database: one file per aggregate. */
export * from './settings.js';
export * from './users.js';
export * from './auth.js';
export * from './audit.js';
export * from './sessions.js';
export * from './identity-providers.js';
export * from './ldap-servers.js';
export * from './jobs.js';
export * from './notifications.js';
export * from './passkeys.js';
export * from './mfa.js';
export * from './groups.js';
export * from './services.js';
export * from './webhooks.js';
