/**
 * The body of a webhook (docs/webhooks.md, "On the wire"): `{"type", "timestamp", "data"}`, built from the event
 * as the delivery row recorded it. `data` holds who and what (event id, stream, outcome, actor, subject, client
 * address) and the catalogue's fields of the type, never a field named like a secret, password, code, token or
 * link. The same row always makes the same bytes, so every attempt signs the same body.
 */
import { EVENT_CATALOGUE } from '../audit/catalogue.js';

/** Field names never sent, whatever an event's data holds. */
const NEVER = /secret|password|passwd|token|code|link|otp/i;

/** The type of the test event (POST /v4/webhooks/{id}/test); in no catalogue, as it records nothing. */
export const TEST_EVENT_TYPE = 'webhook.test';

const person = (id: unknown, login: unknown) =>
  typeof login === 'string' ? { id: typeof id === 'string' ? id : null, login } : null;

/** The fields of an event's data that its catalogue entry declares, without the forbidden names. */
function catalogueFields(type: string, data: unknown): Record<string, unknown> {
  const spec = (EVENT_CATALOGUE as Record<string, { data: Record<string, string> } | undefined>)[type];
  const out: Record<string, unknown> = {};
  if (!data || typeof data !== 'object') return out;
  for (const [k, v] of Object.entries(data as Record<string, unknown>)) {
    if ((type === TEST_EVENT_TYPE || (spec && k in spec.data)) && !NEVER.test(k)) out[k] = v;
  }
  return out;
}

/** The JSON body of a delivery, from its stored payload. */
export function webhookBody(type: string, at: number, p: Record<string, unknown>): string {
  const data =
    type === TEST_EVENT_TYPE
      ? catalogueFields(type, p.data)
      : {
          ...catalogueFields(type, p.data),
          eventId: p.id,
          stream: p.stream,
          outcome: p.outcome ?? null,
          actor: person(p.actorId, p.actorLogin),
          subject: person(p.subjectId, p.subjectLogin),
          sourceIp: p.sourceIp ?? null,
        };
  return JSON.stringify({ type, timestamp: new Date(at).toISOString(), data });
}
