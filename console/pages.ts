/**
 * The scripts of the console's pages by `<body data-page>` id (the server's pages are in
 * worker/src/pages/pages.ts). To add a page group, spread its record here.
 */
import type { PageScript } from './context.js';
import { AUDIT_SCRIPTS } from './pages/admin-audit.js';
import { DIRECTORIES_SCRIPTS } from './pages/admin-directories.js';
import { GROUPS_SCRIPTS } from './pages/admin-groups.js';
import { NOTIFICATIONS_SCRIPTS } from './pages/admin-notifications.js';
import { OVERVIEW_SCRIPTS } from './pages/admin-overview.js';
import { SERVICES_SCRIPTS } from './pages/admin-services.js';
import { WEBHOOKS_SCRIPTS } from './pages/admin-webhooks.js';
import { SESSIONS_SCRIPTS } from './pages/admin-sessions.js';
import { PASSKEY_SCRIPTS } from './pages/passkeys.js';
import { SECURITY_SCRIPTS } from './pages/security.js';
import { SETTINGS_SCRIPTS } from './pages/admin-settings.js';
import { USERS_SCRIPTS } from './pages/admin-users.js';
import { SELF_SCRIPTS } from './pages/self.js';
import { SIGNIN_SCRIPTS } from './pages/signin.js';

export const PAGE_SCRIPTS: Record<string, PageScript> = {
  ...SELF_SCRIPTS,
  ...PASSKEY_SCRIPTS,
  ...SECURITY_SCRIPTS,
  ...USERS_SCRIPTS,
  ...SETTINGS_SCRIPTS,
  ...DIRECTORIES_SCRIPTS,
  ...GROUPS_SCRIPTS,
  ...SERVICES_SCRIPTS,
  ...WEBHOOKS_SCRIPTS,
  ...AUDIT_SCRIPTS,
  ...NOTIFICATIONS_SCRIPTS,
  ...OVERVIEW_SCRIPTS,
  ...SESSIONS_SCRIPTS,
  ...SIGNIN_SCRIPTS,
};
