/**
 * An administrator's view of a user's second factors on the user's page (worker/src/pages/
 * security-pages.ts, userFactorsSection): the factors (never a secret) and the recovery codes left,
 * and their removal after a confirmation (GET and DELETE /v4/users/{id}/second-factors).
 */
import '../../worker/src/pages/security-texts.js';
import { api } from '../api.js';
import { formatDate, t } from '../i18n.js';
import { add, byId, el, showError, showMessage, table, whileBusy } from '../ui.js';

interface SecondFactors {
  factors: Array<{ kind: string; confirmedAt: string; lastUsedAt: string | null }>;
  recoveryCodes: { left: number };
}

/**
 * Wires the section for the user at `path` (/v4/users/{id}); `login` names them in the confirmation;
 * `removed` runs after a removal (it ended the user's sessions).
 */
export async function wireUserFactors(path: string, login: () => string, removed: () => Promise<void>): Promise<void> {
  const region = byId('user-factors');
  const message = byId('user-factors-message');
  const remove = byId<HTMLButtonElement>('user-factors-remove');
  const confirm = byId('user-factors-confirm');
  const yes = byId<HTMLButtonElement>('user-factors-yes');

  const render = async () => {
    region.replaceChildren();
    confirm.hidden = true;
    let state: SecondFactors;
    try {
      state = await api<SecondFactors>(`${path}/second-factors`);
    } catch (err) {
      remove.hidden = true;
      return showError(message, err);
    }
    remove.hidden = state.factors.length === 0 && state.recoveryCodes.left === 0;
    if (state.factors.length === 0) add(region, el('p', {}, t('userfactors.none')));
    else {
      const heads = ['kind', 'confirmed', 'lastUsed'].map((k) => t(`userfactors.${k}`));
      const rows = state.factors.map((f) => [
        t(`userfactors.kind.${f.kind}`),
        formatDate(f.confirmedAt),
        formatDate(f.lastUsedAt) || t('userfactors.never'),
      ]);
      add(region, table(t('userfactors.caption'), heads, rows));
    }
    add(region, el('p', {}, t('userfactors.codesLeft', { n: state.recoveryCodes.left })));
  };

  remove.addEventListener('click', () => {
    byId('user-factors-question').textContent = t('userfactors.removeConfirm', { login: login() });
    confirm.hidden = false;
    yes.focus();
  });
  byId('user-factors-cancel').addEventListener('click', () => {
    confirm.hidden = true;
    remove.focus();
  });
  yes.addEventListener(
    'click',
    () =>
      void whileBusy(yes, async () => {
        showMessage(message, null);
        try {
          await api(`${path}/second-factors`, { method: 'DELETE' });
        } catch (err) {
          return showError(message, err);
        }
        await Promise.all([render(), removed()]);
        showMessage(message, 'success', t('userfactors.removed'));
        message.setAttribute('tabindex', '-1');
        message.focus();
      }),
  );
  await render();
}
