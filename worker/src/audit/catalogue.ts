/**
 * The catalogue of audit event types (architecture.md §5.1): the one list of every event the service
 * records, with its stream(s), its outcome(s), what it means and the fields of its `data`. The type of
 * `auditInsert`'s `type` is derived from it (an uncatalogued type does not typecheck), GET
 * /v3/logs/audit_log_types lists it per stream, the logs endpoints' OpenAPI descriptions carry its
 * table, and a unit test keeps the table of docs/events.md equal to it.
 */

/** Log-store streams, one per AUDIT_* index pattern. */
export type AuditStream =
  | 'user_activity'
  | 'crud_user'
  | 'crud_admin'
  | 'api_access'
  | 'ext_service_access'
  | 'data_lifecycle';

/** `event.outcome` in the store: attempts end in success or failure; other events are `unknown`. */
export type EventOutcome = 'success' | 'failure' | 'unknown';

/** One event type: where it goes, how it ends, what it says. */
export interface EventTypeSpec {
  readonly streams: readonly AuditStream[];
  readonly outcomes: readonly EventOutcome[];
  readonly description: string;
  /** The fields of `data`: name → meaning (a field is absent when it does not apply). */
  readonly data: Readonly<Record<string, string>>;
}

const SOURCE = {
  source: 'local, ldap or oidc',
  server: 'the LDAP server record',
  provider: 'the OIDC provider record',
};
const EXT = {
  durationMs: 'how long the call took',
  errorClass:
    "on failure, its class: the bridge's code (DIRECTORY_UNAVAILABLE, ...), BRIDGE_TIMEOUT, " +
    'PROVIDER_UNREACHABLE, SMTP_4XX...; never its text',
};

/** Every audit event type (sorted by stream, then name). */
export const EVENT_CATALOGUE = {
  'login.success': {
    streams: ['user_activity'],
    outcomes: ['success'],
    description: 'a login with the right credentials',
    data: {
      ...SOURCE,
      activeDirectory: 'LDAP: whether the directory is Active Directory',
      method: 'passkey for a passkey sign-in (/v3/login/passkey); absent for a password',
      passkeyId: 'the passkey used',
      secondFactor: 'true when a local login completed its second step (docs/security-mfa.md)',
    },
  },
  'login.failure': {
    streams: ['user_activity'],
    outcomes: ['failure'],
    description:
      'a wrong password or an unknown login (subject.login: the login as given), or a passkey assertion refused',
    data: {
      ...SOURCE,
      via:
        'password_change when the current password of a change was wrong; totp or recovery_code for a wrong ' +
        'second-factor code (docs/security-mfa.md)',
      method: 'passkey for a passkey sign-in',
      reason:
        "passkey: unknown-credential, user-handle (the credential is not that account's), counter (it did not " +
        'grow: a cloned authenticator?), verification, user-verification or challenge',
      passkeyId: 'the passkey, when known',
    },
  },
  'login.second_factor_required': {
    streams: ['user_activity'],
    outcomes: ['unknown'],
    description: 'a right password of an account with a second factor: a pending login, no session yet',
    data: { ...SOURCE, factors: 'the confirmed factor kinds (totp, ...)' },
  },
  'mfa.verified': {
    streams: ['user_activity'],
    outcomes: ['unknown'],
    description: 'a second factor passed: the second step of a login, or a step-up of a session',
    data: { method: 'totp or recovery_code', via: 'login, oauth_login or step_up', left: 'recovery codes left' },
  },
  'mfa.failure': {
    streams: ['user_activity'],
    outcomes: ['failure'],
    description:
      'a wrong, replayed or unknown second-factor code (counted as a failed login, except the replay of the last ' +
      'accepted TOTP code)',
    data: {
      method: 'totp or recovery_code',
      via: 'login, oauth_login, step_up or enrolment',
      reason:
        'wrong (counted), or replayed: the code of the last accepted TOTP step again (not counted; ' +
        'docs/security-mfa.md, "A code used twice")',
    },
  },
  'mfa.factor_added': {
    streams: ['user_activity'],
    outcomes: ['unknown'],
    description: "a second factor confirmed (the account's other sessions end; the user is told by mail)",
    data: { factor: 'totp' },
  },
  'mfa.factor_removed': {
    streams: ['user_activity', 'crud_admin'],
    outcomes: ['unknown'],
    description:
      'a second factor removed by its user, an administrator or the operator (sessions end; the user is told by mail)',
    data: { factor: 'totp, or all (every factor and the recovery codes)', by: 'self, admin or operator' },
  },
  'mfa.recovery_codes_generated': {
    streams: ['user_activity'],
    outcomes: ['unknown'],
    description: "new recovery codes (the account's earlier ones no longer work)",
    data: { count: 'how many' },
  },
  'login.refused': {
    streams: ['user_activity'],
    outcomes: ['failure'],
    description: 'a login refused for another reason than the password (blocked, conflict, not allowed)',
    data: {
      ...SOURCE,
      reason: 'blocked:REASON, login-not-allowed:REASON, login-conflict, locked-in-directory, disabled-in-directory',
      directoryReason: 'LDAP: what the directory said',
      heldBy: 'login-conflict: the source of the account that holds the login',
    },
  },
  'login.password_expired': {
    streams: ['user_activity'],
    outcomes: ['failure'],
    description: 'the right password, but expired (or must be changed)',
    data: { ...SOURCE, directoryReason: 'LDAP: password-expired or must-change' },
  },
  'account.locked': {
    streams: ['user_activity'],
    outcomes: ['failure'],
    description: 'failed logins restricted the login (a restriction applied: architecture.md §4)',
    data: {
      ...SOURCE,
      restriction:
        'untrusted-clients (AUTH_FAILED_COUNT failures: clients without a device cookie of the login), ' +
        'device (one device spent its own budget) or all-clients (the 100 failures a day of the account)',
      until: 'the end of the lock (ISO 8601)',
    },
  },
  'address.throttled': {
    streams: ['user_activity'],
    outcomes: ['failure'],
    description: 'AUTH_ADDRESS_FAILED_COUNT failures from one client address: its password logins get 429',
    data: { ...SOURCE, until: 'the end of the restriction, unless older failures leave the window first (ISO 8601)' },
  },
  'device.added': {
    streams: ['user_activity'],
    outcomes: ['unknown'],
    description:
      'a session login from a client without a device cookie of the account (a new device): the owner is told ' +
      'by mail while AUTH_NEW_DEVICE_MAIL is on (architecture.md §4)',
    data: { via: 'cookie (/v3/login) or oauth (/v3/oauth_login)' },
  },
  'account.blocked': {
    streams: ['user_activity', 'crud_admin'],
    outcomes: ['unknown'],
    description: 'an account blocked: for inactivity (user_activity) or by an administrator (crud_admin)',
    data: { reason: 'inactivity or admin', by: 'inactivity: login or job', ...SOURCE },
  },
  'session.created': {
    streams: ['user_activity'],
    outcomes: ['unknown'],
    description: 'a session started',
    data: {
      kind: 'cookie or bearer',
      authMethod: 'how the login was proven',
      limit: 'the session limit applied',
      secondFactor: 'true when the login passed a second factor',
    },
  },
  'session.revoked': {
    streams: ['user_activity', 'crud_admin'],
    outcomes: ['unknown'],
    description: 'one session ended: by its user (logout) or by an administrator',
    data: { sessionId: 'the session', reason: 'logout, user or admin' },
  },
  'session.revoked_all': {
    streams: ['user_activity', 'crud_admin'],
    outcomes: ['unknown'],
    description: 'all sessions of an account ended: by its user or by an administrator',
    data: { reason: 'logout_all' },
  },
  'identity.linked': {
    streams: ['user_activity'],
    outcomes: ['unknown'],
    description: 'an external identity linked to a local account after its password was proven',
    data: { source: 'ldap or oidc', sourceName: 'the record', issuer: 'the OIDC issuer', externalId: 'the identity' },
  },
  'password_reset.requested': {
    streams: ['user_activity'],
    outcomes: ['unknown'],
    description: 'a password reset was asked for (one per matching account, or one with found: false)',
    data: {
      by: 'login or email',
      mode: 'link, external or blocked',
      mailed: 'whether a mail was queued',
      found: 'false when no account matched',
      email: 'the address asked for, when none matched',
    },
  },
  'password.changed': {
    streams: ['crud_user'],
    outcomes: ['unknown'],
    description: 'a user changed their own password (or set it through a reset link)',
    data: {
      sessionsEnded: 'all or others',
      tokensRevoked: 'whether the API tokens were revoked',
      via: 'reset_link',
      purpose: 'reset link: reset or invite',
    },
  },
  'passkey.registered': {
    streams: ['crud_user'],
    outcomes: ['unknown'],
    description:
      "a user registered a passkey (docs/security-passkeys.md): the account's other sessions end and the owner " +
      'is told by mail',
    data: {
      passkeyId: 'the passkey',
      name: 'its name',
      backupEligible: 'whether it may be synced (a multi-device passkey)',
      backupState: 'whether it is synced',
      aaguid: "the authenticator's model",
    },
  },
  'passkey.refused': {
    streams: ['crud_user'],
    outcomes: ['failure'],
    description: 'a passkey registration refused (the response did not verify, or the passkey is registered)',
    data: { reason: 'challenge, verification, user-verification or registered' },
  },
  'passkey.renamed': {
    streams: ['crud_user'],
    outcomes: ['unknown'],
    description: 'a user renamed one of their passkeys',
    data: { passkeyId: 'the passkey', name: 'its new name' },
  },
  'passkey.removed': {
    streams: ['crud_user'],
    outcomes: ['unknown'],
    description: "a user removed one of their passkeys: the account's other sessions end and the owner is told by mail",
    data: { passkeyId: 'the passkey', name: 'its name' },
  },
  'token.issued': {
    streams: ['crud_user', 'crud_admin'],
    outcomes: ['unknown'],
    description: 'an API token issued (by its owner: crud_user; by an administrator: crud_admin)',
    data: {
      tokenId: 'the token',
      name: 'its name',
      prefix: 'its first characters',
      expiresAt: 'its expiry',
      scopes: 'its scopes (null: everything its owner may do)',
      audiences: 'the protected services it is limited to (null: no audience limit)',
    },
  },
  'token.revoked': {
    streams: ['crud_user', 'crud_admin'],
    outcomes: ['unknown'],
    description: 'an API token revoked (by its owner: crud_user; by an administrator: crud_admin)',
    data: { tokenId: 'the token' },
  },
  'user.created': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'an account created: by an administrator, the bootstrap, the operator, or a first external login',
    data: {
      role: 'its role',
      password: 'local: `chosen` (created without one: the welcome mail links to choosing it) or `given`',
      kind: '`service` for a service account (docs/api.md, "Service accounts"); absent for a person',
      via: 'bootstrap, first-run, operator, ...',
      source: 'ldap or oidc',
      sourceName: 'the record',
    },
  },
  'user.updated': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'an account changed by an administrator',
    data: { before: 'the changed fields before', after: 'the changed fields after' },
  },
  'user.refreshed': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description:
      "an external account's profile refreshed from its source at a login, or its LDAP groups narrowed by the " +
      'periodic refresh (by: job)',
    data: {
      source: 'ldap or oidc',
      sourceName: 'the record',
      role: 'the new role, when it changed',
      groupsRemoved: 'the groups the directory no longer lists (the refresh)',
      by: 'job (the refresh; absent at a login)',
    },
  },
  'user.last_admin_kept': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description:
      'a warning: the last active administrator kept admin, which its groups (GROUP_ROLES) or its source no ' +
      'longer give, at a login or the LDAP groups refresh (docs/groups.md)',
    data: {
      source: 'ldap or oidc',
      sourceName: 'the record',
      role: 'the role the groups or the source would have given',
      by: 'job (the refresh; absent at a login)',
    },
  },
  'user.deleted': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'an account deleted',
    data: { loginReservedUntil: 'until when its login stays reserved' },
  },
  'account.unblocked': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'an account unblocked by an administrator or the operator',
    data: {},
  },
  'account.unlocked': {
    streams: ['crud_admin', 'user_activity'],
    outcomes: ['unknown'],
    description:
      "a login's restrictions lifted: by an administrator or the operator (crud_admin), or by a password reset " +
      'through the mailed link (user_activity); a lock that ends by itself writes none',
    data: { via: 'reset_link when a reset lifted it' },
  },
  'password.reset': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: "an account's password set by an administrator or the operator",
    data: { sessionsEnded: 'all', tokensRevoked: 'whether the API tokens were revoked' },
  },
  'super_access.granted': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'super-access lent to an account',
    data: { until: 'its end (ISO 8601)', minutes: 'its length' },
  },
  'super_access.ended': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'super-access ended: by an administrator, or at its end (by the job)',
    data: { by: 'admin (absent when the job ended it)' },
  },
  'setting.changed': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'a setting saved through the API (secrets shown as ***)',
    data: {
      name: 'the variable',
      before: 'its value before',
      beforeSource: 'where it came from',
      after: 'its new value',
    },
  },
  'setting.reset': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'a saved setting removed: back to the environment or default (secrets shown as ***)',
    data: { name: 'the variable', before: 'its value before', beforeSource: 'where it came from' },
  },
  'ldap_server.created': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'an LDAP server record created',
    data: { name: 'the record', urls: 'its URLs', baseDn: 'its base DN' },
  },
  'ldap_server.updated': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'an LDAP server record changed',
    data: { name: 'the record', changed: 'the names of the changed fields' },
  },
  'ldap_server.deleted': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'an LDAP server record removed',
    data: { name: 'the record' },
  },
  'group.created': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'a local group made by an administrator (docs/groups.md)',
    data: { id: 'the group', name: 'its name' },
  },
  'group.updated': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'a group renamed, or its description changed',
    data: {
      id: 'the group',
      name: 'its name now',
      changed: 'the changed fields',
      before: 'its name before (a rename)',
    },
  },
  'group.deleted': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'a group removed with its memberships',
    data: { id: 'the group', name: 'its name', source: 'local, ldap or oidc' },
  },
  'group.member_added': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'an account (the subject) added to a group by an administrator',
    data: { id: 'the group', name: 'its name' },
  },
  'group.member_removed': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: "an account's (the subject's) local membership of a group removed by an administrator",
    data: { id: 'the group', name: 'its name' },
  },
  'service.created': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'a protected service created (docs/integration.md)',
    data: { name: 'the service', hosts: 'its hosts', prefixes: 'its URL prefixes', clientId: 'its client id' },
  },
  'service.updated': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'a protected service changed',
    data: { name: 'the service', changed: 'the names of the changed fields' },
  },
  'service.deleted': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'a protected service removed',
    data: { name: 'the service' },
  },
  'service.secret_rotated': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: "a protected service's client secret replaced (the old one stops working)",
    data: { name: 'the service', clientId: 'its client id' },
  },
  'service.access': {
    streams: ['ext_service_access'],
    outcomes: ['success', 'failure'],
    description:
      'the gate asked whether a request may enter a protected service (forward-auth, docs/integration.md, ' +
      '"Audit"): a refusal (failure) once per service, reason, account and client address in a window of ' +
      'AUDIT_API_ACCESS_WINDOW_SEC; an admission (success) once per session or token and service in that window',
    data: {
      service: 'the service (null: none answers for the address)',
      outcome: 'allow, sign-in, second-step or refuse',
      reason:
        'allowed, unknown-service, bad-target, no-credentials, invalid-credentials, basic-not-allowed, ' +
        'second-factor-required, not-allowed, token-audience (an API token limited to other services) or ' +
        'untrusted-proxy',
      url: 'the address asked for, without its query (null when none could be read)',
    },
  },
  'identity_provider.created': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'an OIDC identity provider record created',
    data: { name: 'the record', issuer: 'its issuer', clientId: 'its client id' },
  },
  'identity_provider.updated': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'an OIDC identity provider record changed',
    data: {
      name: 'the record',
      changed: 'the names of the changed fields',
      issuer: 'from and to, when the issuer changed',
      relinkIdentities: 'whether linked identities moved to the new issuer',
    },
  },
  'identity_provider.deleted': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'an OIDC identity provider record removed',
    data: { name: 'the record' },
  },
  'webhook.created': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'a webhook subscription created (docs/webhooks.md)',
    data: {
      webhookId: 'the subscription',
      url: 'where it delivers',
      eventTypes: 'the types it wants',
      delivery: 'direct, or through the bridge',
    },
  },
  'webhook.updated': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'a webhook subscription changed, or its secret rotated',
    data: {
      webhookId: 'the subscription',
      changed: 'the names of the changed fields (secret: a rotation)',
      url: 'the new URL, when it changed',
    },
  },
  'webhook.deleted': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'a webhook subscription removed',
    data: { webhookId: 'the subscription', url: 'where it delivered' },
  },
  'webhook.disabled': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'the service disabled a webhook subscription (docs/webhooks.md, "Disabled subscriptions")',
    data: {
      webhookId: 'the subscription',
      url: 'where it delivered',
      reason: 'gone (the receiver answered 410) or failing (its deliveries failed for too long)',
    },
  },
  'operator.admins_listed': {
    streams: ['crud_admin'],
    outcomes: ['unknown'],
    description: 'the operator command listed the administrators',
    data: { count: 'how many' },
  },
  'api.request': {
    streams: ['api_access'],
    outcomes: ['success', 'failure'],
    description:
      'requests authenticated with Basic or Bearer: a refusal (failure: status 400 or more) or a write (a method ' +
      'other than GET, HEAD, OPTIONS) one event each; successful reads one event per account, credential, path, ' +
      'status, client address and User-Agent in a window of AUDIT_API_ACCESS_WINDOW_SEC (default a minute), with ' +
      "`count`, `first` and `last` (@timestamp and request.id are the first request's)",
    data: {
      method: 'basic or bearer',
      httpMethod: 'GET, POST, ...',
      path: 'the path',
      status: 'the HTTP status',
      tokenId: 'the API token',
      count: 'successful reads: how many requests the event stands for',
      first: "successful reads: the first request's time (ISO 8601, as @timestamp)",
      last: "successful reads: the last request's time (ISO 8601)",
    },
  },
  'ldap.authenticate': {
    streams: ['ext_service_access'],
    outcomes: ['success', 'failure'],
    description: "the directory of an LDAP server record asked, through the bridge, to find and bind a user's entry",
    data: {
      server: 'the LDAP server record',
      result: 'ok, invalid-credentials, locked-out, disabled, password-expired, or error',
      activeDirectory: 'whether the directory is Active Directory',
      ...EXT,
    },
  },
  'ldap.test': {
    streams: ['ext_service_access'],
    outcomes: ['success', 'failure'],
    description: "an administrator's connection test of an LDAP server record (connect, bind, search)",
    data: { server: 'the LDAP server record', failedStep: 'the step that failed', ...EXT },
  },
  'oidc.token_exchange': {
    streams: ['ext_service_access'],
    outcomes: ['success', 'failure'],
    description: "an authorization code exchanged at an OIDC provider's token endpoint (and its ID token checked)",
    data: {
      provider: 'the OIDC provider record',
      statusClass: "the token endpoint's HTTP status class (2xx, 4xx, 5xx)",
      error: "the provider's OAuth error code, or id_token_invalid",
      ...EXT,
    },
  },
  'mail.send': {
    streams: ['ext_service_access'],
    outcomes: ['success', 'failure'],
    description: 'a mail to a user handed to the mail server through the bridge (one per attempt)',
    data: {
      kind: 'the notification kind (password_reset, account_locked, ...)',
      notificationId: 'the notification',
      causeEventId: 'the audit event that caused it',
      recipient: 'the address, masked (j***@example.com)',
      attempt: 'the attempt number',
      result: 'sent, retry or given_up',
      stage: 'on a refusal, the SMTP stage that refused (connect, auth, envelope, message)',
      responseCode: 'on a refusal, the SMTP reply code',
      ...EXT,
    },
  },
  'outbox.purged': {
    streams: ['data_lifecycle'],
    outcomes: ['unknown'],
    description:
      'audit events deleted from the outbox (by the jobs): delivered ones older than OUTBOX_RETENTION_DAY, or, ' +
      'without a log store (the embedded audit log), any older than AUDIT_LOCAL_RETENTION_DAYS',
    data: {
      events: 'how many',
      retentionDays: 'OUTBOX_RETENTION_DAY, or AUDIT_LOCAL_RETENTION_DAYS',
      store: '`local` for the embedded audit log (absent after delivery to the log store)',
    },
  },
  'outbox.trimmed': {
    streams: ['data_lifecycle'],
    outcomes: ['unknown'],
    description:
      'the oldest audit events deleted from the outbox (by the job) because they exceeded its size bound: ' +
      'AUDIT_LOCAL_MAX_MB without a log store, OUTBOX_DELIVERED_MAX_MB for delivered events',
    data: {
      events: 'how many',
      bytes: 'their estimated size',
      maxMB: 'the bound',
      store: '`local` (the embedded audit log) or `delivered` (events already in the log store)',
      from: 'the time of the oldest deleted (ISO 8601)',
      to: 'the time of the newest deleted (ISO 8601)',
    },
  },
  'notifications.purged': {
    streams: ['data_lifecycle'],
    outcomes: ['unknown'],
    description: 'old notifications and used or expired reset links deleted (by the job)',
    data: { notifications: 'how many', resetLinks: 'how many', retentionDays: 'the retention' },
  },
} as const satisfies Record<string, EventTypeSpec>;

/** Every audit event type: a string outside the catalogue is no event type. */
export type AuditEventType = keyof typeof EVENT_CATALOGUE;

/** The catalogue's event types of `stream`, in catalogue order. */
export function eventTypesOf(stream: AuditStream): AuditEventType[] {
  return (Object.keys(EVENT_CATALOGUE) as AuditEventType[]).filter((t) =>
    (EVENT_CATALOGUE[t].streams as readonly AuditStream[]).includes(stream),
  );
}

const cell = (s: string) => s.replaceAll('|', '\\|');

/** The catalogue as a markdown table (docs/events.md and the logs endpoints' descriptions). */
export function catalogueMarkdown(): string {
  const rows = (Object.entries(EVENT_CATALOGUE) as [AuditEventType, EventTypeSpec][]).map(([type, s]) => {
    const data =
      Object.entries(s.data)
        .map(([k, v]) => `\`${k}\`: ${v}`)
        .join('; ') || '-';
    return (
      `| \`${type}\` | ${s.streams.join(', ')} | ${s.outcomes.join(', ')} | ${cell(s.description)} | ` +
      `${cell(data)} |`
    );
  });
  return ['| type | stream | outcome | description | data |', '|---|---|---|---|---|', ...rows].join('\n');
}
