/**
 * The passkeys page (worker/src/pages/self-pages.ts): register one in this browser's authenticator
 * (@simplewebauthn/browser), list, rename and remove them (docs/security-passkeys.md).
 */
import {
  WebAuthnError,
  browserSupportsWebAuthn,
  startAuthentication,
  startRegistration,
} from '@simplewebauthn/browser';
import { ApiError, api } from '../api.js';
import type { PageScript } from '../context.js';
import { formatDate, t } from '../i18n.js';
import { add, byId, el, loading, onSubmit, showError, showMessage, table, whileBusy } from '../ui.js';

interface PasskeyItem {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  backupState: boolean;
}

/** Whether a WebAuthn ceremony ended because the user cancelled it or it timed out. */
export function cancelledCeremony(err: unknown): boolean {
  const name = err instanceof WebAuthnError ? (err.cause as Error | undefined)?.name : (err as Error | null)?.name;
  return name === 'NotAllowedError' || name === 'AbortError';
}

/**
 * A passkey sign-in ceremony: request options from `optionsPath`, the browser's authenticator, its answer
 * posted to `path`. False when the user cancelled it (nothing was sent); the API's refusals are thrown.
 */
export async function signInWithPasskey(optionsPath: string, path: string): Promise<boolean> {
  const optionsJSON = await api<Parameters<typeof startAuthentication>[0]['optionsJSON']>(optionsPath, {
    method: 'POST',
  });
  let response: Awaited<ReturnType<typeof startAuthentication>>;
  try {
    response = await startAuthentication({ optionsJSON });
  } catch (err) {
    if (cancelledCeremony(err)) return false;
    throw err;
  }
  await api(path, { method: 'POST', json: { response } });
  return true;
}

const passkeys: PageScript = async (ctx) => {
  const region = byId('passkeys-region');
  const form = byId<HTMLFormElement>('passkey-form');
  const message = byId('passkey-message');
  const renameForm = byId<HTMLFormElement>('passkey-rename-form');
  const renameInput = byId<HTMLInputElement>('passkey-rename-name');
  const renameMessage = byId('passkey-rename-message');
  if (!browserSupportsWebAuthn()) {
    showMessage(message, 'info', t('passkeys.unsupported'));
    form.querySelector('button')?.setAttribute('disabled', '');
  }
  let renaming: PasskeyItem | null = null;

  const render = async () => {
    region.replaceChildren();
    const list = await loading(region, () => api<{ items: PasskeyItem[] }>('/v4/users/me/passkeys'));
    if (!list) return;
    if (list.items.length === 0) return add(region, el('p', {}, t('passkeys.empty')));
    const rows = list.items.map((p) => {
      const rename = el(
        'button',
        { type: 'button', class: 'secondary', 'aria-label': t('passkeys.renameNamed', { name: p.name }) },
        t('passkeys.rename'),
      );
      rename.addEventListener('click', () => {
        renaming = p;
        byId('passkey-rename-label').textContent = t('passkeys.newName', { name: p.name });
        renameInput.value = p.name;
        showMessage(renameMessage, null);
        renameForm.hidden = false;
        renameInput.focus();
        renameInput.select();
      });
      const remove = el(
        'button',
        { type: 'button', class: 'danger', 'aria-label': t('passkeys.removeNamed', { name: p.name }) },
        t('passkeys.remove'),
      );
      remove.addEventListener(
        'click',
        () =>
          void whileBusy(remove, async () => {
            try {
              await api(`/v4/users/me/passkeys/${encodeURIComponent(p.id)}`, { method: 'DELETE' });
            } catch (err) {
              return showError(ctx.message, err);
            }
            showMessage(ctx.message, 'success', t('passkeys.removed'));
            await render();
          }),
      );
      const text = (s: string) => document.createTextNode(s);
      return [
        text(p.name),
        text(formatDate(p.createdAt)),
        text(formatDate(p.lastUsedAt) || t('passkeys.never')),
        text(t(p.backupState ? 'passkeys.yes' : 'passkeys.no')),
        el('span', { class: 'actions' }, rename, ' ', remove),
      ];
    });
    const heads = ['name', 'created', 'lastUsed', 'synced', 'actions'].map((k) =>
      k === 'name' ? t('tokens.name') : t(`passkeys.${k}`),
    );
    add(region, table(t('passkeys.caption'), heads, rows));
  };

  onSubmit(form, message, async () => {
    const name = byId<HTMLInputElement>('passkey-name').value.trim();
    const optionsJSON = await api<Parameters<typeof startRegistration>[0]['optionsJSON']>(
      '/v4/users/me/passkeys/registration-options',
      { method: 'POST' },
    );
    let response: Awaited<ReturnType<typeof startRegistration>>;
    try {
      response = await startRegistration({ optionsJSON });
    } catch (err) {
      if (cancelledCeremony(err)) return showMessage(message, 'error', t('passkeys.cancelled'));
      throw err;
    }
    const created = await api<PasskeyItem>('/v4/users/me/passkeys', { method: 'POST', json: { name, response } });
    form.reset();
    showMessage(message, 'success', t('passkeys.added', { name: created.name }));
    await render();
  });

  onSubmit(renameForm, renameMessage, async () => {
    if (!renaming) return;
    try {
      await api(`/v4/users/me/passkeys/${encodeURIComponent(renaming.id)}`, {
        method: 'PATCH',
        json: { name: renameInput.value.trim() },
      });
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        renameForm.hidden = true;
        await render();
      }
      throw err;
    }
    renameForm.hidden = true;
    renaming = null;
    showMessage(ctx.message, 'success', t('passkeys.renamed'));
    await render();
  });
  byId('passkey-rename-cancel').addEventListener('click', () => {
    renameForm.hidden = true;
    renaming = null;
  });
  await render();
};

export const PASSKEY_SCRIPTS: Record<string, PageScript> = { passkeys };
