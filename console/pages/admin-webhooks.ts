/**
 * Script of the webhooks page (worker/src/pages/admin-pages.ts, docs/webhooks.md): the subscriptions of
 * /v4/webhooks as cards (address, event types, state, the queue), an editor that adds or changes one, a new
 * signing secret (shown once, as at creation), a test event, the recent deliveries with a redelivery, and a
 * delete that asks twice.
 */
import '../../worker/src/pages/admin-texts.js';
import { api } from '../api.js';
import type { PageScript } from '../context.js';
import { formatDate, t } from '../i18n.js';
import { add, byId, el, loading, onSubmit, showMessage, table } from '../ui.js';
import { actionButton, facts, pressedTwice } from './admin-common.js';

interface Webhook {
  id: string;
  url: string;
  eventTypes: string[];
  enabled: boolean;
  description: string;
  delivery: 'direct' | 'bridge';
  disabledReason: 'gone' | 'failing' | null;
  failingSince: string | null;
  queue: { depth: number; oldestAgeSeconds: number | null };
  secret?: string;
}

interface Delivery {
  id: string;
  type: string;
  at: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastStatus: number | null;
}

const lines = (text: string) =>
  text
    .split('\n')
    .map((x) => x.trim())
    .filter(Boolean);

function stateText(h: Webhook): string {
  if (h.disabledReason) return t(`hook.disabled.${h.disabledReason}`);
  if (!h.enabled) return t('hook.off');
  return h.failingSince
    ? `${t('hook.on')}, ${t('hook.failingSince', { at: formatDate(h.failingSince) })}`
    : t('hook.on');
}

const webhooks: PageScript = async () => {
  const region = byId('hook-region');
  const message = byId('hook-message');
  const editorBox = byId('hook-editor');
  const itemPath = (id: string) => `/v4/webhooks/${encodeURIComponent(id)}`;
  const showSecret = (url: string, secret: string) =>
    showMessage(message, 'success', t('hook.secret', { url, secret }));

  const editor = (record: Webhook | null) => {
    const id = (key: string) => `hook-f-${key}`;
    const titleId = 'hook-editor-title';
    const url = el('input', { id: id('url'), name: 'url', type: 'url', required: true, spellcheck: 'false' });
    url.value = record?.url ?? '';
    const types = el('textarea', { id: id('eventTypes'), name: 'eventTypes', rows: '3', spellcheck: 'false' });
    types.value = (record?.eventTypes ?? []).join('\n');
    const description = el('input', { id: id('description'), name: 'description', maxlength: '500' });
    description.value = record?.description ?? '';
    // Through the bridge: a receiver behind a private CA (docs/webhooks.md, "Targets").
    const via = el(
      'select',
      { id: id('via'), name: 'delivery' },
      ...(['direct', 'bridge'] as const).map((v) => el('option', { value: v }, t(`hook.via.${v}`))),
    );
    via.value = record?.delivery ?? 'direct';
    const enabled = el('input', { id: id('enabled'), name: 'enabled', type: 'checkbox' });
    enabled.checked = record?.enabled ?? true;
    const formMessage = el('div', { class: 'message', hidden: true });
    const cancel = el('button', { type: 'button', class: 'secondary' }, t('dir.cancel'));
    const field = (key: string, input: Node) =>
      el('p', { class: 'field' }, el('label', { for: id(key) }, t(`hook.${key}`)), input);
    const form = el(
      'form',
      { class: 'card', 'aria-labelledby': titleId },
      el('h3', { id: titleId, tabindex: '-1' }, record ? t('dir.editing', { name: record.url }) : t('hook.new')),
      field('url', url),
      field('eventTypes', types),
      field('description', description),
      field('via', via),
      el('p', { class: 'check' }, enabled, ' ', el('label', { for: id('enabled') }, t('hook.enabled'))),
      formMessage,
      el('p', { class: 'actions' }, el('button', { type: 'submit' }, t('dir.save')), record ? cancel : null),
    );
    cancel.addEventListener('click', () => editor(null));
    onSubmit(form, formMessage, async () => {
      const body = {
        url: url.value.trim(),
        eventTypes: lines(types.value),
        description: description.value.trim(),
        enabled: enabled.checked,
        delivery: via.value,
      };
      if (record) {
        await api(itemPath(record.id), { method: 'PATCH', json: body });
        showMessage(message, 'success', t('dir.saved', { name: body.url }));
      } else {
        const made = await api<Webhook>('/v4/webhooks', { method: 'POST', json: body });
        showSecret(made.url, made.secret ?? '');
      }
      await list();
      editor(null);
    });
    editorBox.replaceChildren(form);
    return form;
  };

  const card = (h: Webhook) => {
    const out = el('div', { class: 'message', hidden: true });
    const attempts = el('div', {});
    const button = (text: string, aria: string, cls: 'secondary' | 'danger', action: () => Promise<void>) =>
      actionButton(text, { aria, cls, errors: out, clears: message }, action);
    const showAttempts = async () => {
      const r = await loading(attempts, () => api<{ items: Delivery[] }>(`${itemPath(h.id)}/deliveries`));
      if (!r) return;
      if (r.items.length === 0) return attempts.replaceChildren(el('p', {}, t('hook.attemptsEmpty')));
      const rows = r.items.map((d) => [
        formatDate(d.at),
        el('code', {}, d.type),
        t(`hook.delivery.${d.state}`),
        String(d.attempts),
        d.lastStatus === null ? '—' : String(d.lastStatus),
        button(t('hook.redeliver'), t('hook.redeliverNamed', { id: d.id }), 'secondary', async () => {
          await api(`${itemPath(h.id)}/deliveries/${encodeURIComponent(d.id)}/redeliver`, { method: 'POST' });
          showMessage(out, 'success', t('hook.redelivered'));
          await showAttempts();
        }),
      ]);
      const heads = ['at', 'type', 'state', 'attempts', 'status', 'actions'].map((k) => t(`hook.col.${k}`));
      attempts.replaceChildren(table(t('hook.attemptsCaption', { url: h.url }), heads, rows));
    };
    const edit = button(t('dir.edit'), t('dir.editNamed', { name: h.url }), 'secondary', async () => {
      editor(h).querySelector<HTMLElement>('h3')?.focus();
    });
    const test = button(t('hook.test'), t('hook.testNamed', { url: h.url }), 'secondary', async () => {
      await api(`${itemPath(h.id)}/test`, { method: 'POST' });
      showMessage(out, 'success', t('hook.testSent'));
    });
    const rotate = button(t('hook.rotate'), t('hook.rotateNamed', { url: h.url }), 'secondary', async () => {
      showSecret(h.url, (await api<{ secret: string }>(`${itemPath(h.id)}/rotate-secret`, { method: 'POST' })).secret);
    });
    const recent = button(t('hook.attempts'), t('hook.attemptsNamed', { url: h.url }), 'secondary', showAttempts);
    const del = button(
      t('dir.delete'),
      t('dir.deleteNamed', { name: h.url }),
      'danger',
      pressedTwice(out, t('dir.deleteConfirm', { name: h.url }), async () => {
        await api(itemPath(h.id), { method: 'DELETE' });
        showMessage(message, 'success', t('dir.deleted', { name: h.url }));
        await list();
      }),
    );
    const queue =
      h.queue.depth === 0 ? '0' : t('hook.queueText', { depth: h.queue.depth, age: h.queue.oldestAgeSeconds ?? 0 });
    return el(
      'article',
      { class: 'card', 'aria-labelledby': `hook-card-${h.id}`, 'data-record': h.id },
      el('h3', { id: `hook-card-${h.id}` }, el('code', {}, h.url)),
      el(
        'dl',
        { class: 'facts' },
        ...facts([
          [t('hook.eventTypes'), el('code', {}, h.eventTypes.join(', '))],
          [t('hook.description'), h.description || '—'],
          [t('hook.via'), t(`hook.via.${h.delivery}`)],
          [t('hook.state'), stateText(h)],
          [t('hook.queue'), queue],
        ]),
      ),
      el('p', { class: 'actions' }, edit, test, recent, rotate, del),
      out,
      attempts,
    );
  };

  const list = async () => {
    region.replaceChildren();
    const r = await loading(region, () => api<{ items: Webhook[] }>('/v4/webhooks'));
    if (!r) return false;
    if (r.items.length === 0) add(region, el('p', {}, t('hook.empty')));
    for (const h of r.items) add(region, card(h));
    return true;
  };
  if (await list()) editor(null);
};

export const WEBHOOKS_SCRIPTS: Record<string, PageScript> = { 'admin-webhooks': webhooks };
