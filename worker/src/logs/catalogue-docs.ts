/**
 * The event catalogue (audit/catalogue.ts) as the logs endpoints show it: per stream in
 * GET /v3/logs/audit_log_types (the table in the OpenAPI descriptions of the logs endpoints: log-api-words.ts).
 */
import { EVENT_CATALOGUE, eventTypesOf } from '../audit/catalogue.js';
import type { StreamName } from './streams.js';

/** The event types of a stream, as audit_log_types lists them. */
export function eventTypesOfStream(stream: StreamName) {
  return eventTypesOf(stream).map((type) => {
    const s = EVENT_CATALOGUE[type];
    return { type, outcomes: [...s.outcomes], description: s.description, data: { ...s.data } };
  });
}
