/** The bridge's LDAP capability: escaping, sessions, the directory operations and their routes. */
export * from './escape.js';
export * from './session.js';
export * from './directory.js';
export * from './ad-bind.js';
export { ldapPlugin } from './routes.js';
