/**
 * The console's pages for visitors without a session: sign-in (local, LDAP server choice, a button
 * per OIDC provider), the merge page (DEFAULT_FRONTEND_MERGE_URL) and the password-reset pages (the
 * mailed link DEFAULT_FRONTEND_URL + /reset-password#token=...). Their scripts: console/pages/signin.ts.
 */
import { asc, eq } from 'drizzle-orm';
import { html } from 'hono/html';
import { identityProviders, ldapServers } from '../../../schema/index.js';
import type { ConsolePage, PageRender } from './page.js';
import { newPasswordFields } from './policy.js';

/**
 * A console path for after the sign-in: only below the console itself, or the gate's return to a protected
 * service (which checks its address again: docs/integration.md). Never an open redirect.
 */
export function safeNext(r: PageRender, next: string | undefined): string {
  const home = `${r.base}/`;
  const gateReturn = `${r.root}/v4/authz/continue?rd=`;
  if (!(next?.startsWith(home) || next?.startsWith(gateReturn))) return home;
  if (next.includes('//') || next.includes('\\') || /[\u0000-\u001f]/.test(next)) return home;
  return next;
}

/** auth_error codes the service puts on DEFAULT_FRONTEND_URL (http/redirect.ts) → the message's text key. */
const AUTH_ERRORS: Record<string, string> = {
  account_blocked: 'signin.blocked',
  login_conflict: 'signin.conflict',
  login_not_allowed: 'signin.notAllowed',
  invalid_credentials: 'signin.invalid',
  account_locked: 'signin.locked',
  address_throttled: 'signin.throttledLater',
  password_expired: 'signin.expired',
};

function authErrorMessage(r: PageRender) {
  const code = r.url.searchParams.get('auth_error');
  if (!code) return html`<div id="signin-message" class="message" hidden></div>`;
  const description = r.url.searchParams.get('auth_error_description');
  const key = AUTH_ERRORS[code];
  const message = key && key !== 'signin.locked' ? r.t(key) : r.t('signin.providerError', { code });
  const more = description ? html`<p>${description}</p>` : '';
  return html`<div id="signin-message" class="message message-error" role="alert"><p>${message}</p>${more}</div>`;
}

/**
 * The change of a local password the sign-in was refused for (PASSWORD_EXPIRED), shown in place of the sign-in
 * form by its script: only the new password, twice; the password just typed stays in the script's memory
 * (docs/console.md, "Sign-in and an expired password").
 */
function changeStep(r: PageRender) {
  return html`<section id="signin-change" class="card" hidden aria-labelledby="signin-change-title">
<h2 id="signin-change-title">${r.t('password.title')}</h2>
<p id="signin-change-intro">${r.t('signin.changeIntro.expired')}</p>
<form id="signin-change-form">
${newPasswordFields(r, 'signin-change')}
<div id="signin-change-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('password.submit')}</button></p>
</form></section>`;
}

const signIn: ConsolePage = {
  id: 'signin',
  path: 'login',
  title: 'signin.title',
  auth: 'none',
  async body(r) {
    const [servers, providers] = await Promise.all([
      r.db
        .select({ name: ldapServers.name })
        .from(ldapServers)
        .where(eq(ldapServers.enabled, true))
        .orderBy(asc(ldapServers.name)),
      r.db
        .select({ name: identityProviders.name })
        .from(identityProviders)
        .where(eq(identityProviders.enabled, true))
        .orderBy(asc(identityProviders.name)),
    ]);
    const next = safeNext(r, r.url.searchParams.get('next') ?? undefined);
    const serverChoice =
      servers.length === 0
        ? ''
        : html`<p class="field"><label for="signin-server">${r.t('signin.server')}</label>
<select id="signin-server" name="ldapServer"><option value="">${r.t('signin.local')}</option>${servers.map(
            (s) => html`<option value="${s.name}">LDAP: ${s.name}</option>`,
          )}</select></p>`;
    const oidc =
      providers.length === 0
        ? ''
        : html`<section class="providers" aria-labelledby="signin-oidc-title"><h2
id="signin-oidc-title">${r.t('signin.oidc')}</h2>
<ul>${providers.map((p) => {
            const href = `${r.root}/v3/oidc/login/${encodeURIComponent(p.name)}?next=${encodeURIComponent(next)}`;
            const label = r.t('signin.oidcButton', { name: p.name });
            return html`<li><a class="button secondary" href="${href}">${label}</a></li>`;
          })}</ul></section>`;
    return html`<form id="signin-form" class="card" data-next="${next}">
<p class="field"><label for="signin-login">${r.t('signin.login')}</label>
<input id="signin-login" name="login" autocomplete="username" autocapitalize="none" spellcheck="false" required></p>
<p class="field"><label for="signin-password">${r.t('signin.password')}</label>
<input id="signin-password" name="password" type="password" autocomplete="current-password" required></p>
${serverChoice}
${authErrorMessage(r)}
<p class="actions"><button type="submit">${r.t('signin.submit')}</button></p>
</form>
<p class="actions"><button type="button" id="signin-passkey" class="secondary">${r.t('signin.passkey')}</button></p>
<p><a href="${r.base}/reset-password">${r.t('signin.forgot')}</a></p>
${oidc}
${changeStep(r)}`;
  },
};

const merge: ConsolePage = {
  id: 'merge',
  path: 'merge',
  title: 'merge.title',
  auth: 'none',
  body: (r) => html`<p>${r.t('merge.intro')}</p>
<form id="merge-form" class="card">
<p class="field"><label for="merge-password">${r.t('merge.password')}</label>
<input id="merge-password" name="password" type="password" autocomplete="current-password" required></p>
<div id="merge-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('merge.submit')}</button></p>
</form>
<p><a href="${r.base}/login">${r.t('nav.signin')}</a></p>`,
};

const reset: ConsolePage = {
  id: 'reset',
  path: 'reset-password',
  title: 'reset.title',
  auth: 'none',
  body: (r) => html`<section id="reset-request" aria-labelledby="reset-request-title">
<h2 id="reset-request-title" class="visually-hidden">${r.t('reset.title')}</h2>
<p>${r.t('reset.intro')}</p>
<form id="reset-request-form" class="card">
<p class="field"><label for="reset-login">${r.t('reset.login')}</label>
<input id="reset-login" name="login" autocomplete="username" autocapitalize="none" spellcheck="false" required></p>
<div id="reset-request-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('reset.submit')}</button></p>
</form>
</section>
<section id="reset-confirm" aria-labelledby="reset-confirm-title" hidden>
<h2 id="reset-confirm-title">${r.t('reset.newTitle')}</h2>
<form id="reset-confirm-form" class="card">
${newPasswordFields(r, 'reset')}
<div id="reset-confirm-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('reset.newSubmit')}</button></p>
</form>
</section>
<p><a href="${r.base}/login">${r.t('nav.signin')}</a></p>`,
};

/** The sign-in pages, in navigation order (none is in the navigation). */
export const SIGNIN_PAGES: readonly ConsolePage[] = [signIn, merge, reset];
