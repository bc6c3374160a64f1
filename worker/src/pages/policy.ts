/**
 * The password policy as a page shows it: one list item per rule in force, and the policy itself in
 * `data-policy` (JSON) so the page's script checks a new password as it is typed with the same
 * function the service uses (passwords/policy.ts, checkPassword). The list of common passwords is
 * too large for a page (docs/security.md, "Password blocklist"): its rule is listed, marked `data-on-send`, and
 * checked by the service when the password is sent; a refusal names it in words.
 */
import { html } from 'hono/html';
import { CONTEXT_WORD_MIN, passwordPolicy, type PolicyRule } from '../passwords/policy.js';
import type { PageRender } from './page.js';

/** The rules of the policy in force with their limits (rules with a limit of 0 are not shown). */
export function policyRules(r: PageRender): Array<{ rule: PolicyRule; n: number }> {
  const p = passwordPolicy(r.config);
  const rules: Array<{ rule: PolicyRule; n: number }> = [
    { rule: 'min_length', n: p.minLength },
    { rule: 'max_length', n: p.maxLength },
    { rule: 'special_min', n: p.specialMin },
    { rule: 'digit_min', n: p.digitMin },
    { rule: 'lower_min', n: p.lowerMin },
    { rule: 'upper_min', n: p.upperMin },
  ];
  return rules.filter((x) => x.n > 0);
}

/** The policy list (id `${id}`), described by the new-password input. */
export function policyList(r: PageRender, id: string) {
  const p = passwordPolicy(r.config);
  const symbols = p.specialSymbols.join(' ');
  const item = (x: { rule: PolicyRule; n: number }) =>
    html`<li data-rule="${x.rule}">${r.t(`policy.${x.rule}`, { n: x.n, symbols })}<span
class="visually-hidden rule-state"></span></li>`;
  return html`<div class="policy"><p id="${id}-title">${r.t('password.policy')}</p>
<ul id="${id}" class="policy-rules" aria-labelledby="${id}-title" data-policy="${JSON.stringify(p)}"
>${policyRules(r).map(item)}<li data-rule="disallowed_character">${r.t('policy.disallowed_character')}<span
class="visually-hidden rule-state"></span></li>${blocklistItems(r, p.serviceName)}</ul></div>`;
}

/** The blocklist rules: the login, the service name (checked as typed) and the common passwords (when sent). */
function blocklistItems(r: PageRender, serviceName: string) {
  const state = html`<span class="visually-hidden rule-state"></span>`;
  const name = [...serviceName].length >= CONTEXT_WORD_MIN ? serviceName : '';
  return html`<li data-rule="contains_login">${r.t('policy.contains_login')}${state}</li>${
    name
      ? html`<li data-rule="contains_service_name">${r.t('policy.contains_service_name', { name })}${state}</li>`
      : ''
  }<li data-rule="common_password" data-on-send>${r.t('policy.common_password')}${state}</li>`;
}

/** The new password and its repetition, with the policy shown; ids `${prefix}-new`, `${prefix}-repeat`. */
export function newPasswordFields(r: PageRender, prefix: string) {
  return html`${policyList(r, `${prefix}-policy`)}
<p class="field"><label for="${prefix}-new">${r.t('password.new')}</label>
<input id="${prefix}-new" name="newPassword" type="password" autocomplete="new-password" required
aria-describedby="${prefix}-policy-title ${prefix}-policy"></p>
<p class="field"><label for="${prefix}-repeat">${r.t('password.repeat')}</label>
<input id="${prefix}-repeat" name="repeat" type="password" autocomplete="new-password" required></p>`;
}
