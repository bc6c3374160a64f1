/** The HTML of the first-run page: the form, its errors, and what to do once the administrator exists. */
import { html } from 'hono/html';
import { CONTEXT_WORD_MIN, checkPassword, type PasswordPolicy } from '../passwords/policy.js';
import { htmlDocument } from '../http/html.js';

/** No script at all; forms post to this page only. */
export const FIRST_RUN_CSP = [
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const STYLE = html`<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 34rem; margin: 3rem auto; padding: 0 1rem; }
label { display: block; margin-top: 1rem; }
input { width: 100%; padding: .4rem; font: inherit; box-sizing: border-box; }
button { margin-top: 1.5rem; padding: .5rem 1.2rem; font: inherit; }
.errors { color: #a00; }
code { background: #eee; padding: 0 .2rem; }
</style>`;

/** The password policy in words: what a new password needs. */
export function policyInWords(policy: PasswordPolicy): string[] {
  // The violations of an empty password are exactly the minimums of the policy.
  const minimums = checkPassword('', policy)
    .filter((v) => v.rule !== 'min_length')
    .map((v) => v.message);
  const name = [...policy.serviceName].length >= CONTEXT_WORD_MIN ? ` or "${policy.serviceName}"` : '';
  const blocklist = `not one of the most common passwords, and not containing the login${name}`;
  return [`${policy.minLength} to ${policy.maxLength} characters`, ...minimums, blocklist];
}

export interface FormOptions {
  title: string;
  action: string;
  policy: PasswordPolicy;
  /** The login of a refused attempt, shown again. */
  login?: string;
  /** The one-time code of a refused attempt, kept (it is long, and typed from a terminal). */
  code?: string;
  errors?: string[];
}

/** The form that creates the first administrator (with the errors of a refused attempt). */
export function firstRunForm(o: FormOptions) {
  const errors = o.errors ?? [];
  return htmlDocument({
    title: `${o.title} — first administrator`,
    head: STYLE,
    body: html`<h1>Create the first administrator</h1>
<p>No administrator exists yet. This page answers only on this machine, and disappears once an administrator exists.</p>
${errors.length > 0 ? html`<ul class="errors" role="alert">${errors.map((e) => html`<li>${e}</li>`)}</ul>` : ''}
<form method="post" action="${o.action}">
<label>One-time code <input name="code" required maxlength="100" autocomplete="off" spellcheck="false"
 aria-describedby="code-hint" value="${o.code ?? ''}"></label>
<p id="code-hint">Printed by <code>npm start</code> (or <code>npm run dev:edge</code>) in its terminal when it started:
it proves that you are at this machine.</p>
<label>Login <input name="login" required maxlength="150" autocomplete="username" value="${o.login ?? ''}"></label>
<label>Password <input name="password" type="password" required autocomplete="new-password"></label>
<label>Repeat the password <input name="passwordRepeat" type="password" required autocomplete="new-password"></label>
<p>The password needs: ${policyInWords(o.policy).join('; ')}.</p>
<button type="submit">Create the administrator</button>
</form>`,
  });
}

/** What the page shows once the administrator is created. */
export function firstRunDone(o: {
  title: string;
  login: string;
  docsUrl: string;
  apiUrl: string;
  /** The web console's sign-in page. */
  signInUrl: string;
}) {
  return htmlDocument({
    title: `${o.title} — administrator created`,
    head: STYLE,
    body: html`<h1>Administrator "${o.login}" created</h1>
<p>This page is now gone. <a href="${o.signInUrl}">Sign in to the web console</a> with that login and
password.</p>
<p>Or use the API, in <a href="${o.docsUrl}">the API docs</a> (Authorize), or:</p>
<p><code>curl -u '${o.login}:YOUR-PASSWORD' -X POST ${o.apiUrl}/v3/login_without_session</code></p>
<p>Should the password be forgotten or the account locked:
<code>npm run ops -- reset-password ${o.login}</code> or <code>npm run ops -- unlock ${o.login}</code>
on a machine that reaches the database.</p>`,
  });
}
