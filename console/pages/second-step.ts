/**
 * The second step of a sign-in (docs/security-mfa.md, "The two-step login"): after a right password
 * the API answers 401 SECOND_FACTOR_REQUIRED and keeps the pending login in an HttpOnly cookie; this
 * form sends an app code or a recovery code to /v3/login/second-factor and then lands where the
 * password alone would have. Used by the sign-in and merge pages (console/pages/signin.ts).
 */
import '../../worker/src/pages/security-texts.js';
import { browserSupportsWebAuthn } from '@simplewebauthn/browser';
import { ApiError, api } from '../api.js';
import type { PageContext } from '../context.js';
import { t } from '../i18n.js';
import { codeRefused, enrolmentOnly, factorBody } from '../step-up.js';
import { el, onSubmit, showMessage } from '../ui.js';
import { landingPage } from './admin-overview.js';
import { signInWithPasskey } from './passkeys.js';

/**
 * Where a new session goes: the page asked for (administrators: the overview for the home page,
 * console/pages/admin-overview.ts), or the security page when the session may only
 * enrol a second factor (MFA_REQUIRED_ROLES).
 */
export async function land(ctx: PageContext, next: string): Promise<void> {
  location.assign((await enrolmentOnly()) ? `${ctx.base}/security` : await landingPage(ctx, next));
}

/**
 * Replaces `first` (the password form) with the second step's form; "Start again" brings it back.
 * `refused` shows a refusal other than a wrong code (a lock, a block) the way the first step does.
 */
export function showSecondStep(
  ctx: PageContext,
  first: HTMLElement,
  next: string,
  refused: (region: HTMLElement, err: unknown) => void,
  /** The factors the 401 SECOND_FACTOR_REQUIRED named: with `passkey`, a button offers one. */
  factors: readonly string[] = [],
): void {
  document.getElementById('second-step')?.remove();
  const input = el('input', {
    id: 'second-code',
    name: 'code',
    autocomplete: 'one-time-code',
    autocapitalize: 'none',
    spellcheck: 'false',
    maxlength: '64',
    required: true,
  });
  const region = el('div', { id: 'second-message', class: 'message', hidden: true });
  const restart = el('button', { type: 'button', class: 'secondary', id: 'second-restart' }, t('second.restart'));
  const form = el(
    'form',
    { id: 'second-form', class: 'card' },
    el('p', { class: 'field' }, el('label', { for: 'second-code' }, t('second.code')), input),
    region,
    el('p', { class: 'actions' }, el('button', { type: 'submit' }, t('second.submit')), ' ', restart),
  );
  // A passkey of the account instead of a code (docs/security-mfa.md, "The passkey second step").
  const passkey = el('button', { type: 'button', class: 'secondary', id: 'second-passkey' }, t('second.passkey'));
  if (factors.includes('passkey') && browserSupportsWebAuthn()) {
    form.insertBefore(el('p', { class: 'actions' }, passkey), region);
    passkey.addEventListener('click', () => void usePasskey());
  }
  const section = el(
    'section',
    { id: 'second-step', 'aria-labelledby': 'second-title' },
    el('h2', { id: 'second-title' }, t('second.title')),
    el('p', {}, t('second.intro')),
    form,
  );
  const back = (message?: string) => {
    section.remove();
    first.hidden = false;
    if (message) showMessage(ctx.message, 'error', message);
    first.querySelector<HTMLInputElement>('input[type=password]')?.focus();
  };
  restart.addEventListener('click', () => back());
  const usePasskey = async () => {
    showMessage(region, null);
    try {
      const done = await signInWithPasskey(
        '/v3/login/second-factor/passkey/options',
        '/v3/login/second-factor/passkey',
      );
      if (!done) return showMessage(region, 'error', t('signin.passkeyCancelled'));
    } catch (err) {
      if (err instanceof ApiError && err.code === 'INVALID_CREDENTIALS') {
        showMessage(region, 'error', t('signin.passkeyFailed'));
      } else if (err instanceof ApiError && err.code === 'UNAUTHENTICATED') back(t('second.expired'));
      else refused(region, err);
      return;
    }
    showMessage(region, 'success', t('signin.ok'));
    await land(ctx, next);
  };
  onSubmit(form, region, async () => {
    try {
      await api('/v3/login/second-factor', { method: 'POST', json: factorBody(input.value) });
    } catch (err) {
      input.value = '';
      if (err instanceof ApiError && err.code === 'INVALID_CREDENTIALS') {
        showMessage(region, 'error', ...codeRefused(err));
        input.focus();
      } else if (err instanceof ApiError && err.code === 'UNAUTHENTICATED') back(t('second.expired'));
      else refused(region, err);
      return;
    }
    showMessage(region, 'success', t('signin.ok'));
    await land(ctx, next);
  });
  first.hidden = true;
  first.parentNode?.insertBefore(section, first.nextSibling);
  input.focus();
}
