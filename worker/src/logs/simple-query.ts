/**
 * The simple form of the logs endpoints (architecture.md §5): what auditors ask for most — events by
 * user, client IP, outcome, event type and time range — without writing query DSL. The form becomes
 * a DSL body over the documented event shape (`@timestamp`, `event.*`, `actor.*`, `subject.*`,
 * `source.ip`), newest first, with a stable tiebreaker so that `search_after` pages never skip or
 * repeat an event. Exact matches use the `.keyword` sub-fields that the stores' default dynamic
 * mapping gives every string (an index template may map the same names).
 */

export interface SimpleForm {
  /** A login: events where it is the actor or the subject. */
  user?: string;
  /** A client IP address. */
  ip?: string;
  outcome?: 'success' | 'failure';
  /** Event types (any of). */
  types?: string[];
  /** Time range, ISO 8601; `from` inclusive, `to` exclusive. */
  from?: string;
  to?: string;
}

/** Newest first, then by event id: a total order for search_after. */
export const SIMPLE_SORT = [{ '@timestamp': { order: 'desc' } }, { 'event.id.keyword': { order: 'desc' } }];

/** The DSL query of a simple form (match_all when the form is empty). */
export function simpleQuery(f: SimpleForm): Record<string, unknown> {
  const filter: Record<string, unknown>[] = [];
  if (f.user) {
    filter.push({
      bool: {
        should: [{ term: { 'actor.login.keyword': f.user } }, { term: { 'subject.login.keyword': f.user } }],
        minimum_should_match: 1,
      },
    });
  }
  if (f.ip) filter.push({ term: { 'source.ip.keyword': f.ip } });
  if (f.outcome) filter.push({ term: { 'event.outcome.keyword': f.outcome } });
  if (f.types && f.types.length > 0) filter.push({ terms: { 'event.type.keyword': f.types } });
  if (f.from || f.to) {
    filter.push({ range: { '@timestamp': { ...(f.from ? { gte: f.from } : {}), ...(f.to ? { lt: f.to } : {}) } } });
  }
  return filter.length === 0 ? { match_all: {} } : { bool: { filter } };
}
