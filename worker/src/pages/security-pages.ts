/**
 * The security page of every signed-in user (docs/console.md, "Second factors"): the authenticator
 * app (TOTP: QR code and key shown once, confirmed with a code, removed), recovery codes (generated
 * and shown once, the count left) and the passkeys (managed on their own page). A session limited to
 * enrolment (MFA_REQUIRED_ROLES) is sent here. Its script: console/pages/security.ts. Also the
 * section of a user's administrator page with their factors (script: console/pages/admin-factors.ts).
 */
import { html } from 'hono/html';
import type { ConsolePage, PageRender } from './page.js';
import { canSealSecrets } from '../store/secret-box.js';

/**
 * The notice of a form that stores a sealed secret, on a host that cannot seal one (an edge host
 * without a key: docs/security.md, "Key rotation"), shown before anyone starts filling it in.
 */
export function noSealingKey(r: PageRender, id: string) {
  return canSealSecrets(r.config)
    ? ''
    : html`<div id="${id}" class="message message-error" role="note"><p>${r.t('secrets.noKey')}</p></div>`;
}

const security: ConsolePage = {
  id: 'security',
  path: 'security',
  title: 'security.title',
  auth: 'required',
  nav: { label: 'nav.security', group: 'self' },
  body: (r) => html`<p>${r.t('security.intro')}</p>
<div id="security-enrol" class="message message-info" role="status" hidden><p>${r.t('security.enrolRequired')}</p></div>
<section class="card" aria-labelledby="totp-title">
<h2 id="totp-title">${r.t('security.totpTitle')}</h2>
${noSealingKey(r, 'totp-no-key')}
<p id="totp-state"></p>
<div id="totp-message" class="message" hidden></div>
<p class="actions"><button type="button" id="totp-start" hidden>${r.t('security.totpStart')}</button>
<button type="button" id="totp-remove" class="danger" hidden>${r.t('security.totpRemove')}</button></p>
<div id="totp-remove-confirm" hidden>
<p id="totp-remove-question">${r.t('security.totpRemoveConfirm')}</p>
<p class="actions"><button type="button" id="totp-remove-yes" class="danger"
aria-describedby="totp-remove-question">${r.t('security.totpRemoveYes')}</button>
<button type="button" id="totp-remove-cancel" class="secondary">${r.t('security.cancel')}</button></p>
</div>
<form id="totp-enrol" hidden>
<p>${r.t('security.totpScan')}</p>
<div id="totp-qr" class="qr"></div>
<p class="field"><label for="totp-secret">${r.t('security.secret')}</label>
<input id="totp-secret" readonly class="secret" spellcheck="false" autocomplete="off"></p>
<p class="field"><label for="totp-code">${r.t('security.code')}</label>
<input id="totp-code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6"
required></p>
<div id="totp-enrol-message" class="message" hidden></div>
<p class="actions"><button type="submit">${r.t('security.confirm')}</button></p>
</form>
</section>
<section class="card" aria-labelledby="codes-title">
<h2 id="codes-title">${r.t('security.codesTitle')}</h2>
<p>${r.t('security.codesIntro')}</p>
<p id="codes-state"></p>
<div id="codes-message" class="message" hidden></div>
<p class="actions"><button type="button" id="codes-generate" hidden></button></p>
<div id="codes-shown" class="issued" hidden>
<p role="status">${r.t('security.codesShown')}</p>
<ul id="codes-list" class="codes" aria-label="${r.t('security.codesList')}"></ul>
<p class="actions"><button type="button" id="codes-copy" class="secondary">${r.t('security.codesCopy')}</button>
<a id="codes-download" class="button secondary" download="recovery-codes.txt"
href="#">${r.t('security.codesDownload')}</a> <span id="codes-copy-state" role="status"></span></p>
</div>
</section>
<section class="card" aria-labelledby="security-passkeys-title">
<h2 id="security-passkeys-title">${r.t('security.passkeysTitle')}</h2>
<p id="security-passkeys"></p>
<p><a href="${r.base}/passkeys">${r.t('security.passkeysManage')}</a></p>
</section>`,
};

/** The security pages, in navigation order. */
export const SECURITY_PAGES: readonly ConsolePage[] = [security];

/** The administrator's view of a user's second factors, on the user's page (admin-pages.ts). */
export function userFactorsSection(r: PageRender) {
  return html`<section class="card" aria-labelledby="user-factors-title">
<h2 id="user-factors-title">${r.t('userfactors.title')}</h2>
<div id="user-factors-message" class="message" hidden></div>
<div id="user-factors"></div>
<p class="actions"><button type="button" id="user-factors-remove" class="danger"
hidden>${r.t('userfactors.remove')}</button></p>
<div id="user-factors-confirm" hidden>
<p id="user-factors-question"></p>
<p class="actions"><button type="button" id="user-factors-yes" class="danger"
aria-describedby="user-factors-question">${r.t('userfactors.removeYes')}</button>
<button type="button" id="user-factors-cancel" class="secondary">${r.t('security.cancel')}</button></p>
</div>
</section>`;
}
