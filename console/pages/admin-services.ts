/**
 * Script of the protected services page (worker/src/pages/admin-pages.ts, docs/integration.md): the
 * records of /v4/services as cards (hosts, prefixes, who may enter, the client id), an editor that adds
 * or changes one, a new secret (shown once, as at creation) and a delete that asks twice.
 */
import '../../worker/src/pages/admin-texts.js';
import { api } from '../api.js';
import type { PageScript } from '../context.js';
import { t } from '../i18n.js';
import { add, byId, el, loading, onSubmit, showMessage } from '../ui.js';
import { actionButton, facts, pressedTwice } from './admin-common.js';

interface Service {
  name: string;
  hosts: string[];
  prefixes: string[];
  access: { anyAccount: boolean; roles: string[]; accounts: string[]; groups: string[] };
  requireSecondFactor: boolean;
  allowBasic: boolean;
  clientId: string;
  clientSecret?: string;
}

const ROLES = ['admin', 'auditor', 'user'];
const lines = (text: string) =>
  text
    .split('\n')
    .map((x) => x.trim())
    .filter(Boolean);

function accessText(s: Service): string {
  if (s.access.anyAccount) return t('svc.anyone');
  const named = [...s.access.roles.map((r) => t(`role.${r}`)), ...s.access.accounts, ...s.access.groups];
  return named.length ? named.join(', ') : t('svc.nobody');
}

const services: PageScript = async () => {
  const region = byId('svc-region');
  const message = byId('svc-message');
  const editorBox = byId('svc-editor');
  const itemPath = (name: string) => `/v4/services/${encodeURIComponent(name)}`;
  const showSecret = (s: Service) =>
    showMessage(message, 'success', t('svc.secret', { name: s.name, secret: s.clientSecret ?? '' }));

  const editor = (record: Service | null) => {
    const id = (key: string) => `svc-f-${key}`;
    const area = (key: string, value: string[]) => {
      const box = el('textarea', { id: id(key), name: key, rows: '2', spellcheck: 'false', autocomplete: 'off' });
      box.value = value.join('\n');
      return el(
        'p',
        { class: 'field' },
        el('label', { for: id(key) }, t(`svc.${key}`)),
        el('span', { id: `${id(key)}-hint`, class: 'hint' }, t('dir.listHint')),
        box,
      );
    };
    const check = (key: string, checked: boolean, label: string) => {
      const box = el('input', { id: id(key), type: 'checkbox', name: key });
      box.checked = checked;
      return el('p', { class: 'check' }, box, ' ', el('label', { for: id(key) }, label));
    };
    const name = el('input', {
      id: id('name'),
      name: 'name',
      required: true,
      spellcheck: 'false',
      autocomplete: 'off',
    });
    const titleId = 'svc-editor-title';
    const formMessage = el('div', { class: 'message', hidden: true });
    const cancel = el('button', { type: 'button', class: 'secondary' }, t('dir.cancel'));
    const roles = el(
      'fieldset',
      {},
      el('legend', {}, t('svc.roles')),
      ...ROLES.map((r) => check(`role-${r}`, record?.access.roles.includes(r) ?? false, t(`role.${r}`))),
    );
    const form = el(
      'form',
      { class: 'card', 'aria-labelledby': titleId },
      el('h3', { id: titleId, tabindex: '-1' }, record ? t('dir.editing', { name: record.name }) : t('svc.new')),
      record ? null : el('p', { class: 'field' }, el('label', { for: id('name') }, t('svc.name')), name),
      area('hosts', record?.hosts ?? []),
      area('prefixes', record?.prefixes ?? []),
      check('anyAccount', record?.access.anyAccount ?? true, t('svc.anyAccount')),
      roles,
      area('accounts', record?.access.accounts ?? []),
      area('groups', record?.access.groups ?? []),
      check('requireSecondFactor', record?.requireSecondFactor ?? false, t('svc.requireSecondFactor')),
      check('allowBasic', record?.allowBasic ?? false, t('svc.allowBasic')),
      formMessage,
      el('p', { class: 'actions' }, el('button', { type: 'submit' }, t('dir.save')), record ? cancel : null),
    );
    cancel.addEventListener('click', () => editor(null));
    const value = (key: string) => form.querySelector<HTMLInputElement>(`#${id(key)}`)!;
    onSubmit(form, formMessage, async () => {
      const body = {
        hosts: lines(value('hosts').value),
        prefixes: lines(value('prefixes').value),
        access: {
          anyAccount: value('anyAccount').checked,
          roles: ROLES.filter((r) => value(`role-${r}`).checked),
          accounts: lines(value('accounts').value),
          groups: lines(value('groups').value),
        },
        requireSecondFactor: value('requireSecondFactor').checked,
        allowBasic: value('allowBasic').checked,
      };
      if (record) {
        await api(itemPath(record.name), { method: 'PATCH', json: body });
        showMessage(message, 'success', t('dir.saved', { name: record.name }));
      } else {
        showSecret(await api<Service>('/v4/services', { method: 'POST', json: { name: name.value.trim(), ...body } }));
      }
      await list();
      editor(null);
    });
    editorBox.replaceChildren(form);
    return form;
  };

  const card = (s: Service) => {
    const out = el('div', { class: 'message', hidden: true });
    const button = (text: string, aria: string, cls: 'secondary' | 'danger', action: () => Promise<void>) =>
      actionButton(text, { aria, cls, errors: out, clears: message }, action);
    const edit = button(t('dir.edit'), t('dir.editNamed', { name: s.name }), 'secondary', async () => {
      editor(s).querySelector<HTMLElement>('h3')?.focus();
    });
    const rotate = button(t('svc.rotate'), t('svc.rotateNamed', { name: s.name }), 'secondary', async () => {
      showSecret(await api<Service>(`${itemPath(s.name)}/secret`, { method: 'POST' }));
    });
    const del = button(
      t('dir.delete'),
      t('dir.deleteNamed', { name: s.name }),
      'danger',
      pressedTwice(out, t('dir.deleteConfirm', { name: s.name }), async () => {
        await api(itemPath(s.name), { method: 'DELETE' });
        showMessage(message, 'success', t('dir.deleted', { name: s.name }));
        await list();
      }),
    );
    const yesNo = (b: boolean) => (b ? t('svc.yes') : t('svc.no'));
    return el(
      'article',
      { class: 'card', 'aria-labelledby': `svc-card-${s.name}`, 'data-record': s.name },
      el('h3', { id: `svc-card-${s.name}` }, s.name),
      el(
        'dl',
        { class: 'facts' },
        ...facts([
          [t('svc.hosts'), s.hosts.join(', ') || '—'],
          [t('svc.prefixes'), s.prefixes.join(', ') || '—'],
          [t('svc.access'), accessText(s)],
          [t('svc.requireSecondFactor'), yesNo(s.requireSecondFactor)],
          [t('svc.allowBasic'), yesNo(s.allowBasic)],
          [t('svc.clientId'), el('code', {}, s.clientId)],
        ]),
      ),
      el('p', { class: 'actions' }, edit, rotate, del),
      out,
    );
  };

  const list = async () => {
    region.replaceChildren();
    const r = await loading(region, () => api<{ items: Service[] }>('/v4/services'));
    if (!r) return false;
    if (r.items.length === 0) add(region, el('p', {}, t('svc.empty')));
    for (const s of r.items) add(region, card(s));
    return true;
  };
  if (await list()) editor(null);
};

export const SERVICES_SCRIPTS: Record<string, PageScript> = { 'admin-services': services };
