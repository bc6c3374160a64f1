/** The bridge's internal API: zod schemas shared by the worker (client) and the bridge (server). */
export * from './ldap.js';
export * from './errtrack.js';
export * from './logstore.js';
export * from './mail.js';
export * from './problem-type.js';
export * from './webhooks.js';
