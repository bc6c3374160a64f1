/** The drizzle schema of the service's libSQL database: one file per aggregate. */
export * from './settings.js';
