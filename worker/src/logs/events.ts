/**
 * The simple form of the logs endpoints (docs/audit-logs.md, "Simple form"): events by user, client IP, outcome, event
 * types and time range, newest first, paged with an opaque cursor (the last event's sort values,
 * base64url JSON, for `search_after`), and the pages that the export streams.
 */
import { z } from '@hono/zod-openapi';
import type { Principal } from '../http/context.js';
import type { RequestScope } from '../http/scope.js';
import { ProblemError } from '../http/problem.js';
import { SIMPLE_SORT, simpleQuery, type SimpleForm } from './simple-query.js';
import { queryStore, searchTimeout, storeAnswer } from './store-query.js';
import type { StreamName } from './streams.js';

/** The largest page of GET /v3/logs/{type}/events. */
export const MAX_EVENTS_PAGE = 500;

const EVENT_TYPE = /^[A-Za-z0-9_.:-]{1,128}$/;

/** The filters shared by /events and /export. */
export const FilterFields = {
  user: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .openapi({ description: 'a login: events where it is the actor or the subject (exact)', example: 'alice' }),
  ip: z
    .string()
    .regex(/^[0-9A-Fa-f:.]{2,45}$/, 'an IPv4 or IPv6 address')
    .optional()
    .openapi({ description: "the client's IP address (exact)", example: '10.0.0.1' }),
  outcome: z.enum(['success', 'failure']).optional(),
  type: z
    .string()
    .max(2048)
    .refine(
      (v) => v.split(',').length <= 32 && v.split(',').every((t) => EVENT_TYPE.test(t)),
      'event types separated by commas (at most 32)',
    )
    .optional()
    .openapi({ description: 'event types, comma-separated (any of)', example: 'login.failed,account.locked' }),
  from: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ description: 'ISO 8601, inclusive', example: '2026-11-01T00:00:00Z' }),
  to: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ description: 'ISO 8601, exclusive', example: '2026-12-01T00:00:00Z' }),
};

type Filters = { [K in keyof typeof FilterFields]?: z.output<(typeof FilterFields)[K]> };

/** The simple form of validated filters; 422 when `from` is not before `to`. */
export function formOf(f: Filters): SimpleForm {
  if (f.from && f.to && Date.parse(f.from) >= Date.parse(f.to)) {
    throw new ProblemError('VALIDATION', {
      detail: 'from must be before to',
      extensions: { errors: [{ location: 'query', path: 'from', message: 'must be before to' }] },
    });
  }
  return { user: f.user, ip: f.ip, outcome: f.outcome, types: f.type?.split(','), from: f.from, to: f.to };
}

/** The sort values of SIMPLE_SORT: the event time (epoch ms, as the store sorts dates), its id (null when absent). */
type Cursor = [number, string | null];

/** An opaque cursor of the sort values of the last event of a page. */
export function encodeCursor(sort: Cursor): string {
  const bytes = new TextEncoder().encode(JSON.stringify(sort));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

/** The sort values of a cursor; 422 naming `cursor` for anything this service did not make. */
export function decodeCursor(cursor: string): Cursor {
  const invalid = () =>
    new ProblemError('VALIDATION', {
      detail: 'cursor: not a cursor of this endpoint',
      extensions: { errors: [{ location: 'query', path: 'cursor', message: 'use the nextCursor of a previous page' }] },
    });
  if (!/^[A-Za-z0-9_-]{1,1400}$/.test(cursor)) throw invalid();
  let value: unknown;
  try {
    const binary = atob(cursor.replaceAll('-', '+').replaceAll('_', '/'));
    value = JSON.parse(
      new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0))),
    );
  } catch {
    throw invalid();
  }
  if (!Array.isArray(value) || value.length !== 2 || !Number.isSafeInteger(value[0])) throw invalid();
  if (!(value[1] === null || (typeof value[1] === 'string' && value[1].length <= 512))) throw invalid();
  return [value[0] as number, value[1] as string | null];
}

/** The cursor of a hit's sort values, or null when the store gave none it could be made of. */
function cursorOf(sort: unknown): Cursor | null {
  if (!Array.isArray(sort) || sort.length !== 2) return null;
  const [at, id] = sort as unknown[];
  // A date sorts as epoch milliseconds; an event without an id sorts with null.
  return Number.isSafeInteger(at) && (typeof id === 'string' || id === null)
    ? [at as number, id as string | null]
    : null;
}

export interface EventsPage {
  items: Record<string, unknown>[];
  nextCursor: string | null;
  /** The sort values behind nextCursor. */
  next: Cursor | null;
  total: { value: number; relation: 'eq' | 'gte' } | null;
}

/**
 * One page of events of `stream` after `after` (newest first). One event more than `size` is asked
 * for, so `nextCursor` is null exactly when no event follows.
 */
export async function eventsPage(
  scope: RequestScope,
  caller: Principal,
  stream: StreamName,
  form: SimpleForm,
  o: { size: number; after?: Cursor; trackTotal?: number | boolean },
): Promise<EventsPage> {
  const body: Record<string, unknown> = {
    query: simpleQuery(form),
    sort: SIMPLE_SORT,
    size: o.size + 1,
    // Counting every match can be costly: exact up to 10,000, then "gte".
    track_total_hits: o.trackTotal ?? 10_000,
    timeout: searchTimeout(scope.config),
    ...(o.after ? { search_after: o.after } : {}),
  };
  const answer = storeAnswer(await queryStore(scope, caller, stream, { operation: 'search', body })).body;
  const hits = (answer.hits as { hits?: unknown } | undefined)?.hits;
  if (!Array.isArray(hits))
    throw new ProblemError('BAD_GATEWAY', { detail: 'the log store answered a search without hits' });
  const page = hits.slice(0, o.size);
  const items = page.map((h) => ((h as { _source?: unknown })._source ?? {}) as Record<string, unknown>);
  let next: Cursor | null = null;
  if (hits.length > o.size) {
    next = cursorOf((page.at(-1) as { sort?: unknown }).sort);
    // Never a silent end of the list: more events, but sort values this service cannot page with.
    if (!next)
      throw new ProblemError('BAD_GATEWAY', {
        detail: 'the log store answered sort values that cannot be paged (@timestamp, event.id)',
      });
  }
  const rawTotal = (answer.hits as { total?: { value?: unknown; relation?: unknown } }).total;
  const total =
    rawTotal && typeof rawTotal.value === 'number'
      ? { value: rawTotal.value, relation: rawTotal.relation === 'gte' ? ('gte' as const) : ('eq' as const) }
      : null;
  return { items, nextCursor: next ? encodeCursor(next) : null, next, total };
}

export type { Cursor };
