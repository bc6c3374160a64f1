/**
 * Script of the settings page (worker/src/pages/admin-pages.ts): every UI-editable variable of
 * GET /v3/settings, grouped as the API groups them (the specification's groups), each with its type,
 * accepted values, default and source; a group is saved in one PATCH (atomic: one bad value refuses
 * all, each named), a saved value is reset with DELETE /v3/settings/{name}. Secrets are write-only:
 * the page only says whether one is set, and sends a secret only when a new one is typed.
 */
import '../../worker/src/pages/admin-texts.js';
import '../../worker/src/pages/settings-texts.js';
import { ApiError, api } from '../api.js';
import type { PageScript } from '../context.js';
import { t } from '../i18n.js';
import { add, byId, el, loading, onSubmit, showError, showMessage, whileBusy } from '../ui.js';
import { mailTestForm } from './mail-test.js';

type Value = string | number | boolean | string[];

interface Setting {
  name: string;
  env: string;
  group: string;
  type: 'string' | 'integer' | 'boolean' | 'list' | 'enumeration' | 'number';
  value?: Value;
  isSet?: boolean;
  source: 'ui' | 'env' | 'default';
  default?: Value;
  accepted: string;
  min?: number;
  max?: number;
  values?: string[];
  secret: boolean;
  restartRequired: boolean;
  description: string;
}

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/** A text of the dictionary, or undefined when it has none (the API's English is used instead). */
function known(key: string, vars: Record<string, string | number> = {}): string | undefined {
  const value = t(key, vars);
  return value === key ? undefined : value;
}

/** The anchor of a group's section ("Error tracking" → settings-error-tracking). */
export function groupAnchor(group: string): string {
  return `settings-${group.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
}

/** What a setting accepts, in the page's language where the page can say it; values as code. */
function acceptedText(s: Setting): Node | string {
  if ((s.type === 'integer' || s.type === 'number') && s.min !== undefined && s.max !== undefined)
    return t('settings.range', { min: s.min, max: s.max });
  if (s.values?.length) return el('code', {}, s.values.join(', '));
  return known(`settings.accepted.${s.name}`) ?? known(`settings.accepted.${acceptedKind(s)}`) ?? s.accepted;
}

/** The kind of text a string setting takes, which the page words once for all of its kind. */
function acceptedKind(s: Setting): string {
  if (/^AUDIT_\w+_PATTERN$/.test(s.name)) return 'indexPattern';
  if (/_URL$/.test(s.name)) return 'url';
  if (s.name === 'EMAIL_HOST' || s.name === 'EMAIL_FROM') return 'nonEmpty';
  if (s.name === 'EMAIL_HOST_USER' || s.name === 'EMAIL_HOST_PASSWORD') return 'string';
  return '';
}

/** A setting's default: a value as code (booleans in words), or "empty". */
function defaultText(s: Setting): Node | string {
  const value = shown(s.default);
  if (!value) return t('settings.emptyDefault');
  return s.type === 'boolean' ? t(`settings.${value}`) : el('code', {}, value);
}

/** A value as its control shows it (lists one per line). */
function shown(v: Value | undefined): string {
  if (v === undefined) return '';
  return Array.isArray(v) ? v.join('\n') : String(v);
}

/** The control of a setting, by type. */
function control(s: Setting, id: string, describedBy: string): Control {
  const common = { id, name: s.name, 'aria-describedby': describedBy };
  // A fixed set of values (an enumeration, or a string of one of some: LOG_LEVEL) is a choice, not typing.
  if (s.type === 'boolean' || s.values?.length) {
    const values = s.type === 'boolean' ? ['true', 'false'] : (s.values ?? []);
    const label = (v: string) => (s.type === 'boolean' ? t(`settings.${v}`) : v);
    const select = el('select', common, ...values.map((v) => el('option', { value: v }, label(v))));
    select.value = shown(s.value);
    return select;
  }
  if (s.type === 'list') {
    const area = el('textarea', { ...common, rows: '3', spellcheck: 'false' });
    area.value = shown(s.value);
    return area;
  }
  if (s.secret) return el('input', { ...common, type: 'password', autocomplete: 'new-password' });
  const numeric = s.type === 'integer' || s.type === 'number';
  const input = el('input', {
    ...common,
    type: numeric ? 'number' : 'text',
    spellcheck: 'false',
    ...(numeric
      ? { step: s.type === 'integer' ? '1' : 'any', inputmode: s.type === 'integer' ? 'numeric' : 'decimal' }
      : {}),
    ...(s.min !== undefined ? { min: String(s.min) } : {}),
    ...(s.max !== undefined ? { max: String(s.max) } : {}),
  });
  input.value = shown(s.value);
  return input;
}

/** The value to send for a control's text, of the setting's type. */
function parsed(s: Setting, text: string): Value {
  if (s.type === 'list')
    return text
      .split('\n')
      .map((x) => x.trim())
      .filter((x) => x !== '');
  if (s.type === 'boolean') return text === 'true';
  // Numbers go as typed: the API checks type and bounds and names what is wrong.
  return text;
}

const settings: PageScript = async (ctx) => {
  const region = byId('settings-region');
  const render = async () => {
    region.replaceChildren();
    const list = await loading(region, () => api<{ items: Setting[] }>('/v3/settings'));
    if (!list) return;
    const groups = new Map<string, Setting[]>();
    for (const s of list.items) groups.set(s.group, [...(groups.get(s.group) ?? []), s]);
    // The section index: one anchor link per group.
    const groupName = (g: string) => known(`settings.group.${g}`) ?? g;
    add(
      region,
      el(
        'nav',
        { class: 'settings-index', 'aria-label': t('settings.index') },
        el(
          'ul',
          {},
          ...[...groups.keys()].map((g) => el('li', {}, el('a', { href: `#${groupAnchor(g)}` }, groupName(g)))),
        ),
      ),
    );
    let n = 0;
    for (const [group, items] of groups) {
      add(region, groupForm(group, groupName(group), items, (n += 1)));
      // "Send a test mail" below the Mail group (console/pages/mail-test.ts).
      if (items.some((s) => s.name === 'EMAIL_HOST')) add(region, mailTestForm());
    }
  };

  /** One group: its settings and a Save button; its message region shows what happened. */
  const groupForm = (group: string, groupLabel: string, items: Setting[], n: number): HTMLElement => {
    const titleId = `settings-group-${n}`;
    const message = el('div', { class: 'message', id: `${titleId}-message`, hidden: true });
    const controls = new Map<string, { s: Setting; c: Control; original: string }>();
    const rows = items.map((s) => {
      const id = `set-${s.name}`;
      const meta = el(
        'p',
        { class: 'meta', id: `${id}-meta` },
        `${t('settings.type')}: ${known(`settings.typeName.${s.type}`) ?? s.type}`,
        ...(s.type === 'boolean' ? [] : [` · ${t('settings.accepted')}: `, acceptedText(s)]),
        ...(s.secret ? [] : [` · ${t('settings.default')}: `, defaultText(s)]),
        ` · ${t('settings.source')}: `,
        el('strong', { 'data-source': s.source }, t(`settings.source.${s.source}`)),
      );
      const notes = el(
        'p',
        { class: 'hint', id: `${id}-desc` },
        known(`setting.${s.name}.description`) ?? s.description,
        s.restartRequired ? ` ${t('settings.restart')}` : null,
        s.type === 'list' ? ` ${t('settings.listHint')}` : null,
        s.secret ? ` ${s.isSet ? t('settings.secretSet') : t('settings.secretUnset')}` : null,
      );
      const c = control(s, id, `${id}-desc ${id}-meta`);
      controls.set(s.name, { s, c, original: s.secret ? '' : c.value });
      const reset =
        s.source === 'ui'
          ? el(
              'button',
              { type: 'button', class: 'secondary', 'aria-label': t('settings.reset', { name: s.name }) },
              t('settings.reset', { name: '' }).trim(),
            )
          : null;
      reset?.addEventListener(
        'click',
        () =>
          void whileBusy(reset, async () => {
            showMessage(message, null);
            let after: Setting;
            try {
              after = await api<Setting>(`/v3/settings/${encodeURIComponent(s.name)}`, { method: 'DELETE' });
            } catch (err) {
              return showError(message, err);
            }
            await render();
            const again = document.getElementById(`settings-group-${n}-message`);
            if (again)
              showMessage(
                again,
                'success',
                t('settings.resetDone', { name: s.name, source: t(`settings.source.${after.source}`) }),
              );
            document.getElementById(id)?.focus();
          }),
      );
      return el(
        'div',
        { class: 'setting', 'data-setting': s.name },
        // The human label first, the variable's name as secondary text (how it is set in the environment).
        el('label', { for: id }, known(`setting.${s.name}.label`) ?? s.name, ' ', el('code', { class: 'var' }, s.name)),
        notes,
        c,
        meta,
        reset ? el('p', { class: 'actions' }, reset) : null,
      );
    });
    const save = el('button', { type: 'submit' }, t('settings.save', { group: groupLabel }));
    const form = el(
      'form',
      { class: 'card settings-group', id: groupAnchor(group), 'aria-labelledby': titleId },
      el('h2', { id: titleId }, groupLabel),
      ...rows,
      message,
      el('p', { class: 'actions' }, save),
    );
    onSubmit(form, message, async () => {
      const values: Record<string, Value> = {};
      for (const [name, { s, c, original }] of controls) {
        c.removeAttribute('aria-invalid');
        if (c.value === original) continue;
        values[name] = parsed(s, c.value);
      }
      const names = Object.keys(values);
      if (names.length === 0) return showMessage(message, 'info', t('settings.nothing'));
      try {
        await api('/v3/settings', { method: 'PATCH', json: { values } });
      } catch (err) {
        // The API names every bad variable (`errors[].path` values.NAME): mark those controls.
        if (err instanceof ApiError && Array.isArray(err.problem.errors)) {
          for (const e of err.problem.errors as Array<{ path?: string }>) {
            const bad = controls.get((e.path ?? '').replace(/^values\./, ''));
            bad?.c.setAttribute('aria-invalid', 'true');
          }
        }
        throw err;
      }
      await render();
      const again = document.getElementById(`${titleId}-message`);
      if (again) {
        showMessage(again, 'success', t('settings.saved', { names: names.join(', ') }));
        again.setAttribute('tabindex', '-1');
        again.focus();
      }
    });
    return form;
  };
  void ctx;
  await render();
};

export const SETTINGS_SCRIPTS: Record<string, PageScript> = { 'admin-settings': settings };
