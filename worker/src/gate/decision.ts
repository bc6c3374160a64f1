/**
 * The gate's one decision (docs/integration.md, "The decision"): given who presented what, and which
 * service the request is for, allow (with the identity to pass on), ask to sign in, ask for the second
 * step, or refuse; always with a reason. Pure: the endpoints of each proxy's dialect read their own
 * headers, find the service and the credential, call this, and write their own answer.
 */
import type { ServiceAccess, ServiceHeaders } from '../../../schema/services.js';
import { underPrefix } from './target.js';

/** A protected service as the decision and the matching read it (a row of the services snapshot). */
export interface ServiceRule {
  id: string;
  name: string;
  hosts: readonly string[];
  prefixes: readonly string[];
  access: ServiceAccess;
  requireSecondFactor: boolean;
  allowBasic: boolean;
  headers: ServiceHeaders;
}

/** The account behind a valid credential, as far as the decision needs it. */
export interface GateAccount {
  id: string;
  login: string;
  displayName: string;
  email: string | null;
  role: string;
  groups: readonly string[];
}

/** What the caller presented, checked already (the endpoint reads caches, never the decision). */
export type GateCredential =
  | { kind: 'none' }
  /** Presented and not valid: unknown, expired, revoked, or its account cannot log in. */
  | { kind: 'invalid' }
  /** Basic sent to a service that does not accept it: the password is not even checked. */
  | { kind: 'basic-refused' }
  | {
      kind: 'account';
      account: GateAccount;
      /** session: the cookie or a session's access token; token: an API token; basic: a password. */
      method: 'session' | 'token' | 'basic';
      /** A session that passed a second factor (its second step, or a passkey). */
      secondFactor: boolean;
      /** An API token limited to these services (names); absent: no audience limit. */
      audiences?: readonly string[] | null;
    };

export type DecisionReason =
  | 'allowed'
  | 'unknown-service'
  | 'bad-target'
  | 'no-credentials'
  | 'invalid-credentials'
  | 'basic-not-allowed'
  | 'second-factor-required'
  | 'not-allowed'
  | 'token-audience';

export type Decision =
  | { outcome: 'allow'; reason: 'allowed'; service: ServiceRule; headers: Readonly<Record<string, string>> }
  | { outcome: 'sign-in'; reason: DecisionReason; service: ServiceRule }
  | { outcome: 'second-step'; reason: 'second-factor-required'; service: ServiceRule }
  | { outcome: 'refuse'; reason: DecisionReason; service?: ServiceRule };

export interface DecisionInput {
  credential: GateCredential;
  /** The normalised URL asked for; undefined when the forwarded parts did not make one. */
  url: URL | undefined;
  services: readonly ServiceRule[];
  method: string;
  clientAddress: string | null;
}

/** The identity headers' default names (Authelia's): a service may rename them. */
export const DEFAULT_HEADERS: ServiceHeaders = {
  user: 'Remote-User',
  name: 'Remote-Name',
  email: 'Remote-Email',
  groups: 'Remote-Groups',
  role: 'Remote-Role',
};

/**
 * The service `url` belongs to: the longest matching URL prefix, else a host entry (`host:port`
 * exactly, or `host` on any port). None: the request is refused, never allowed by default.
 */
export function findService(services: readonly ServiceRule[], url: URL): ServiceRule | undefined {
  let best: ServiceRule | undefined;
  let bestLength = -1;
  for (const s of services)
    for (const p of s.prefixes)
      if (p.length > bestLength && underPrefix(url, p)) {
        best = s;
        bestLength = p.length;
      }
  if (best) return best;
  return services.find((s) => s.hosts.includes(url.host)) ?? services.find((s) => s.hosts.includes(url.hostname));
}

/** Whether `account` may enter `service` by its access rule. */
export function mayEnter(access: ServiceAccess, account: GateAccount): boolean {
  if (access.anyAccount) return true;
  return (
    access.roles.includes(account.role) ||
    access.accounts.includes(account.id) ||
    access.accounts.includes(account.login) ||
    account.groups.some((g) => access.groups.includes(g))
  );
}

/**
 * A header value: printable ASCII as it is; anything else (a name in Cyrillic) percent-encoded as
 * UTF-8, since header values are bytes and a control character could split the header.
 */
export function headerValue(value: string): string {
  return /^[\u0020-\u007e]*$/.test(value) ? value : encodeURIComponent(value);
}

/**
 * The identity headers made so far, per account and per service's names: a warm decision's account
 * is the same object each time (credential.ts `gateAccount`), and so are a service's names until the
 * services change; each key going when its object goes (docs/performance.md, "The gate's decisions").
 */
const headersOf = new WeakMap<GateAccount, WeakMap<ServiceHeaders, Readonly<Record<string, string>>>>();

/** The identity headers of an admitted account, under the service's names (read-only: made once). */
export function identityHeaders(names: ServiceHeaders, account: GateAccount): Readonly<Record<string, string>> {
  let byNames = headersOf.get(account);
  if (!byNames) headersOf.set(account, (byNames = new WeakMap()));
  let headers = byNames.get(names);
  if (!headers) {
    headers = Object.freeze({
      [names.user]: headerValue(account.login),
      [names.name]: headerValue(account.displayName),
      [names.email]: headerValue(account.email ?? ''),
      [names.groups]: headerValue(account.groups.join(',')),
      [names.role]: account.role,
    });
    byNames.set(names, headers);
  }
  return headers;
}

/**
 * Whether a valid credential opens `service` by itself: its account may enter, and the second factor
 * the service requires is there. Token introspection answers `active` by this (a service learns only
 * about the credentials meant for it).
 */
export function admits(service: ServiceRule, credential: Extract<GateCredential, { kind: 'account' }>): boolean {
  if (credential.method === 'basic' && !service.allowBasic) return false;
  if (credential.audiences && !credential.audiences.includes(service.name)) return false;
  if (!mayEnter(service.access, credential.account)) return false;
  return !service.requireSecondFactor || credential.secondFactor;
}

/** The decision (see the module comment); the table it follows is docs/integration.md, "The decision". */
export function decide(input: DecisionInput): Decision {
  if (!input.url) return { outcome: 'refuse', reason: 'bad-target' };
  const service = findService(input.services, input.url);
  if (!service) return { outcome: 'refuse', reason: 'unknown-service' };
  const { credential } = input;
  switch (credential.kind) {
    case 'none':
      return { outcome: 'sign-in', reason: 'no-credentials', service };
    case 'invalid':
      return { outcome: 'sign-in', reason: 'invalid-credentials', service };
    case 'basic-refused':
      return { outcome: 'sign-in', reason: 'basic-not-allowed', service };
  }
  if (credential.method === 'basic' && !service.allowBasic)
    return { outcome: 'sign-in', reason: 'basic-not-allowed', service };
  // An API token limited to other services is refused like an account that may not enter.
  if (credential.audiences && !credential.audiences.includes(service.name))
    return { outcome: 'refuse', reason: 'token-audience', service };
  // Who may enter is decided before the second factor: a step that cannot lead in is not asked for.
  if (!mayEnter(service.access, credential.account)) return { outcome: 'refuse', reason: 'not-allowed', service };
  if (service.requireSecondFactor && !credential.secondFactor) {
    // Only a session can take the second step; an API token or a password alone never will.
    if (credential.method !== 'session') return { outcome: 'refuse', reason: 'second-factor-required', service };
    return { outcome: 'second-step', reason: 'second-factor-required', service };
  }
  return {
    outcome: 'allow',
    reason: 'allowed',
    service,
    headers: identityHeaders(service.headers, credential.account),
  };
}
