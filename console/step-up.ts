/**
 * The refusals the console resolves for the user (docs/console.md, "Second factors"):
 * - 403 STEP_UP_REQUIRED of a session whose second factor is too old: a dialog asks for a code (an
 *   app code or a recovery code), sends it to /v4/users/me/second-factor, and the action is repeated;
 *   cancelled, the action's refusal says it needs that confirmation.
 * - 403 MFA_ENROLMENT_REQUIRED (MFA_REQUIRED_ROLES, no factor yet): the session may only enrol, so
 *   the visitor goes to the security page, which explains why.
 * - 403 REAUTHENTICATION_REQUIRED of a first factor's set-up (the sign-in is too old): said in words.
 * - 403 PASSWORD_EXPIRED of a session (its password must be changed): the visitor goes to the password page.
 */
import '../worker/src/pages/security-texts.js';
import { ApiError, api, type RefusalHandler } from './api.js';
import { t } from './i18n.js';
import { add, el, showError, showMessage, whileBusy } from './ui.js';

/**
 * The message of a refused code: the code of the last accepted step again is told as such, with the
 * seconds to the next one (docs/security-mfa.md, "A code used twice"); any other refusal as `invalid`,
 * with the service's detail.
 */
export function codeRefused(err: ApiError, invalid = t('second.invalid')): [string, Node[]] {
  if (err.problem.reason === 'replayed' && typeof err.problem.retryAfter === 'number')
    return [t('second.replayed', { seconds: err.problem.retryAfter }), []];
  return [invalid, [el('p', { class: 'detail' }, err.message)]];
}

/** A second factor typed in one field: 6 digits are an app code, anything else a recovery code. */
export function factorBody(typed: string): { code: string } | { recoveryCode: string } {
  const value = typed.trim();
  const digits = value.replace(/\s/g, '');
  return /^\d{6}$/.test(digits) ? { code: digits } : { recoveryCode: value };
}

/** Whether the current session may only enrol a second factor (a probe of a route outside enrolment). */
export async function enrolmentOnly(): Promise<boolean> {
  try {
    await api('/v4/users/me/sessions', { resolve: false });
    return false;
  } catch (err) {
    // Any other refusal is for the page itself to show; the probe decides only this.
    return err instanceof ApiError && err.code === 'MFA_ENROLMENT_REQUIRED';
  }
}

let asking = false;

/** The step-up dialog: true once a code was accepted, false when the user cancelled. */
function askForStepUp(): Promise<boolean> {
  asking = true;
  return new Promise<boolean>((resolve) => {
    const input = el('input', {
      id: 'stepup-code',
      name: 'code',
      autocomplete: 'one-time-code',
      autocapitalize: 'none',
      spellcheck: 'false',
      maxlength: '64',
      required: true,
    });
    const message = el('div', { id: 'stepup-message', class: 'message', hidden: true });
    const submit = el('button', { type: 'submit' }, t('stepup.submit'));
    const cancel = el('button', { type: 'button', class: 'secondary', id: 'stepup-cancel' }, t('stepup.cancel'));
    const form = el(
      'form',
      { id: 'stepup-form' },
      el('p', { class: 'field' }, el('label', { for: 'stepup-code' }, t('stepup.code')), input),
      message,
      el('p', { class: 'actions' }, submit, ' ', cancel),
    );
    const dialog = el(
      'dialog',
      { id: 'stepup-dialog', 'aria-labelledby': 'stepup-title', 'aria-describedby': 'stepup-intro' },
      el('h2', { id: 'stepup-title' }, t('stepup.title')),
      el('p', { id: 'stepup-intro' }, t('stepup.intro')),
      form,
    );
    let done = false;
    const finish = (ok: boolean) => {
      if (done) return;
      done = true;
      asking = false;
      dialog.close();
      dialog.remove();
      resolve(ok);
    };
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void whileBusy(submit, async () => {
        showMessage(message, null);
        try {
          await api('/v4/users/me/second-factor', { method: 'POST', json: factorBody(input.value), resolve: false });
        } catch (err) {
          input.value = '';
          input.focus();
          if (err instanceof ApiError && err.code === 'INVALID_CREDENTIALS') {
            showMessage(message, 'error', ...codeRefused(err, t('stepup.invalid')));
          } else showError(message, err);
          return;
        }
        finish(true);
      });
    });
    cancel.addEventListener('click', () => finish(false));
    // Escape closes a modal dialog: that is a cancel too.
    dialog.addEventListener('cancel', () => finish(false));
    add(document.body, dialog);
    dialog.showModal();
    input.focus();
  });
}

/** The console's refusal handler (console/main.ts sets it); `base` is the console's path. */
export function resolveRefusals(base: string): RefusalHandler {
  return async (err) => {
    if (err.code === 'STEP_UP_REQUIRED' && err.problem.reason === 'stale_second_factor' && !asking) {
      if (await askForStepUp()) return true;
      // Cancelled: the action's own region says why it was not done, in the page's language.
      throw new ApiError(err.status, err.problem, err.headers, t('stepup.cancelled'));
    }
    if (err.code === 'MFA_ENROLMENT_REQUIRED' && document.body.dataset.page !== 'security') {
      location.assign(`${base}/security`);
    }
    // A first second factor needs a recent sign-in: the action's region says so in the page's language.
    if (err.code === 'REAUTHENTICATION_REQUIRED' && err.problem.change === 'factors') {
      throw new ApiError(err.status, err.problem, err.headers, t('stepup.reauth'));
    }
    // A session whose password must be changed may only change it (a sign-in's own refusal names
    // `changePassword`, and the sign-in page handles it).
    const page = document.body.dataset.page ?? '';
    if (err.code === 'PASSWORD_EXPIRED' && err.problem.changePassword === undefined && page !== 'password') {
      location.assign(`${base}/password`);
    }
    return false;
  };
}
