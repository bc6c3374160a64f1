/**
 * Script of the audit log viewer (worker/src/pages/admin-pages.ts): the log types of
 * /v3/logs/audit_log_types, the simple search of /v3/logs/{type}/events with its cursor paging and
 * each event's full record, the free query DSL of /v3/logs/{type}/search, and the fields of
 * /v3/logs/{type}/field_caps. The store's answers are shown as JSON text (never as markup).
 */
import '../../worker/src/pages/admin-texts.js';
import { api } from '../api.js';
import type { PageScript } from '../context.js';
import { formatDate, t } from '../i18n.js';
import { add, byId, clip, el, loading, onSubmit, showError, showMessage, whileBusy } from '../ui.js';
import { given, selectById, table } from './admin-common.js';

interface LogType {
  name: string;
  pattern: string;
  description: string;
}

type Event = Record<string, unknown>;

interface EventPage {
  items: Event[];
  nextCursor: string | null;
  total?: { value: number; relation: string };
}

/** An event's outcome (ECS: success, failure, unknown) in the page's words. */
function outcomeText(outcome: string): string {
  return ['success', 'failure', 'unknown'].includes(outcome) ? t(`audit.${outcome}`) : outcome;
}

/** A dotted path of an event (`event.type`), as text. */
function pick(e: Event, path: string): string {
  let v: unknown = e;
  for (const part of path.split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined;
  return v === undefined || v === null ? '' : String(v);
}

/**
 * A date typed in the console's format (docs/console.md, "Layout and words": day, month, year and an optional
 * time, as `date.format` shows it in the page's language; also ISO 8601), in the browser's time zone, as
 * ISO 8601; undefined when empty. A date that is not one is refused with its words, the field marked.
 */
export function typedDate(input: HTMLInputElement): string | undefined {
  input.removeAttribute('aria-invalid');
  const value = input.value.trim();
  if (!value) return undefined;
  const dmy = /^(\d{1,2})[./-](\d{1,2})[./-](\d{4})(?:[ ,T]+(\d{1,2})[:.](\d{2}))?$/.exec(value);
  const ymd = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2}))?$/.exec(value);
  const [d, m, y, h, min] = dmy
    ? dmy.slice(1).map(Number)
    : ymd
      ? [ymd[3], ymd[2], ymd[1], ymd[4], ymd[5]].map(Number)
      : [];
  const date = new Date(y ?? Number.NaN, (m ?? 0) - 1, d, h || 0, min || 0);
  // new Date rolls 31/02 over into March: the fields must come back as typed.
  const rolled = date.getDate() !== d || date.getMonth() !== (m ?? 0) - 1 || date.getHours() !== (h || 0);
  if (Number.isNaN(date.getTime()) || rolled) {
    input.setAttribute('aria-invalid', 'true');
    input.focus();
    throw new Error(t('date.bad', { value, format: t('date.format') }));
  }
  return date.toISOString();
}

const audit: PageScript = async (ctx) => {
  const typeSelect = selectById('audit-type');
  const description = byId('audit-type-description');
  const types = await loading(description, () =>
    api<{ items: LogType[]; logstoreConfigured: boolean; localRetentionDays: number | null }>(
      '/v3/logs/audit_log_types',
    ),
  );
  if (!types) return;
  for (const lt of types.items) add(typeSelect, el('option', { value: lt.name }, lt.name));
  // A link may name the log type and the outcome (the overview's failed sign-ins do).
  const params = new URLSearchParams(location.search);
  const preset = params.get('type');
  if (preset && types.items.some((x) => x.name === preset)) typeSelect.value = preset;
  const outcome = selectById('audit-outcome');
  const presetOutcome = params.get('outcome');
  if (presetOutcome && [...outcome.options].some((o) => o.value === presetOutcome)) outcome.value = presetOutcome;
  const describe = () => {
    const lt = types.items.find((x) => x.name === typeSelect.value);
    // The type's meaning in the page's words (the API's description is English), its index pattern as code.
    description.replaceChildren(...(lt ? [t(`audit.stream.${lt.name}`), ' (', el('code', {}, lt.pattern), ')'] : []));
  };
  describe();
  typeSelect.addEventListener('change', describe);
  if (!types.logstoreConfigured)
    showMessage(ctx.message, 'info', t('audit.notConfigured', { days: types.localRetentionDays ?? '' }));
  const logPath = () => `/v3/logs/${encodeURIComponent(typeSelect.value)}`;

  const region = byId('audit-region');
  const more = byId<HTMLButtonElement>('audit-more');
  const recordBox = byId('audit-record-box');
  const record = byId('audit-record');
  const recordTitle = byId('audit-record-title');
  let shown: Event[] = [];
  let cursor: string | null = null;
  let filters = new URLSearchParams();
  let total = 0;

  const showRecord = (e: Event) => {
    recordTitle.textContent = t('audit.record', { id: pick(e, 'event.id') || pick(e, 'event.type') });
    record.textContent = JSON.stringify(e, null, 2);
    recordBox.hidden = false;
    recordTitle.focus();
  };
  const renderTable = () => {
    region.replaceChildren();
    if (shown.length === 0) return add(region, el('p', {}, t('audit.empty')));
    const rows = shown.map((e) => {
      const open = el(
        'button',
        {
          type: 'button',
          class: 'secondary',
          'aria-label': `${t('audit.show')}: ${pick(e, 'event.type')} ${pick(e, '@timestamp')}`,
        },
        t('audit.show'),
      );
      open.addEventListener('click', () => showRecord(e));
      return [
        formatDate(pick(e, '@timestamp')),
        clip(pick(e, 'event.type'), 'code'),
        outcomeText(pick(e, 'event.outcome')),
        clip(pick(e, 'actor.login')),
        clip(pick(e, 'subject.login')),
        clip(pick(e, 'source.ip')),
        open,
      ];
    });
    add(
      region,
      table(
        t('audit.caption', { shown: shown.length, total }),
        [
          t('audit.time'),
          t('audit.event'),
          t('audit.outcomeCol'),
          t('audit.actor'),
          t('audit.subject'),
          t('audit.source'),
          t('audit.show'),
        ],
        rows,
      ),
    );
  };
  const fetchPage = async () => {
    const q = new URLSearchParams(filters);
    if (cursor) q.set('cursor', cursor);
    const page = await api<EventPage>(`${logPath()}/events?${q}`);
    shown = [...shown, ...page.items];
    total = page.total?.value ?? shown.length;
    cursor = page.nextCursor;
    more.hidden = cursor === null;
    renderTable();
  };

  const form = byId<HTMLFormElement>('audit-form');
  onSubmit(form, byId('audit-message'), async () => {
    filters = new URLSearchParams();
    const field = (id: string) => byId<HTMLInputElement>(id);
    const set = (name: string, value: string | undefined) => value && filters.set(name, value);
    set('user', given(field('audit-user')));
    set('ip', given(field('audit-ip')));
    set('outcome', given(field('audit-outcome')));
    set('type', given(field('audit-event-types'))?.replace(/\s+/g, ''));
    set('from', typedDate(field('audit-from')));
    set('to', typedDate(field('audit-to')));
    set('size', given(field('audit-size')));
    shown = [];
    cursor = null;
    more.hidden = true;
    recordBox.hidden = true;
    region.replaceChildren();
    await fetchPage();
  });
  more.addEventListener(
    'click',
    () =>
      void whileBusy(more, async () => {
        try {
          await fetchPage();
        } catch (err) {
          showError(byId('audit-message'), err);
        }
      }),
  );

  const queryForm = byId<HTMLFormElement>('audit-query');
  const answer = byId('audit-query-answer');
  onSubmit(queryForm, byId('audit-query-message'), async () => {
    answer.hidden = true;
    let body: unknown;
    try {
      body = JSON.parse(byId<HTMLTextAreaElement>('audit-query-body').value);
    } catch (err) {
      return showMessage(byId('audit-query-message'), 'error', t('audit.queryBad', { error: (err as Error).message }));
    }
    const result = await api(`${logPath()}/search`, { method: 'POST', json: body });
    answer.textContent = JSON.stringify(result, null, 2);
    answer.hidden = false;
  });

  const fieldsRegion = byId('audit-fields');
  const fieldsButton = byId<HTMLButtonElement>('audit-fields-load');
  fieldsButton.addEventListener(
    'click',
    () =>
      void whileBusy(fieldsButton, async () => {
        fieldsRegion.replaceChildren();
        showMessage(byId('audit-fields-message'), null);
        const caps = await loading(fieldsRegion, () =>
          api<{ fields?: Record<string, Record<string, { type: string; aggregatable: boolean }>> }>(
            `${logPath()}/field_caps`,
            { method: 'POST', json: { fields: '*' } },
          ),
        );
        if (!caps) return;
        const rows = Object.entries(caps.fields ?? {})
          .filter(([name]) => !name.startsWith('_'))
          .sort(([a], [b]) => a.localeCompare(b))
          .flatMap(([name, byType]) =>
            Object.values(byType).map((c) => [
              el('code', {}, name),
              c.type,
              c.aggregatable ? t('user.yes') : t('user.no'),
            ]),
          );
        add(
          fieldsRegion,
          table(t('audit.fieldsCaption'), [t('audit.field'), t('audit.fieldType'), t('audit.aggregatable')], rows),
        );
      }),
  );
  // The page opens on the last events (of the type and outcome a link named): no empty page to press Find on.
  form.requestSubmit();
};

export const AUDIT_SCRIPTS: Record<string, PageScript> = { 'admin-audit': audit };
