/**
 * The security page (worker/src/pages/security-pages.ts; docs/security-mfa.md): the authenticator
 * app (start, the QR code and key shown once, confirm with a code, remove), recovery codes (generate,
 * shown once with copy and download, the count left and a warning when few are left) and the number
 * of passkeys. Sensitive steps may ask for a fresh code first (console/step-up.ts).
 */
import '../../worker/src/pages/security-texts.js';
import { ApiError, api } from '../api.js';
import type { PageScript } from '../context.js';
import { formatDate, t } from '../i18n.js';
import { enrolmentOnly } from '../step-up.js';
import { add, byId, el, onSubmit, showError, showMessage, whileBusy } from '../ui.js';

/** GET /v4/users/me/second-factors (the API's `SecondFactors`). */
interface SecondFactors {
  factors: Array<{ kind: 'totp'; confirmedAt: string; lastUsedAt: string | null }>;
  totpPending: boolean;
  recoveryCodes: { left: number; low: boolean };
}

/** The QR code's SVG (the service's own markup, no script) as nodes of this page, labelled for screen readers. */
function qrNode(svg: string): Node | null {
  const parsed = new DOMParser().parseFromString(svg, 'image/svg+xml').documentElement;
  if (parsed.nodeName !== 'svg') return null;
  const node = document.importNode(parsed, true);
  node.setAttribute('role', 'img');
  node.setAttribute('aria-label', t('security.qr'));
  return node;
}

/** A button that runs `action` while busy; its failure is shown in `region`. */
function onClick(button: HTMLButtonElement, region: HTMLElement, action: () => Promise<void>): void {
  button.addEventListener(
    'click',
    () =>
      void whileBusy(button, async () => {
        showMessage(region, null);
        try {
          await action();
        } catch (err) {
          showError(region, err);
        }
      }),
  );
}

const security: PageScript = async (ctx) => {
  const totpState = byId('totp-state');
  const totpMessage = byId('totp-message');
  const start = byId<HTMLButtonElement>('totp-start');
  const remove = byId<HTMLButtonElement>('totp-remove');
  const removeConfirm = byId('totp-remove-confirm');
  const enrol = byId<HTMLFormElement>('totp-enrol');
  const qr = byId('totp-qr');
  const secret = byId<HTMLInputElement>('totp-secret');
  const codesState = byId('codes-state');
  const codesMessage = byId('codes-message');
  const generate = byId<HTMLButtonElement>('codes-generate');
  const shown = byId('codes-shown');
  const download = byId<HTMLAnchorElement>('codes-download');
  let downloadUrl = '';

  const showEnrolmentNotice = async () => {
    byId('security-enrol').hidden = !(await enrolmentOnly());
  };

  const render = async () => {
    const state = await api<SecondFactors>('/v4/users/me/second-factors');
    const totp = state.factors.find((f) => f.kind === 'totp');
    totpState.textContent = totp
      ? t('security.totpOn', {
          date: formatDate(totp.confirmedAt),
          used: formatDate(totp.lastUsedAt) || t('userfactors.never'),
        })
      : t(state.totpPending ? 'security.totpPending' : 'security.totpNone');
    start.hidden = totp !== undefined || !enrol.hidden;
    remove.hidden = totp === undefined;
    removeConfirm.hidden = true;
    const { left, low } = state.recoveryCodes;
    const hasFactor = state.factors.length > 0;
    codesState.textContent = hasFactor ? t('security.codesLeft', { n: left }) : t('security.codesNeedFactor');
    showMessage(codesMessage, low ? 'error' : null, t('security.codesLow', { n: left }));
    generate.hidden = !hasFactor;
    generate.textContent = t(left > 0 ? 'security.codesRegenerate' : 'security.codesGenerate');
    // Passkeys are managed on their own page; a session that may only enrol cannot list them.
    try {
      const passkeys = await api<{ items: unknown[] }>('/v4/users/me/passkeys', { resolve: false });
      byId('security-passkeys').textContent = t('security.passkeysCount', { n: passkeys.items.length });
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 403)) throw err;
    }
  };

  onClick(start, totpMessage, async () => {
    const started = await api<{ otpauthUri: string; qrSvg: string }>('/v4/users/me/totp', { method: 'POST' });
    qr.replaceChildren();
    add(qr, qrNode(started.qrSvg));
    secret.value = new URL(started.otpauthUri).searchParams.get('secret') ?? '';
    enrol.hidden = false;
    start.hidden = true;
    byId<HTMLInputElement>('totp-code').focus();
  });

  onSubmit(enrol, byId('totp-enrol-message'), async () => {
    const input = byId<HTMLInputElement>('totp-code');
    try {
      await api('/v4/users/me/totp/confirm', { method: 'POST', json: { code: input.value.trim() } });
    } catch (err) {
      input.value = '';
      throw err;
    }
    // The key leaves the page once confirmed.
    enrol.reset();
    enrol.hidden = true;
    qr.replaceChildren();
    secret.value = '';
    await Promise.all([render(), showEnrolmentNotice()]);
    showMessage(totpMessage, 'success', t('security.totpAdded'));
  });

  remove.addEventListener('click', () => {
    removeConfirm.hidden = false;
    byId('totp-remove-yes').focus();
  });
  byId('totp-remove-cancel').addEventListener('click', () => {
    removeConfirm.hidden = true;
    remove.focus();
  });
  onClick(byId<HTMLButtonElement>('totp-remove-yes'), totpMessage, async () => {
    await api('/v4/users/me/totp', { method: 'DELETE' });
    shown.hidden = true;
    showMessage(codesMessage, null);
    await render();
    showMessage(totpMessage, 'success', t('security.totpRemoved'));
  });

  onClick(generate, codesMessage, async () => {
    const { codes } = await api<{ codes: string[] }>('/v4/users/me/recovery-codes', { method: 'POST' });
    const list = byId('codes-list');
    list.replaceChildren(...codes.map((c) => el('li', {}, el('code', {}, c))));
    if (downloadUrl) URL.revokeObjectURL(downloadUrl);
    downloadUrl = URL.createObjectURL(new Blob([`${codes.join('\n')}\n`], { type: 'text/plain' }));
    download.href = downloadUrl;
    byId('codes-copy-state').textContent = '';
    // The count is brought up to date before the codes show (one consistent state).
    await render();
    shown.hidden = false;
  });
  byId('codes-copy').addEventListener('click', () => {
    const codes = [...byId('codes-list').querySelectorAll('li')].map((li) => li.textContent ?? '');
    void navigator.clipboard.writeText(codes.join('\n')).then(
      () => (byId('codes-copy-state').textContent = t('security.codesCopied')),
      (err: unknown) => showError(codesMessage, err),
    );
  });

  await Promise.all([render(), showEnrolmentNotice()]).catch((err: unknown) => showError(ctx.message, err));
};

export const SECURITY_SCRIPTS: Record<string, PageScript> = { security };
