/**
 * Live check of a new password against the policy the page shows (`data-policy`), with the
 * service's own rule function, so the page and the API never disagree on the rules.
 */
import { checkPassword, type PasswordPolicy } from '../../worker/src/passwords/policy.js';
import { ApiError } from '../api.js';
import { t } from '../i18n.js';
import { byId, el, showError, showMessage } from '../ui.js';

/**
 * Marks each rule of the list met or not as `input` changes; returns whether the password passes. `login`
 * is the account's login when the page knows it (else contains_login, like common_password, which only
 * the service can check, stays unmarked until the service answers).
 */
export function watchPolicy(listId: string, input: HTMLInputElement, login?: () => string): () => boolean {
  const list = byId(listId);
  const policy = JSON.parse(list.dataset.policy ?? '{}') as PasswordPolicy;
  const update = (): boolean => {
    const known = login?.() ?? '';
    const broken = new Set(checkPassword(input.value, policy, { login: known }).map((v) => v.rule));
    for (const item of list.querySelectorAll<HTMLElement>('li[data-rule]')) {
      const unchecked = item.dataset.onSend !== undefined || (item.dataset.rule === 'contains_login' && known === '');
      if (unchecked) {
        item.classList.remove('met', 'unmet');
        const state = item.querySelector('.rule-state');
        if (state) state.textContent = '';
        continue;
      }
      const met = input.value !== '' && !broken.has(item.dataset.rule as never);
      item.classList.toggle('met', met);
      item.classList.toggle('unmet', input.value !== '' && !met);
      const state = item.querySelector('.rule-state');
      if (state) state.textContent = input.value === '' ? '' : ` (${t(met ? 'policy.met' : 'policy.unmet')})`;
    }
    return broken.size === 0;
  };
  input.addEventListener('input', update);
  // A reset clears the field without an input event: check again once it has (the reset follows its event).
  input.form?.addEventListener('reset', () => setTimeout(update, 0));
  return update;
}

/** Checks the repetition; shows the mismatch and answers false when the two differ. */
export function repeatMatches(newInput: HTMLInputElement, repeat: HTMLInputElement, region: HTMLElement): boolean {
  if (newInput.value === repeat.value) return true;
  showMessage(region, 'error', t('password.mismatch'));
  repeat.focus();
  return false;
}

/** The words of a rule as the page's policy list shows them (its first text), if the page lists it. */
function ruleWords(rule: string): string | undefined {
  const item = document.querySelector<HTMLElement>(`li[data-rule="${CSS.escape(rule)}"]`);
  return item?.firstChild?.textContent?.trim() || undefined;
}

/**
 * Shows a PASSWORD_POLICY problem as one message: a heading and each broken rule once, in the page's
 * words (the policy list's) where it lists the rule, else the service's.
 */
export function showPolicyProblem(region: HTMLElement, err: unknown): void {
  if (err instanceof ApiError && err.code === 'PASSWORD_POLICY') {
    const violations = (err.problem.violations as Array<{ rule: string; message: string }> | undefined) ?? [];
    // The rules only the service checks are marked by its answer (until the password is typed again).
    const broken = new Set(violations.map((v) => v.rule));
    for (const item of document.querySelectorAll<HTMLElement>('li[data-rule][data-on-send]')) {
      const unmet = broken.has(item.dataset.rule ?? '');
      item.classList.toggle('unmet', unmet);
      const state = item.querySelector('.rule-state');
      if (state) state.textContent = unmet ? ` (${t('policy.unmet')})` : '';
    }
    const rules = violations.map((v) => ruleWords(v.rule) ?? v.message);
    showMessage(region, 'error', t('policy.refused'), [el('ul', {}, ...rules.map((r) => el('li', {}, r)))]);
    return;
  }
  showError(region, err);
}
