/** Scripts of the sign-in pages (worker/src/pages/signin-pages.ts): sign-in, merge, password reset. */
import { browserSupportsWebAuthn } from '@simplewebauthn/browser';
import { ApiError, api } from '../api.js';
import type { PageContext, PageScript } from '../context.js';
import { formatDuration, t } from '../i18n.js';
import { byId, el, onSubmit, showError, showMessage, whileBusy } from '../ui.js';
import { landingPage } from './admin-overview.js';
import { signInWithPasskey } from './passkeys.js';
import { land, showSecondStep } from './second-step.js';
import { repeatMatches, showPolicyProblem, watchPolicy } from './password-check.js';

/**
 * Shows a refused login in the page's language, one message in words (the API's detail only for a
 * refusal the page has no words for); a refusal that leads elsewhere (a local password to change, a
 * merge) goes there instead.
 */
export function showLoginRefusal(
  ctx: PageContext,
  region: HTMLElement,
  err: unknown,
  login: string,
  typed?: { password: string; next: string },
): void {
  if (!(err instanceof ApiError)) {
    showError(region, err);
    return;
  }
  let key: string | null = null;
  let vars: Record<string, string | number> = {};
  switch (err.code) {
    case 'INVALID_CREDENTIALS':
      key = 'signin.invalid';
      break;
    case 'ACCOUNT_LOCKED': {
      // Retry-After: the time left of a failed-login lock; none when the directory locked the account.
      const retry = Number(err.headers.get('Retry-After'));
      key = retry > 0 ? 'signin.locked' : 'signin.lockedDirectory';
      vars = { time: formatDuration(retry) };
      break;
    }
    case 'ADDRESS_THROTTLED':
      // Too many failures from this address (across logins): Retry-After is the time left.
      key = 'signin.throttled';
      vars = { time: formatDuration(Number(err.headers.get('Retry-After'))) };
      break;
    case 'ACCOUNT_BLOCKED':
      key = 'signin.blocked';
      break;
    case 'PASSWORD_EXPIRED':
      // A local password is changed here (the problem names the way); an LDAP one in the directory.
      // `passwordReason` says whether an administrator reset it or it expired: the page says which.
      if (typeof err.problem.changePassword === 'string') {
        const given = err.problem.passwordReason;
        const reason = given === 'reset' || given === 'initial' ? given : 'expired';
        // On the sign-in page, with the password just typed: the change asks only for the new one.
        if (typed && document.getElementById('signin-change')) {
          showChangeStep(ctx, { login, password: typed.password, reason, next: typed.next });
          return;
        }
        const query = reason === 'expired' ? '' : `&reason=${reason}`;
        location.assign(`${ctx.base}/password?expired=1${query}&login=${encodeURIComponent(login)}`);
        return;
      }
      key = 'signin.expiredLdap';
      break;
    case 'MERGE_REQUIRED':
      location.assign(`${ctx.base}/merge`);
      return;
    case 'LOGIN_CONFLICT':
      key = 'signin.conflict';
      break;
    case 'LOGIN_NOT_ALLOWED':
      key = 'signin.notAllowed';
      break;
  }
  if (key === null) showError(region, err);
  else showError(region, err, t(key, vars));
}

const signin: PageScript = async (ctx) => {
  const form = byId<HTMLFormElement>('signin-form');
  const region = byId('signin-message');
  // Already signed in: straight on.
  try {
    await api('/v4/users/me');
    location.replace(await landingPage(ctx, form.dataset.next));
    return;
  } catch {
    // not signed in: the form it is
  }
  const server = document.getElementById('signin-server') as HTMLSelectElement | null;
  onSubmit(form, region, async () => {
    const login = byId<HTMLInputElement>('signin-login').value;
    const password = byId<HTMLInputElement>('signin-password').value;
    const ldapServer = server?.value || undefined;
    const next = form.dataset.next ?? `${ctx.base}/`;
    try {
      await api('/v3/login', { method: 'POST', json: { login, password, ldapServer } });
    } catch (err) {
      byId<HTMLInputElement>('signin-password').value = '';
      if (err instanceof ApiError && err.code === 'SECOND_FACTOR_REQUIRED') {
        showSecondStep(ctx, form, next, (r, e) => showLoginRefusal(ctx, r, e, login), factorsOf(err));
      } else showLoginRefusal(ctx, region, err, login, { password, next });
      return;
    }
    showMessage(region, 'success', t('signin.ok'));
    await land(ctx, next);
  });
  wirePasskeySignIn(ctx, form, region);
};

/** Basic credentials (UTF-8), for a password change without a session (an expired password). */
export function basicAuth(login: string, password: string): string {
  const bytes = new TextEncoder().encode(`${login}:${password}`);
  return `Basic ${btoa(String.fromCharCode(...bytes))}`;
}

/**
 * The change of an expired (or reset, or first) local password in place of the sign-in form
 * (docs/console.md, "Sign-in and an expired password"): the password the user typed a moment ago is
 * kept in this closure only (never in the address, storage or history) and proves who they are; they
 * type the new one twice, and are then signed in with it.
 */
function showChangeStep(
  ctx: PageContext,
  o: { login: string; password: string; reason: 'expired' | 'reset' | 'initial'; next: string },
): void {
  const section = byId('signin-change');
  const form = byId<HTMLFormElement>('signin-change-form');
  const region = byId('signin-change-message');
  const newInput = byId<HTMLInputElement>('signin-change-new');
  const repeat = byId<HTMLInputElement>('signin-change-repeat');
  byId('signin-form').hidden = true;
  byId('signin-passkey').hidden = true;
  byId('signin-change-intro').textContent = t(`signin.changeIntro.${o.reason}`);
  section.hidden = false;
  showMessage(byId('signin-message'), null);
  const check = watchPolicy('signin-change-policy', newInput, () => o.login);
  check();
  newInput.focus();
  onSubmit(form, region, async () => {
    if (!repeatMatches(newInput, repeat, region)) return;
    try {
      await api('/v4/users/me/password', {
        method: 'PUT',
        headers: { Authorization: basicAuth(o.login, o.password) },
        json: { oldPassword: o.password, newPassword: newInput.value },
      });
    } catch (err) {
      showPolicyProblem(region, err);
      return;
    }
    const changed = newInput.value;
    o.password = '';
    form.reset();
    showMessage(region, 'success', t('signin.changed'));
    try {
      await api('/v3/login', { method: 'POST', json: { login: o.login, password: changed } });
    } catch {
      // A second factor or another refusal: the sign-in form, with the new password, is the way on.
      showMessage(region, 'success', t('password.doneSignIn'), [
        el('p', {}, el('a', { href: `${ctx.base}/login` }, t('nav.signin'))),
      ]);
      return;
    }
    await land(ctx, o.next);
  });
}

/** "Sign in with a passkey": a discoverable credential of this browser's authenticators, no login typed. */
function wirePasskeySignIn(ctx: PageContext, form: HTMLFormElement, region: HTMLElement): void {
  const button = byId<HTMLButtonElement>('signin-passkey');
  if (!browserSupportsWebAuthn()) {
    button.hidden = true;
    return;
  }
  button.addEventListener(
    'click',
    () =>
      void whileBusy(button, async () => {
        showMessage(region, null);
        try {
          const done = await signInWithPasskey('/v3/login/passkey/options', '/v3/login/passkey');
          if (!done) return showMessage(region, 'error', t('signin.passkeyCancelled'));
        } catch (err) {
          if (err instanceof ApiError && err.code === 'INVALID_CREDENTIALS') {
            showError(region, err, t('signin.passkeyFailed'));
          } else if (err instanceof ApiError && err.code === 'LOGIN_NOT_ALLOWED') {
            showError(region, err, t('signin.passkeyNotLocal'));
          } else showLoginRefusal(ctx, region, err, '');
          return;
        }
        showMessage(region, 'success', t('signin.ok'));
        await land(ctx, form.dataset.next ?? `${ctx.base}/`);
      }),
  );
}

/** The factors a 401 SECOND_FACTOR_REQUIRED names. */
const factorsOf = (err: ApiError): string[] =>
  Array.isArray(err.problem.factors) ? err.problem.factors.filter((f) => typeof f === 'string') : [];

const merge: PageScript = (ctx) => {
  const form = byId<HTMLFormElement>('merge-form');
  const region = byId('merge-message');
  onSubmit(form, region, async () => {
    try {
      await api('/v3/login/union', {
        method: 'POST',
        json: { password: byId<HTMLInputElement>('merge-password').value },
      });
    } catch (err) {
      byId<HTMLInputElement>('merge-password').value = '';
      if (err instanceof ApiError && err.code === 'SECOND_FACTOR_REQUIRED') {
        showSecondStep(ctx, form, `${ctx.base}/`, (r, e) => showLoginRefusal(ctx, r, e, ''), factorsOf(err));
        return;
      }
      // 401 without a pending merge of this browser; 409 when it was linked already.
      if (err instanceof ApiError && (err.code === 'UNAUTHENTICATED' || err.code === 'CONFLICT')) {
        showError(region, err, t('merge.none'));
        return;
      }
      showLoginRefusal(ctx, region, err, '');
      return;
    }
    await land(ctx, `${ctx.base}/`);
  });
};

const reset: PageScript = (ctx) => {
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  const requestForm = byId<HTMLFormElement>('reset-request-form');
  const requestRegion = byId('reset-request-message');
  onSubmit(requestForm, requestRegion, async () => {
    const value = byId<HTMLInputElement>('reset-login').value.trim();
    // An address has an @ and a dot after it; logins may contain @ but the API takes either.
    const body = /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value) ? { email: value } : { login: value };
    await api('/v3/password_reset/request', { method: 'POST', json: body });
    showMessage(requestRegion, 'success', t('reset.sent'));
  });
  if (!token) {
    // The mailed link opened over this page (only the fragment changes): start again with it.
    window.addEventListener('hashchange', () => {
      if (new URLSearchParams(location.hash.slice(1)).has('token')) location.reload();
    });
    return;
  }

  byId('reset-request').hidden = true;
  byId('reset-confirm').hidden = false;
  // The token stays out of the history and of any Referer once read.
  history.replaceState(null, '', location.pathname + location.search);
  const form = byId<HTMLFormElement>('reset-confirm-form');
  const region = byId('reset-confirm-message');
  const newInput = byId<HTMLInputElement>('reset-new');
  const repeat = byId<HTMLInputElement>('reset-repeat');
  watchPolicy('reset-policy', newInput);
  newInput.focus();
  onSubmit(form, region, async () => {
    if (!repeatMatches(newInput, repeat, region)) return;
    try {
      await api('/v3/password_reset/confirm', { method: 'POST', json: { token, newPassword: newInput.value } });
    } catch (err) {
      if (err instanceof ApiError && err.code === 'INVALID_RESET_TOKEN') {
        showMessage(region, 'error', t('reset.invalid'), [
          el('p', {}, el('a', { href: `${ctx.base}/reset-password` }, t('reset.title'))),
        ]);
        return;
      }
      showPolicyProblem(region, err);
      return;
    }
    form.hidden = true;
    showMessage(ctx.message, 'success', t('reset.done'), [
      el('p', {}, el('a', { href: `${ctx.base}/login` }, t('nav.signin'))),
    ]);
  });
};

export const SIGNIN_SCRIPTS: Record<string, PageScript> = { signin, merge, reset };
