/**
 * The metrics each process (Node) or isolate (edge) counts itself (architecture.md §7): requests
 * by route pattern and status with their latency, logins by method and outcome, lockouts. One
 * registry per module instance, which is one per process or isolate; the database-derived metrics
 * are read at scrape time instead (metrics-route/collect.ts) and are global.
 */
import { type HistogramSeries, Registry } from './registry.js';

/** The registry of this process (edge: isolate). */
export const processRegistry = new Registry();

const startTime = processRegistry.gauge(
  'process_start_time_seconds',
  'when this process (edge: isolate) started counting, in seconds since the epoch; a change means counters restarted',
);
let startNoted = false;

/**
 * Records the start time at the first request rather than at import: workerd may not tell the
 * time during an isolate's startup.
 */
export function noteProcessStart(): void {
  if (startNoted) return;
  startNoted = true;
  startTime.set([], Math.floor(Date.now() / 1000));
}

/** Requests answered, by method, route pattern (never the raw path) and status. */
export const httpRequests = processRegistry.counter(
  'auth_http_requests_total',
  'requests answered by this process (edge: isolate), by method (other: non-standard), route pattern and status',
  ['method', 'route', 'status'],
);

/** Time from the request reaching the app to its response, by method and route pattern. */
export const httpDuration = processRegistry.histogram(
  'auth_http_request_duration_seconds',
  'time from the request reaching the app to its response, by method and route pattern',
  ['method', 'route'],
);

const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The method label: a standard method, else "other" (a client picks the method: labels stay bounded). */
export function methodLabel(method: string): string {
  return HTTP_METHODS.has(method) ? method : 'other';
}

interface RouteSeries {
  duration: HistogramSeries;
  byStatus: Map<number, { value: number }>;
}
/**
 * The series of each route and method, kept so that a request costs a few lookups by strings whose
 * hashes are cached (the router's pattern, the method) and builds no string.
 */
const routeSeries = new Map<string, Map<string, RouteSeries>>();

/**
 * Counts an answered request by method, route pattern and status, and observes its latency. The
 * route is a registered pattern (bounded by the routes), the method bounded by methodLabel.
 */
export function recordRequest(method: string, route: string, status: number, seconds: number): void {
  const m = methodLabel(method);
  let byMethod = routeSeries.get(route);
  if (!byMethod) {
    byMethod = new Map();
    routeSeries.set(route, byMethod);
  }
  let r = byMethod.get(m);
  if (!r) {
    r = { duration: httpDuration.seriesOf([m, route]), byStatus: new Map() };
    byMethod.set(m, r);
  }
  let count = r.byStatus.get(status);
  if (!count) {
    count = httpRequests.seriesOf([m, route, String(status)]);
    r.byStatus.set(status, count);
  }
  count.value += 1;
  r.duration.observe(seconds);
}

/** Login attempts as audited, by method (local, ldap, oidc) and outcome. */
export const logins = processRegistry.counter(
  'auth_logins_total',
  'login attempts, as audited: method local, ldap or oidc; outcome success, failure (wrong login or password), ' +
    'refused (blocked, not allowed), password_expired, locked (refused unchecked while locked out) or throttled ' +
    '(refused unchecked: the address spent its budget)',
  ['method', 'outcome'],
);

/** Logins that became locked out (AUTH_FAILED_COUNT failures within AUTH_FAILED_TIMEOUT_MIN). */
export const lockouts = processRegistry.counter(
  'auth_lockouts_total',
  'logins locked out after AUTH_FAILED_COUNT failures within AUTH_FAILED_TIMEOUT_MIN, by method',
  ['method'],
);

/** Password work refused before anything was hashed (passwords/admission.ts), by reason. */
export const admissionsRefused = processRegistry.counter(
  'auth_password_admissions_refused_total',
  'password checks and hashes refused or shed before any hashing, all 429: reason rate, in_flight or queue ' +
    '(one client address beyond AUTH_PASSWORD_ADDRESS_RATE / _BURST / _IN_FLIGHT, or queued out or shed), ' +
    "capacity (every waiting place taken by other clients' first attempts)",
  ['reason'],
);

/**
 * Failed-login restrictions applied (accounts/throttle.ts): untrusted-clients (the login locked for
 * clients without its device cookie), device (one device's own budget spent), all-clients (the
 * account's total of consecutive failures reached) and address (a client address throttled).
 */
export const restrictions = processRegistry.counter(
  'auth_restrictions_total',
  'failed-login restrictions applied: kind untrusted-clients, device, all-clients or address',
  ['kind'],
);

/** New passwords refused by a blocklist rule (docs/security.md, "Password blocklist"), by rule. */
export const blocklistRefusals = processRegistry.counter(
  'auth_password_blocklist_refusals_total',
  'new passwords refused by a blocklist rule: common_password (the bundled or the operator list), contains_login ' +
    'or contains_service_name',
  ['rule'],
);

const BLOCKLIST_RULES = new Set(['common_password', 'contains_login', 'contains_service_name']);

/** Counts the blocklist rules among the rules a refused password broke. */
export function countBlocklistRefusals(rules: readonly string[]): void {
  for (const rule of rules) if (BLOCKLIST_RULES.has(rule)) blocklistRefusals.inc([rule]);
}

const METHODS = new Set(['local', 'ldap', 'oidc']);
const OUTCOMES: Record<string, string> = {
  'login.success': 'success',
  'login.failure': 'failure',
  'login.refused': 'refused',
  'login.password_expired': 'password_expired',
};

/** The method label of a login source (anything unexpected is "other", so labels stay bounded). */
export function loginMethod(source: unknown): string {
  return typeof source === 'string' && METHODS.has(source) ? source : 'other';
}

/**
 * Counts a login attempt from its audit event (type login.success, login.failure, login.refused
 * or login.password_expired; others are ignored), so the counts match the audit trail.
 */
export function countLoginEvent(type: string, data: Record<string, unknown> | undefined): void {
  const outcome = OUTCOMES[type];
  if (outcome) logins.inc([loginMethod(data?.source), outcome]);
}

/**
 * Counts a login refused unchecked: `locked` (its login is restricted) or `throttled` (its address
 * is); the method from its throttle key (ldap:… or otherwise local).
 */
export function countLockedAttempt(throttleKey: string, outcome: 'locked' | 'throttled' = 'locked'): void {
  logins.inc([throttleKey.startsWith('ldap:') ? 'ldap' : 'local', outcome]);
}

/** The gate's decisions (docs/integration.md), by protected service ("" when none answers) and outcome. */
export const gateDecisions = processRegistry.counter(
  'auth_gate_decisions_total',
  'forward-auth decisions by protected service and outcome (allow, sign-in, second-step, refuse)',
  ['service', 'outcome'],
);

/** Webhook attempts of this process (edge: isolate), by outcome (docs/webhooks.md, "What operators see"). */
export const webhookAttempts = processRegistry.counter(
  'auth_webhook_attempts_total',
  'webhook delivery attempts made by this process (edge: isolate), by outcome: delivered (2xx), retry (failed, ' +
    'retried later), failed (the retry schedule ran out) or gone (410: the subscription was disabled)',
  ['outcome'],
);
