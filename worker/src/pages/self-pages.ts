/**
 * The console's pages for every signed-in user: the profile (the console's home), the password
 * change (also for an expired password, without a session), the user's sessions, API tokens and
 * passkeys. Their scripts: console/pages/self.ts and console/pages/passkeys.ts. The content is
 * fetched by the script from /v4/users/me/...
 */
import { html } from 'hono/html';
import type { ConsolePage } from './page.js';
import { newPasswordFields } from './policy.js';
import { TOKEN_SCOPE_NAMES } from '../accounts/token-scopes.js';

const profile: ConsolePage = {
  id: 'profile',
  path: '',
  title: 'profile.title',
  auth: 'required',
  nav: { label: 'nav.profile', group: 'self' },
  body: () => html`<div id="profile-region" class="card"><dl id="profile" class="facts"></dl></div>`,
};

const password: ConsolePage = {
  id: 'password',
  path: 'password',
  title: 'password.title',
  auth: 'optional',
  nav: { label: 'nav.password', group: 'self' },
  body: (r) => html`<p id="password-expired-intro" hidden>${r.t('password.expiredIntro')}</p>
<form id="password-form" class="card">
<p class="field" id="password-login-row" hidden><label for="password-login">${r.t('password.login')}</label>
<input id="password-login" name="login" autocomplete="username" autocapitalize="none" spellcheck="false" disabled></p>
<p class="field"><label for="password-old">${r.t('password.old')}</label>
<input id="password-old" name="oldPassword" type="password" autocomplete="current-password" required></p>
${newPasswordFields(r, 'password')}
<div id="password-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('password.submit')}</button></p>
</form>`,
};

const sessions: ConsolePage = {
  id: 'sessions',
  path: 'sessions',
  title: 'sessions.title',
  auth: 'required',
  nav: { label: 'nav.sessions', group: 'self' },
  body: (r) => html`<div id="sessions-region"></div>
<div id="sessions-message" class="message" hidden></div>
<p class="actions"><button type="button" id="sessions-end-all" class="danger">${r.t('sessions.endAll')}</button></p>`,
};

const tokens: ConsolePage = {
  id: 'tokens',
  path: 'tokens',
  title: 'tokens.title',
  auth: 'required',
  nav: { label: 'nav.tokens', group: 'self' },
  body: (r) => html`<p>${r.t('tokens.intro')}</p>
<form id="token-form" class="card">
<p class="field"><label for="token-name">${r.t('tokens.name')}</label>
<input id="token-name" name="name" maxlength="100" required></p>
<p class="field"><label for="token-days">${r.t('tokens.days')}</label>
<input id="token-days" name="expiresInDays" type="number" min="1" max="3650" inputmode="numeric"></p>
<fieldset id="token-scopes"><legend>${r.t('tokens.scopes')}</legend>
<p class="hint">${r.t('tokens.scopesHint')}</p>
${TOKEN_SCOPE_NAMES.map(
  (
    s,
  ) => html`<p class="check"><input id="token-scope-${s.replace(':', '-')}" name="scopes" type="checkbox" value="${s}">
<label for="token-scope-${s.replace(':', '-')}"><code>${s}</code> ${r.t(`tokens.scope.${s}`)}</label></p>`,
)}
</fieldset>
<fieldset id="token-audiences"><legend>${r.t('tokens.audiences')}</legend>
<p class="hint">${r.t('tokens.audiencesHint')}</p>
<div id="token-audience-list"></div>
</fieldset>
<div id="token-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('tokens.issue')}</button></p>
</form>
<div id="token-issued" class="card issued" hidden>
<p id="token-issued-text" role="status"></p>
<p class="field"><label for="token-secret">${r.t('tokens.secret')}</label>
<input id="token-secret" readonly class="secret" spellcheck="false"></p>
<p class="actions"><button type="button" id="token-copy">${r.t('tokens.copy')}</button> <span id="token-copy-state"
role="status"></span></p>
</div>
<div class="grid" id="token-filters">
<p class="field"><label for="token-filter-scope">${r.t('tokens.filterScope')}</label>
<select id="token-filter-scope"><option value="">${r.t('users.any')}</option>
${TOKEN_SCOPE_NAMES.map((s) => html`<option value="${s}">${s}</option>`)}</select></p>
<p class="field"><label for="token-filter-use">${r.t('tokens.filterUse')}</label>
<select id="token-filter-use"><option value="">${r.t('users.any')}</option>
${[30, 90].map((n) => html`<option value="${n}">${r.t('tokens.unusedFor', { n })}</option>`)}
<option value="never">${r.t('tokens.neverUsed')}</option></select></p>
</div>
<div id="tokens-region"></div>`,
};

const passkeys: ConsolePage = {
  id: 'passkeys',
  path: 'passkeys',
  title: 'passkeys.title',
  auth: 'required',
  nav: { label: 'nav.passkeys', group: 'self' },
  body: (r) => html`<p>${r.t('passkeys.intro')}</p>
<form id="passkey-form" class="card">
<p class="field"><label for="passkey-name">${r.t('passkeys.name')}</label>
<input id="passkey-name" name="name" maxlength="100" required></p>
<div id="passkey-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('passkeys.add')}</button></p>
</form>
<form id="passkey-rename-form" class="card" hidden>
<p class="field"><label for="passkey-rename-name" id="passkey-rename-label"></label>
<input id="passkey-rename-name" name="name" maxlength="100" required></p>
<div id="passkey-rename-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('passkeys.save')}</button>
<button type="button" id="passkey-rename-cancel" class="secondary">${r.t('passkeys.cancel')}</button></p>
</form>
<div id="passkeys-region"></div>`,
};

/** The self-service pages, in navigation order. */
export const SELF_PAGES: readonly ConsolePage[] = [profile, password, sessions, tokens, passkeys];
