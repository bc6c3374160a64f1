/**
 * The bridge's internal API: zod schemas shared by the worker (client) and the bridge (server). The schemas
 * only the bridge parses (requests) are built in arrow calls marked pure for the bundler (`@__PURE__`), so
 * the edge script, which never evaluates them, drops them (docs/performance.md, "The edge bundle").
 */
export * from './ldap.js';
export * from './errtrack.js';
export * from './logstore.js';
export * from './mail.js';
export * from './problem-type.js';
export * from './webhooks.js';
