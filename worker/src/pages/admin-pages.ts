/**
 * The administrator pages of the console (architecture.md §8): users (list, search, create), one
 * user (edit, block, unlock, password reset, super-access, sessions, tokens), settings, LDAP server
 * records and identity providers, groups, the gate's protected services, the audit log viewer and the notification
 * history.
 * Links shown to administrators only (the audit log's also to auditors); the API enforces the roles (anyone else
 * who opens a page sees its 403 problem detail). Scripts: console/pages/admin-*.ts.
 */
import { html } from 'hono/html';
import { NOTIFICATION_KINDS } from '../../../schema/notifications.js';
import type { ConsolePage, PageRender } from './page.js';
import { noSealingKey, userFactorsSection } from './security-pages.js';
import { policyList } from './policy.js';
import { TOKEN_SCOPE_NAMES } from '../accounts/token-scopes.js';

const option = (value: string, label: string) => html`<option value="${value}">${label}</option>`;
const roles = (r: PageRender) => ['user', 'auditor', 'admin'].map((v) => option(v, r.t(`role.${v}`)));

const users: ConsolePage = {
  id: 'admin-users',
  path: 'admin/users',
  title: 'users.title',
  auth: 'required',
  nav: { label: 'nav.adminUsers', group: 'admin' },
  body: (r) => html`<form id="users-search" class="card" role="search" aria-labelledby="users-search-title">
<h2 id="users-search-title">${r.t('users.search')}</h2>
<div class="grid">
<p class="field"><label for="users-q">${r.t('users.q')}</label>
<input id="users-q" name="q" type="search" maxlength="200" autocapitalize="none" spellcheck="false"></p>
<p class="field"><label for="users-role">${r.t('users.role')}</label>
<select id="users-role" name="role">${option('', r.t('users.any'))}${roles(r)}</select></p>
<p class="field"><label for="users-status">${r.t('users.status')}</label>
<select id="users-status" name="status">
${option('', r.t('users.any'))}
${['active', 'blocked'].map((v) => option(v, r.t(`status.${v}`)))}</select></p>
<p class="field"><label for="users-source">${r.t('users.source')}</label>
<select id="users-source" name="source">
${option('', r.t('users.any'))}
${option('local', r.t('source.local'))}
${option('ldap', 'LDAP')}
${option('oidc', 'OIDC')}</select></p>
<p class="field"><label for="users-kind">${r.t('users.kind')}</label>
<select id="users-kind" name="kind">
${option('', r.t('users.any'))}
${option('person', r.t('users.kindPerson'))}
${option('service', r.t('users.kindServices'))}</select></p>
<p class="field"><label for="users-sort">${r.t('users.sort')}</label>
<select id="users-sort" name="sort">
${option('login', r.t('users.sortLogin'))}
${option('-createdAt', r.t('users.sortCreated'))}
${option('-lastLoginAt', r.t('users.sortLastLogin'))}</select></p>
</div>
<p class="actions"><button type="submit">${r.t('users.find')}</button></p>
</form>
<div id="users-message" class="message" hidden></div>
<div id="users-region"></div>
<nav id="users-pager" class="actions" aria-label="${r.t('users.pager')}" hidden>
<button type="button" id="users-prev" class="secondary">${r.t('users.prev')}</button>
<button type="button" id="users-next" class="secondary">${r.t('users.next')}</button>
</nav>
<form id="user-create" class="card" aria-labelledby="user-create-title">
<h2 id="user-create-title">${r.t('users.create')}</h2>
<p class="field"><label for="create-login">${r.t('profile.login')}</label>
<input id="create-login" name="login" required maxlength="150"
  autocapitalize="none" spellcheck="false" autocomplete="off"></p>
<p class="field"><label for="create-display">${r.t('users.displayName')}</label>
<input id="create-display" name="displayName" maxlength="200" autocomplete="off"></p>
<p class="check"><input id="create-service" name="kind" type="checkbox" value="service">
<label for="create-service">${r.t('users.serviceAccount')}</label></p>
<p class="field"><label for="create-email">${r.t('users.email')}</label>
<input id="create-email" name="email" type="email" autocomplete="off"></p>
<p class="field"><label for="create-role">${r.t('users.role')}</label>
<select id="create-role" name="role">${roles(r)}</select></p>
${policyList(r, 'create-password-policy')}
<p class="field"><label for="create-password">${r.t('users.password')}</label>
<input id="create-password" name="password" type="password" autocomplete="new-password"
aria-describedby="create-password-hint create-password-policy-title create-password-policy"></p>
<p class="hint" id="create-password-hint">${r.t('users.passwordOptional')}</p>
<p class="field"><label for="create-limit">${r.t('users.sessionLimit')}</label>
<input id="create-limit" name="sessionLimit" type="number" min="1" inputmode="numeric"></p>
<p class="check"><input id="create-must" name="mustChangePassword" type="checkbox" checked>
<label for="create-must">${r.t('users.mustChange')}</label></p>
<div id="user-create-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('users.createSubmit')}</button></p>
</form>`,
};

const user: ConsolePage = {
  id: 'admin-user',
  path: 'admin/user',
  title: 'user.title',
  auth: 'required',
  body: (r) => html`<p><a href="${r.base}/admin/users">${r.t('user.back')}</a></p>
<section id="user-region" aria-labelledby="user-facts-title" class="card">
<h2 id="user-facts-title">${r.t('user.facts')}</h2>
<dl id="user-facts" class="facts"></dl>
</section>
<div id="user-panels" hidden>
<section class="card" aria-labelledby="user-actions-title">
<h2 id="user-actions-title">${r.t('user.actions')}</h2>
<div id="user-actions-message" class="message" hidden></div>
<p class="actions">
<button type="button" id="user-block" class="danger" hidden>${r.t('user.block')}</button>
<button type="button" id="user-unblock" class="secondary" hidden>${r.t('user.unblock')}</button>
<button type="button" id="user-unlock" class="secondary" hidden>${r.t('user.unlock')}</button>
</p>
</section>
<form id="user-edit" class="card" aria-labelledby="user-edit-title">
<h2 id="user-edit-title">${r.t('user.edit')}</h2>
<p class="field"><label for="edit-display">${r.t('users.displayName')}</label>
<input id="edit-display" name="displayName" maxlength="200" autocomplete="off"></p>
<p class="field"><label for="edit-email">${r.t('users.email')}</label>
<input id="edit-email" name="email" type="email" autocomplete="off"></p>
<p class="field"><label for="edit-role">${r.t('users.role')}</label>
<select id="edit-role" name="role">${roles(r)}</select></p>
<p class="field"><label for="edit-limit">${r.t('users.sessionLimit')}</label>
<input id="edit-limit" name="sessionLimit" type="number" min="1" inputmode="numeric"></p>
<div id="user-edit-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('user.save')}</button></p>
</form>
<form id="user-reset" class="card" aria-labelledby="user-reset-title">
<h2 id="user-reset-title">${r.t('user.reset')}</h2>
${policyList(r, 'reset-password-policy')}
<p class="field"><label for="reset-password">${r.t('users.password')}</label>
<input id="reset-password" name="password" type="password" required autocomplete="new-password"
aria-describedby="reset-password-policy-title reset-password-policy"></p>
<p class="check"><input id="reset-must" name="mustChangePassword" type="checkbox" checked>
<label for="reset-must">${r.t('users.mustChange')}</label></p>
<p class="check"><input id="reset-passkeys" name="endPasskeys" type="checkbox" checked>
<label for="reset-passkeys">${r.t('users.endPasskeys')}</label></p>
<div id="user-reset-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('user.resetSubmit')}</button></p>
</form>
<form id="user-su" class="card" aria-labelledby="user-su-title">
<h2 id="user-su-title">${r.t('user.su')}</h2>
<p id="user-su-state"></p>
<p class="field"><label for="su-minutes">${r.t('user.suMinutes')}</label>
<input id="su-minutes" name="minutes" type="number" min="1" inputmode="numeric"></p>
<div id="user-su-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('user.suGrant')}</button>
<button type="button" id="su-revoke" class="danger" hidden>${r.t('user.suRevoke')}</button></p>
</form>
<section class="card" aria-labelledby="user-sessions-title">
<h2 id="user-sessions-title">${r.t('user.sessions')}</h2>
<div id="user-sessions-message" class="message" hidden></div>
<div id="user-sessions"></div>
</section>
<section class="card" aria-labelledby="user-tokens-title">
<h2 id="user-tokens-title">${r.t('user.tokens')}</h2>
<div id="user-tokens-message" class="message" hidden></div>
<div id="user-tokens"></div>
<form id="user-token-form" hidden>
<h3>${r.t('user.issueToken')}</h3>
<p class="field"><label for="user-token-name">${r.t('tokens.name')}</label>
<input id="user-token-name" name="name" maxlength="100" required></p>
<fieldset><legend>${r.t('tokens.scopes')}</legend>
${TOKEN_SCOPE_NAMES.map(
  (s) => html`<p class="check"><input id="user-token-scope-${s.replace(':', '-')}" name="scopes" type="checkbox"
value="${s}"><label for="user-token-scope-${s.replace(':', '-')}"><code>${s}</code></label></p>`,
)}
</fieldset>
<div id="user-token-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('tokens.issue')}</button></p>
<p class="field" id="user-token-issued" hidden><label for="user-token-secret">${r.t('tokens.secret')}</label>
<input id="user-token-secret" readonly class="secret" spellcheck="false"></p>
</form>
</section>
${userFactorsSection(r)}
<form id="user-delete" class="card" aria-labelledby="user-delete-title">
<h2 id="user-delete-title">${r.t('user.delete')}</h2>
<p class="field"><label for="delete-confirm" id="delete-confirm-label">${r.t('user.delete')}</label>
<input id="delete-confirm" name="confirm" required autocomplete="off" autocapitalize="none" spellcheck="false"></p>
<div id="user-delete-message" class="message" hidden></div>
<p class="actions"><button type="submit" class="danger">${r.t('user.delete')}</button></p>
</form>
</div>`,
};

const settings: ConsolePage = {
  id: 'admin-settings',
  path: 'admin/settings',
  title: 'settings.title',
  auth: 'required',
  nav: { label: 'nav.adminSettings', group: 'admin' },
  body: (r) => html`<p>${r.t('settings.intro')}</p>
<div id="settings-region"></div>`,
};

const audit: ConsolePage = {
  id: 'admin-audit',
  path: 'admin/audit',
  title: 'audit.title',
  auth: 'required',
  nav: { label: 'nav.adminAudit', group: 'audit' },
  body: (r) => html`<p class="field"><label for="audit-type">${r.t('audit.type')}</label>
<select id="audit-type" name="type"></select></p>
<p id="audit-type-description"></p>
<form id="audit-form" class="card" role="search" aria-labelledby="audit-form-title">
<h2 id="audit-form-title">${r.t('audit.simple')}</h2>
<div class="grid">
<p class="field"><label for="audit-user">${r.t('audit.user')}</label>
<input id="audit-user" name="user" autocapitalize="none" spellcheck="false"></p>
<p class="field"><label for="audit-ip">${r.t('audit.ip')}</label>
<input id="audit-ip" name="ip" spellcheck="false"></p>
<p class="field"><label for="audit-outcome">${r.t('audit.outcome')}</label>
<select id="audit-outcome" name="outcome">
${option('', r.t('users.any'))}
${option('success', r.t('audit.success'))}
${option('failure', r.t('audit.failure'))}</select></p>
<p class="field"><label for="audit-event-types">${r.t('audit.eventTypes')}</label>
<input id="audit-event-types" name="eventTypes" spellcheck="false"></p>
<p class="field"><label for="audit-from">${r.t('audit.from')}</label>
<input id="audit-from" name="from" inputmode="numeric" autocomplete="off" spellcheck="false"
placeholder="${r.t('date.format')}" aria-describedby="audit-date-hint"></p>
<p class="field"><label for="audit-to">${r.t('audit.to')}</label>
<input id="audit-to" name="to" inputmode="numeric" autocomplete="off" spellcheck="false"
placeholder="${r.t('date.format')}" aria-describedby="audit-date-hint"></p>
<p class="hint" id="audit-date-hint">${r.t('date.hint', { format: r.t('date.format') })}</p>
<p class="field"><label for="audit-size">${r.t('audit.size')}</label>
<input id="audit-size" name="size" type="number" min="1" max="500" value="50" inputmode="numeric"></p>
</div>
<div id="audit-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('audit.find')}</button></p>
</form>
<div id="audit-region"></div>
<p class="actions"><button type="button" id="audit-more" class="secondary" hidden>${r.t('audit.more')}</button></p>
<section id="audit-record-box" class="card" aria-labelledby="audit-record-title" hidden>
<h2 id="audit-record-title" tabindex="-1"></h2>
<pre id="audit-record" class="record"></pre>
</section>
<form id="audit-query" class="card" aria-labelledby="audit-query-title">
<h2 id="audit-query-title">${r.t('audit.query')}</h2>
<p class="field"><label for="audit-query-body">${r.t('audit.queryBody')}</label>
<textarea id="audit-query-body" name="body" rows="8" spellcheck="false">{
  "query": { "match_all": {} },
  "sort": [{ "@timestamp": { "order": "desc" } }],
  "size": 20
}</textarea></p>
<div id="audit-query-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('audit.querySubmit')}</button></p>
<pre id="audit-query-answer" class="record" hidden></pre>
</form>
<section class="card" aria-labelledby="audit-fields-title">
<h2 id="audit-fields-title">${r.t('audit.fields')}</h2>
<div id="audit-fields-message" class="message" hidden></div>
<p class="actions">
<button type="button" id="audit-fields-load" class="secondary">${r.t('audit.fieldsLoad')}</button></p>
<div id="audit-fields"></div>
</section>`,
};

const directories: ConsolePage = {
  id: 'admin-directories',
  path: 'admin/directories',
  title: 'dir.title',
  auth: 'required',
  nav: { label: 'nav.adminDirectories', group: 'admin' },
  body: (r) => html`<section aria-labelledby="ldap-title">
<h2 id="ldap-title">${r.t('dir.ldap')}</h2>
${noSealingKey(r, 'ldap-no-key')}
<div id="ldap-message" class="message" hidden></div>
<div id="ldap-region"></div>
<div id="ldap-editor"></div>
</section>
<section aria-labelledby="idp-title">
<h2 id="idp-title">${r.t('dir.idp')}</h2>
${noSealingKey(r, 'idp-no-key')}
<div id="idp-message" class="message" hidden></div>
<div id="idp-region"></div>
<div id="idp-editor"></div>
</section>`,
};

/** The gate's protected services (docs/integration.md); script: console/pages/admin-services.ts. */
const services: ConsolePage = {
  id: 'admin-services',
  path: 'admin/services',
  title: 'svc.title',
  auth: 'required',
  nav: { label: 'nav.adminServices', group: 'admin' },
  body: (r) => html`<section aria-labelledby="svc-list-title">
<h2 id="svc-list-title">${r.t('svc.title')}</h2>
<p>${r.t('svc.intro')}</p>
<div id="svc-message" class="message" hidden></div>
<div id="svc-region"></div>
<div id="svc-editor"></div>
</section>`,
};

/** Groups and their members (docs/groups.md); script: console/pages/admin-groups.ts. */
const groups: ConsolePage = {
  id: 'admin-groups',
  path: 'admin/groups',
  title: 'grp.title',
  auth: 'required',
  nav: { label: 'nav.adminGroups', group: 'admin' },
  body: (r) => html`<section aria-labelledby="grp-list-title">
<h2 id="grp-list-title">${r.t('grp.title')}</h2>
<p>${r.t('grp.intro')}</p>
<div id="grp-message" class="message" hidden></div>
<div id="grp-region"></div>
<nav id="grp-pager" class="actions" aria-label="${r.t('users.pager')}" hidden>
<button type="button" id="grp-prev" class="secondary">${r.t('users.prev')}</button>
<button type="button" id="grp-next" class="secondary">${r.t('users.next')}</button>
</nav>
</section>
<section id="grp-members-box" class="card" aria-labelledby="grp-members-title" hidden>
<h2 id="grp-members-title" tabindex="-1"></h2>
<div id="grp-members-message" class="message" hidden></div>
<div id="grp-members"></div>
<form id="grp-add" aria-labelledby="grp-add-title">
<h3 id="grp-add-title">${r.t('grp.add')}</h3>
<p class="field"><label for="grp-add-login">${r.t('grp.login')}</label>
<input id="grp-add-login" name="login" required maxlength="150" autocapitalize="none" spellcheck="false"
autocomplete="off"></p>
<div id="grp-add-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('grp.addSubmit')}</button></p>
</form>
</section>
<form id="grp-create" class="card" aria-labelledby="grp-create-title">
<h2 id="grp-create-title">${r.t('grp.create')}</h2>
<p class="field"><label for="grp-name">${r.t('grp.name')}</label>
<input id="grp-name" name="name" required maxlength="128" spellcheck="false" autocomplete="off"></p>
<p class="field"><label for="grp-description">${r.t('grp.description')}</label>
<input id="grp-description" name="description" maxlength="500" autocomplete="off"></p>
<div id="grp-create-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('grp.createSubmit')}</button></p>
</form>`,
};

/** Webhook subscriptions (docs/webhooks.md); script: console/pages/admin-webhooks.ts. */
const webhooks: ConsolePage = {
  id: 'admin-webhooks',
  path: 'admin/webhooks',
  title: 'hook.title',
  auth: 'required',
  nav: { label: 'nav.adminWebhooks', group: 'admin' },
  body: (r) => html`<section aria-labelledby="hook-list-title">
<h2 id="hook-list-title">${r.t('hook.title')}</h2>
<p>${r.t('hook.intro')}</p>
<div id="hook-message" class="message" hidden></div>
<div id="hook-region"></div>
<div id="hook-editor"></div>
</section>`,
};

const STATUSES = ['pending', 'sent', 'failed', 'given_up'];

const notifications: ConsolePage = {
  id: 'admin-notifications',
  path: 'admin/notifications',
  title: 'notif.title',
  auth: 'required',
  nav: { label: 'nav.adminNotifications', group: 'admin' },
  body: (r) => html`<form id="notif-search" class="card" role="search" aria-labelledby="notif-search-title">
<h2 id="notif-search-title">${r.t('notif.search')}</h2>
<div class="grid">
<p class="field"><label for="notif-status">${r.t('notif.status')}</label>
<select id="notif-status" name="status">
${option('', r.t('users.any'))}
${STATUSES.map((v) => option(v, r.t(`notif.status.${v}`)))}</select></p>
<p class="field"><label for="notif-kind">${r.t('notif.kind')}</label>
<select id="notif-kind" name="kind">
${option('', r.t('users.any'))}
${NOTIFICATION_KINDS.map((v) => option(v, r.t(`notif.kind.${v}`)))}</select></p>
<p class="field"><label for="notif-recipient">${r.t('notif.recipient')}</label>
<input id="notif-recipient" name="recipient" type="email" autocomplete="off"></p>
</div>
<div id="notif-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('users.find')}</button></p>
</form>
<div id="notif-region"></div>
<nav id="notif-pager" class="actions" aria-label="${r.t('users.pager')}" hidden>
<button type="button" id="notif-prev" class="secondary">${r.t('users.prev')}</button>
<button type="button" id="notif-next" class="secondary">${r.t('users.next')}</button>
</nav>`,
};

/** The administrator pages, in navigation order. */
export const ADMIN_PAGES: readonly ConsolePage[] = [
  users,
  user,
  settings,
  directories,
  groups,
  services,
  webhooks,
  audit,
  notifications,
];
