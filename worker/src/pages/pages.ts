/**
 * Every page of the console, in navigation order. To add pages: define them (page.ts,
 * ConsolePage) in a file of their group, list the group here, and register their scripts in
 * console/pages.ts under the same ids (architecture.md §8).
 */
import { ADMIN_PAGES } from './admin-pages.js';
import { OVERVIEW_PAGES } from './overview-pages.js';
import type { ConsolePage } from './page.js';
import { SECURITY_PAGES } from './security-pages.js';
import { SELF_PAGES } from './self-pages.js';
import { SIGNIN_PAGES } from './signin-pages.js';

export const CONSOLE_PAGES: readonly ConsolePage[] = [
  ...SELF_PAGES,
  ...SECURITY_PAGES,
  ...OVERVIEW_PAGES,
  ...ADMIN_PAGES,
  ...SIGNIN_PAGES,
];
