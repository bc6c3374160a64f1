/**
 * The administrator's overview (where administrators land after signing in) and the sessions of
 * all users (docs/console.md, "Overview" and "Sessions of all users"). Shown to administrators
 * only; the API enforces the role. Scripts: console/pages/admin-overview.ts, admin-sessions.ts.
 */
import { html } from 'hono/html';
import type { ConsolePage } from './page.js';

/** The overview's path below the console: the sign-in script sends administrators there. */
export const OVERVIEW_PATH = 'admin/overview';

const overview: ConsolePage = {
  id: 'admin-overview',
  path: OVERVIEW_PATH,
  title: 'overview.title',
  auth: 'required',
  nav: { label: 'nav.adminOverview', group: 'admin' },
  body: (r) => html`<p>${r.t('overview.intro')} <span id="overview-updated"></span></p>
<div id="overview-region" class="overview"></div>`,
};

const sessions: ConsolePage = {
  id: 'admin-sessions',
  path: 'admin/sessions',
  title: 'allSessions.title',
  auth: 'required',
  nav: { label: 'nav.adminSessions', group: 'admin' },
  body: (
    r,
  ) => html`<form id="all-sessions-search" class="card" role="search" aria-labelledby="all-sessions-search-title">
<h2 id="all-sessions-search-title">${r.t('allSessions.search')}</h2>
<p class="field"><label for="all-sessions-login">${r.t('allSessions.login')}</label>
<input id="all-sessions-login" name="login" type="search" maxlength="150" autocapitalize="none" spellcheck="false"></p>
<p class="actions"><button type="submit">${r.t('users.find')}</button></p>
</form>
<div id="all-sessions-message" class="message" hidden></div>
<div id="all-sessions-region"></div>
<nav id="all-sessions-pager" class="actions" aria-label="${r.t('users.pager')}" hidden>
<button type="button" id="all-sessions-prev" class="secondary">${r.t('users.prev')}</button>
<button type="button" id="all-sessions-next" class="secondary">${r.t('users.next')}</button>
</nav>`,
};

/** The overview and the sessions of all users, first among the administrator pages. */
export const OVERVIEW_PAGES: readonly ConsolePage[] = [overview, sessions];
