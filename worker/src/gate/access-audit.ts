/**
 * The gate's entries in the "access to corporate services" stream (docs/integration.md, "Audit"):
 * `service.access` events. Refusals can come in floods (a scanner, a broken client), so they take the
 * grain of API access: one event per service, reason, account and client address in a window of
 * AUDIT_API_ACCESS_WINDOW_SEC, written at the first refusal of its window; an admission is written once
 * per session (or API token) and service in the window. What a window holds is per instance (edge: per
 * isolate), so a key met by several instances is written once by each. `/metrics` counts every decision.
 */
import { auditInsert } from '../audit/events.js';
import type { RequestScope } from '../http/scope.js';
import { gateDecisions } from '../metrics/process.js';
import type { Decision } from './decision.js';

/** How many keys a window holds at most: beyond, the oldest are forgotten (and may be written again). */
const MAX_KEYS = 10_000;

interface Window {
  start: number;
  seen: Set<string>;
}

const windows = new WeakMap<object, Window>();

function firstInWindow(owner: object, key: string, now: number, windowMs: number): boolean {
  const start = windowMs > 0 ? now - (now % windowMs) : now;
  let w = windows.get(owner);
  if (!w || w.start !== start) windows.set(owner, (w = { start, seen: new Set() }));
  if (w.seen.has(key)) return false;
  if (w.seen.size >= MAX_KEYS) w.seen.delete(w.seen.values().next().value!);
  w.seen.add(key);
  return true;
}

/** What the audit event names of the caller: the account (if any) and its credential's id. */
export interface DecisionSubject {
  account?: { id: string; login: string };
  /** The session's or API token's id: the grain of admissions. */
  credentialId?: string;
}

/** Counts the decision and writes its event when it is the first of its key in the window. */
export function recordDecision(
  scope: RequestScope,
  owner: object,
  decision: Decision | { outcome: 'refuse'; reason: 'untrusted-proxy'; service?: undefined },
  subject: DecisionSubject,
  url: URL | undefined,
): void {
  const service = decision.service?.name ?? '';
  gateDecisions.inc([service, decision.outcome]);
  const now = scope.now();
  const address = scope.request.ip ?? '';
  const allowed = decision.outcome === 'allow';
  const key = allowed
    ? `a|${service}|${subject.credentialId ?? subject.account?.id ?? ''}`
    : `r|${service}|${decision.reason}|${subject.account?.id ?? ''}|${address}`;
  if (!firstInWindow(owner, key, now, scope.config.get('AUDIT_API_ACCESS_WINDOW_SEC') * 1000)) return;
  const event = auditInsert(scope.db, now, {
    stream: 'ext_service_access',
    type: 'service.access',
    outcome: allowed ? 'success' : 'failure',
    ...(subject.account ? { actor: subject.account, subject: subject.account } : {}),
    request: scope.request,
    data: {
      service: decision.service?.name ?? null,
      outcome: decision.outcome,
      reason: decision.reason,
      url: url ? `${url.origin}${url.pathname}` : null,
    },
  });
  scope.inBackground(async () => await event);
}
