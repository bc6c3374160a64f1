/**
 * "Send a test mail" on the settings page (docs/mail.md, "Test mail"): a recipient and a button below
 * the Mail group; POST /v3/settings/mail/test with the saved settings, and the result in words.
 */
import '../../worker/src/pages/mail-texts.js';
import { api } from '../api.js';
import { t } from '../i18n.js';
import { el, onSubmit, showMessage } from '../ui.js';

interface MailTestResult {
  outcome: 'sent' | 'refused' | 'failed' | 'outbox' | 'not_configured';
  to: string;
  server: string | null;
  stage: string | null;
  responseCode: number | null;
  response: string | null;
  file: string | null;
  detail: string;
}

/** The result in words, in the page's language. */
function words(r: MailTestResult): string {
  const reply = r.responseCode ? `${r.responseCode} ${r.response ?? ''}`.trim() : (r.response ?? '');
  const stage = r.stage ? t(`mailTest.stage.${r.stage}`) : '';
  const vars = { server: r.server ?? '', to: r.to, reply, stage, file: r.file ?? '', detail: r.detail };
  return t(r.outcome === 'not_configured' ? 'mailTest.notConfigured' : `mailTest.${r.outcome}`, vars);
}

/** The test-mail form. */
export function mailTestForm(): HTMLFormElement {
  const message = el('div', { class: 'message', id: 'mail-test-message', role: 'status', hidden: true });
  const to = el('input', { id: 'mail-test-to', name: 'to', type: 'email', autocomplete: 'email', spellcheck: 'false' });
  const form = el(
    'form',
    { class: 'card', id: 'mail-test', 'aria-labelledby': 'mail-test-title' },
    el('h2', { id: 'mail-test-title' }, t('mailTest.title')),
    el('p', { class: 'hint', id: 'mail-test-hint' }, t('mailTest.hint')),
    el('p', { class: 'field' }, el('label', { for: 'mail-test-to' }, t('mailTest.to')), to),
    message,
    el('p', { class: 'actions' }, el('button', { type: 'submit' }, t('mailTest.send'))),
  );
  to.setAttribute('aria-describedby', 'mail-test-hint');
  onSubmit(form, message, async () => {
    const recipient = to.value.trim();
    const r = await api<MailTestResult>('/v3/settings/mail/test', {
      method: 'POST',
      json: recipient ? { to: recipient } : {},
    });
    // Why nothing was tried is the service's sentence naming variables: quoted as code under the page's words.
    // So is the outbox file's path.
    const quoted = r.outcome === 'not_configured' ? r.detail : r.outcome === 'outbox' ? r.file : null;
    const why = quoted ? [el('p', {}, el('code', {}, quoted))] : [];
    showMessage(message, r.outcome === 'sent' || r.outcome === 'outbox' ? 'success' : 'error', words(r), why);
  });
  return form;
}
