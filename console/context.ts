/** What every console page script gets (console/main.ts builds it). */

/** The signed-in account, as GET /v4/users/me answers (the API's `User`). */
export interface Me {
  id: string;
  login: string;
  displayName: string;
  email: string | null;
  role: 'admin' | 'auditor' | 'user';
  source: 'local' | 'ldap' | 'oidc';
  /** service: a service account, which owns API tokens and never signs in */
  kind: 'person' | 'service';
  sourceName: string | null;
  status: 'active' | 'blocked';
  lockedUntil: string | null;
  passwordExpiresAt: string | null;
  lastLoginAt: string | null;
  /** The account's language (its mails follow it); null until chosen. */
  language: 'ru' | 'en' | null;
}

export interface PageContext {
  /** ROOT_PATH. */
  root: string;
  /** ROOT_PATH + /ui (no trailing slash). */
  base: string;
  /** The signed-in account; null on sign-in pages and on an 'optional' page without a session. */
  me: Me | null;
  /** The page's general message region (#page-message). */
  message: HTMLElement;
}

/** A page's script: wires the page's markup; may load data (its loading and error states included). */
export type PageScript = (ctx: PageContext) => void | Promise<void>;

/** An API token as the token lists answer it (the secret is never listed). */
export interface TokenItem {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  /** the client address of the last recorded use */
  lastUsedIp: string | null;
  expiresAt: string | null;
  /** null: everything its owner may do (docs/api.md, "API token scopes") */
  scopes: string[] | null;
  /** null: no audience limit (docs/api.md, "API token audiences") */
  audiences: string[] | null;
}
