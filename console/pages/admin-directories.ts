/**
 * Script of the directories page (worker/src/pages/admin-pages.ts): LDAP server records
 * (/v3/settings/ldap-servers, with "test connection" showing each step the bridge took) and identity
 * providers (/v3/settings/identity-providers): list, add, edit, enable or disable, delete. One editor
 * serves both, driven by a list of fields; secrets (the bind password, the client secret) are
 * write-only: the page shows whether one is set and sends one only when a new one is typed.
 */
import '../../worker/src/pages/admin-texts.js';
import { api } from '../api.js';
import type { PageScript } from '../context.js';
import { t } from '../i18n.js';
import { add, byId, el, loading, onSubmit, showMessage } from '../ui.js';
import { actionButton, facts, pressedTwice } from './admin-common.js';

type Rec = Record<string, unknown> & { name: string; enabled: boolean };

interface Field {
  key: string;
  /** text: a string (empty: null, or omitted when creating); list: one per line; bool: a checkbox. */
  kind: 'text' | 'area' | 'list' | 'bool' | 'secret';
  required?: boolean;
  /** Set at creation only (the record's name). */
  createOnly?: boolean;
  /** Never null (it has a default): left empty in an edit, it is not sent (kept). */
  notNull?: boolean;
  /** The record's field telling whether the secret is set. */
  isSet?: string;
  type?: string;
}

interface Kind {
  prefix: 'ldap' | 'idp';
  path: string;
  newTitle: string;
  fields: Field[];
  /** Shown in each record's card. */
  summary: (r: Rec) => Array<[string, string]>;
  /** Warnings shown in each record's card (the API's `warnings`), in the page's language. */
  warnings?: (r: Rec) => string[];
  testable: boolean;
}

const LDAP: Kind = {
  prefix: 'ldap',
  path: '/v3/settings/ldap-servers',
  newTitle: 'dir.newLdap',
  testable: true,
  fields: [
    { key: 'name', kind: 'text', required: true, createOnly: true },
    { key: 'urls', kind: 'list', required: true },
    { key: 'startTls', kind: 'bool' },
    { key: 'caCert', kind: 'area' },
    { key: 'bindDn', kind: 'text' },
    { key: 'bindPassword', kind: 'secret', isSet: 'bindPasswordSet' },
    { key: 'baseDn', kind: 'text', required: true },
    { key: 'userFilter', kind: 'text' },
    { key: 'attrDisplayName', kind: 'text' },
    { key: 'attrEmail', kind: 'text' },
    { key: 'attrRole', kind: 'text' },
    { key: 'roleAdminGroup', kind: 'text' },
    { key: 'roleAuditorGroup', kind: 'text' },
    { key: 'enabled', kind: 'bool' },
  ],
  summary: (r) => [
    [t('ldap.urls'), (r.urls as string[]).join(', ')],
    [t('ldap.baseDn'), String(r.baseDn)],
    [t('ldap.bindDn'), String(r.bindDn ?? t('user.none'))],
    [t('ldap.bindPassword'), r.bindPasswordSet ? t('dir.secretSet') : t('dir.secretUnset')],
  ],
  // Plain ldap:// without StartTLS (docs/ldap.md, "Record").
  warnings: (r) =>
    ((r.warnings ?? []) as Array<{ code: string; urls: string[]; message: string }>).map((w) =>
      w.code === 'UNENCRYPTED_BIND' ? t('ldap.unencrypted', { urls: w.urls.join(', ') }) : w.message,
    ),
};

const IDP: Kind = {
  prefix: 'idp',
  path: '/v3/settings/identity-providers',
  newTitle: 'dir.newIdp',
  testable: false,
  fields: [
    { key: 'name', kind: 'text', required: true, createOnly: true },
    { key: 'issuer', kind: 'text', required: true, type: 'url' },
    { key: 'clientId', kind: 'text', required: true },
    { key: 'clientSecret', kind: 'secret', isSet: 'clientSecretSet' },
    { key: 'scopes', kind: 'text', notNull: true },
    { key: 'claimLogin', kind: 'text', notNull: true },
    { key: 'claimDisplayName', kind: 'text', notNull: true },
    { key: 'claimEmail', kind: 'text', notNull: true },
    { key: 'claimRole', kind: 'text' },
    { key: 'enabled', kind: 'bool' },
  ],
  summary: (r) => [
    [t('idp.issuer'), String(r.issuer)],
    [t('idp.clientId'), String(r.clientId)],
    [t('idp.clientSecret'), r.clientSecretSet ? t('dir.secretSet') : t('dir.secretUnset')],
    [t('idp.loginPath'), String(r.loginPath)],
  ],
};

interface Step {
  step: string;
  ok: boolean;
  detail?: string;
  ms: number;
}

/** A step of a connection test in the page's words. */
function stepName(step: string): string {
  const key = `dir.step.${step}`;
  const name = t(key);
  return name === key ? step : name;
}

/** One kind of record: its list, its cards' actions, and its editor. */
async function manage(kind: Kind): Promise<void> {
  const region = byId(`${kind.prefix}-region`);
  const message = byId(`${kind.prefix}-message`);
  const editorBox = byId(`${kind.prefix}-editor`);
  const label = (key: string) => t(`${kind.prefix}.${key}`);
  const itemPath = (name: string) => `${kind.path}/${encodeURIComponent(name)}`;

  const editor = (record: Rec | null) => {
    const id = (key: string) => `${kind.prefix}-f-${key}`;
    const rows = kind.fields
      .filter((f) => !(record && f.createOnly))
      .map((f) => {
        const value = record?.[f.key];
        if (f.kind === 'bool') {
          const box = el('input', { id: id(f.key), type: 'checkbox', name: f.key });
          box.checked = record ? Boolean(value) : f.key === 'enabled';
          return el(
            'p',
            { class: 'check' },
            box,
            ' ',
            el('label', { for: id(f.key) }, f.key === 'enabled' ? t('dir.enabled') : label(f.key)),
          );
        }
        const hintId = `${id(f.key)}-hint`;
        const hint =
          f.kind === 'list'
            ? t('dir.listHint')
            : f.kind === 'secret'
              ? record?.[f.isSet ?? '']
                ? t('dir.secretSet')
                : t('dir.secretUnset')
              : '';
        const attrs = {
          id: id(f.key),
          name: f.key,
          required: Boolean(f.required),
          spellcheck: 'false',
          autocomplete: 'off',
          ...(hint ? { 'aria-describedby': hintId } : {}),
        };
        const control =
          f.kind === 'area' || f.kind === 'list'
            ? el('textarea', { ...attrs, rows: f.kind === 'area' ? '4' : '2' })
            : el('input', {
                ...attrs,
                type: f.kind === 'secret' ? 'password' : (f.type ?? 'text'),
                ...(f.kind === 'secret' ? { autocomplete: 'new-password' } : {}),
              });
        if (f.kind !== 'secret')
          control.value = Array.isArray(value)
            ? value.join('\n')
            : value === null || value === undefined
              ? ''
              : String(value);
        return el(
          'p',
          { class: 'field' },
          el('label', { for: id(f.key) }, label(f.key)),
          hint ? el('span', { id: hintId, class: 'hint' }, hint) : null,
          control,
        );
      });
    const titleId = `${kind.prefix}-editor-title`;
    const formMessage = el('div', { class: 'message', hidden: true });
    const cancel = el('button', { type: 'button', class: 'secondary' }, t('dir.cancel'));
    const form = el(
      'form',
      { class: 'card', 'aria-labelledby': titleId },
      el('h3', { id: titleId, tabindex: '-1' }, record ? t('dir.editing', { name: record.name }) : t(kind.newTitle)),
      ...rows,
      formMessage,
      el('p', { class: 'actions' }, el('button', { type: 'submit' }, t('dir.save')), record ? cancel : null),
    );
    cancel.addEventListener('click', () => editor(null));
    onSubmit(form, formMessage, async () => {
      const body: Record<string, unknown> = {};
      for (const f of kind.fields) {
        if (record && f.createOnly) continue;
        const control = form.querySelector<HTMLInputElement>(`#${id(f.key)}`);
        if (!control) continue;
        const text = control.value.trim();
        if (f.kind === 'bool') body[f.key] = control.checked;
        else if (f.kind === 'list')
          body[f.key] = text
            .split('\n')
            .map((x) => x.trim())
            .filter(Boolean);
        else if (f.kind === 'secret') {
          if (text) body[f.key] = control.value;
        } else if (text) body[f.key] = f.kind === 'area' ? control.value : text;
        else if (record && !f.required && !f.notNull) body[f.key] = null;
      }
      const name = record ? record.name : String(body.name);
      await api(record ? itemPath(name) : kind.path, { method: record ? 'PATCH' : 'POST', json: body });
      showMessage(message, 'success', t('dir.saved', { name }));
      await list();
      editor(null);
    });
    editorBox.replaceChildren(form);
    return form;
  };

  const testRun = async (r: Rec, out: HTMLElement) => {
    const result = await api<{ ok: boolean; url: string | null; activeDirectory: boolean | null; steps: Step[] }>(
      `${itemPath(r.name)}/test`,
      { method: 'POST' },
    );
    const steps = el(
      'ol',
      { class: 'steps', 'aria-label': t('dir.steps', { name: r.name }) },
      ...result.steps.map((s) =>
        el(
          'li',
          { class: s.ok ? 'met' : 'unmet' },
          // The step in the page's words (its name as the bridge gives it otherwise); the directory's own
          // reason is quoted as code, as the directory said it.
          el('strong', {}, stepName(s.step)),
          ` — ${s.ok ? t('dir.stepOk') : t('dir.stepFailed')} (${t('dir.ms', { ms: s.ms })})`,
          ...(s.detail ? [': ', el('code', {}, s.detail)] : []),
        ),
      ),
    );
    showMessage(
      out,
      result.ok ? 'success' : 'error',
      result.ok ? t('dir.testOk', { name: r.name, url: result.url ?? '' }) : t('dir.testFailed', { name: r.name }),
      [steps, result.activeDirectory ? el('p', {}, t('dir.ad')) : null],
    );
  };

  const card = (r: Rec) => {
    const out = el('div', { class: 'message', hidden: true, id: `${kind.prefix}-test-${r.name}` });
    const button = (text: string, aria: string, cls: 'secondary' | 'danger', action: () => Promise<void>) =>
      actionButton(text, { aria, cls, errors: out, clears: message }, action);
    const edit = button(t('dir.edit'), t('dir.editNamed', { name: r.name }), 'secondary', async () => {
      editor(r).querySelector<HTMLElement>('h3')?.focus();
    });
    const del = button(
      t('dir.delete'),
      t('dir.deleteNamed', { name: r.name }),
      'danger',
      pressedTwice(out, t('dir.deleteConfirm', { name: r.name }), async () => {
        await api(itemPath(r.name), { method: 'DELETE' });
        showMessage(message, 'success', t('dir.deleted', { name: r.name }));
        await list();
      }),
    );
    const test = kind.testable
      ? button(t('dir.test'), t('dir.testNamed', { name: r.name }), 'secondary', () => testRun(r, out))
      : null;
    return el(
      'article',
      { class: 'card', 'aria-labelledby': `${kind.prefix}-card-${r.name}`, 'data-record': r.name },
      el('h3', { id: `${kind.prefix}-card-${r.name}` }, `${r.name} (${r.enabled ? t('dir.on') : t('dir.off')})`),
      el('dl', { class: 'facts' }, ...facts(kind.summary(r))),
      ...(kind.warnings?.(r) ?? []).map((w) =>
        el('div', { class: 'message message-error', role: 'note', 'data-warning': '' }, el('p', {}, w)),
      ),
      el('p', { class: 'actions' }, test, edit, del),
      out,
    );
  };

  const list = async () => {
    region.replaceChildren();
    const r = await loading(region, () => api<{ items: Rec[] }>(kind.path));
    if (!r) return false;
    if (r.items.length === 0) add(region, el('p', {}, t('dir.empty')));
    for (const rec of r.items) add(region, card(rec));
    return true;
  };
  if (await list()) editor(null);
}

const directories: PageScript = async () => {
  await Promise.all([manage(LDAP), manage(IDP)]);
};

export const DIRECTORIES_SCRIPTS: Record<string, PageScript> = { 'admin-directories': directories };
