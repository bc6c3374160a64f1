/**
 * Where the web console lives, below ROOT_PATH (its pages: pages/page.ts; links in mails: accounts/reset-tokens.ts).
 */
export const CONSOLE_PATH = '/ui';
