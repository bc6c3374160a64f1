/**
 * The export of the simple form (docs/audit-logs.md, "Simple form"): every matching event, newest first, as NDJSON or
 * CSV, streamed page by page through the store with `search_after`, never held whole in memory. Bounded:
 * a form matching more than EXPORT_MAX_EVENTS events is refused before anything is sent (narrow the
 * time range), so an export is never silently cut short.
 */
import type { Principal } from '../http/context.js';
import type { RequestScope } from '../http/scope.js';
import { ProblemError } from '../http/problem.js';
import { eventsPage, type EventsPage } from './events.js';
import type { SimpleForm } from './simple-query.js';
import type { StreamName } from './streams.js';

/** The most events one export holds. */
export const EXPORT_MAX_EVENTS = 100_000;
/** Events fetched from the store per page. */
export const EXPORT_PAGE_SIZE = 500;

/** The CSV columns: header and the event field each is read from. */
export const CSV_COLUMNS: ReadonlyArray<readonly [header: string, field: string]> = [
  ['timestamp', '@timestamp'],
  ['event.id', 'event.id'],
  ['event.type', 'event.type'],
  ['event.outcome', 'event.outcome'],
  ['actor.login', 'actor.login'],
  ['subject.login', 'subject.login'],
  ['source.ip', 'source.ip'],
  ['document', ''],
];

/** A dotted field of an event ('' is the whole event). */
function fieldOf(event: Record<string, unknown>, path: string): unknown {
  if (path === '') return event;
  let v: unknown = event;
  for (const part of path.split('.'))
    v = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>)[part] : undefined;
  return v;
}

/**
 * One CSV cell (RFC 4180). A spreadsheet runs a cell starting with = + - @ (or a tab or carriage
 * return) as a formula: such cells get a leading apostrophe, so an attacker-chosen login or user
 * agent in the log cannot become code on an auditor's machine.
 */
export function csvCell(value: unknown): string {
  let text =
    value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV line of an event. */
export function csvLine(event: Record<string, unknown>): string {
  return `${CSV_COLUMNS.map(([, field]) => csvCell(fieldOf(event, field))).join(',')}\r\n`;
}

const CSV_HEADER = `${CSV_COLUMNS.map(([h]) => csvCell(h)).join(',')}\r\n`;

/** `audit-<type>-<UTC time>.<ext>`: no caller input in the file name. */
function fileName(stream: StreamName, now: number, ext: string): string {
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `audit-${stream}-${stamp}.${ext}`;
}

/**
 * The export response. The first page is fetched before answering, so a store that is down, slow
 * or not configured is a problem with its status; a failure on a later page aborts the transfer
 * (no final chunk), so a partial file never looks complete.
 */
export async function exportEvents(
  scope: RequestScope,
  caller: Principal,
  stream: StreamName,
  form: SimpleForm,
  format: 'ndjson' | 'csv',
): Promise<Response> {
  const first = await eventsPage(scope, caller, stream, form, {
    size: EXPORT_PAGE_SIZE,
    trackTotal: EXPORT_MAX_EVENTS + 1,
  });
  if (first.total && first.total.value > EXPORT_MAX_EVENTS) {
    throw new ProblemError('VALIDATION', {
      detail: `the filters match more than ${EXPORT_MAX_EVENTS} events; narrow them (from, to) and export in parts`,
      extensions: {
        errors: [{ location: 'query', path: 'from', message: `more than ${EXPORT_MAX_EVENTS} events match` }],
        maxEvents: EXPORT_MAX_EVENTS,
      },
    });
  }
  const encoder = new TextEncoder();
  const line = format === 'csv' ? csvLine : (e: Record<string, unknown>) => `${JSON.stringify(e)}\n`;
  let page: EventsPage | null = first;
  let sent = 0;
  let headerSent = format !== 'csv';
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!headerSent) {
        headerSent = true;
        controller.enqueue(encoder.encode(CSV_HEADER));
        return;
      }
      if (!page) {
        controller.close();
        return;
      }
      const items = page.items.slice(0, EXPORT_MAX_EVENTS - sent);
      sent += items.length;
      if (items.length > 0) controller.enqueue(encoder.encode(items.map(line).join('')));
      const after = page.next;
      if (!after || sent >= EXPORT_MAX_EVENTS) {
        page = null;
        return;
      }
      try {
        page = await eventsPage(scope, caller, stream, form, { size: EXPORT_PAGE_SIZE, after, trackTotal: false });
      } catch (err) {
        scope.logger.warning('export aborted: a page failed', { stream, sent, err });
        controller.error(err);
      }
    },
  });
  const ext = format === 'csv' ? 'csv' : 'ndjson';
  return new Response(body, {
    status: 200,
    headers: {
      'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      'content-disposition': `attachment; filename="${fileName(stream, scope.now(), ext)}"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  });
}
