/**
 * The words of /v4/admin/overview in the API description (routes.ts): their summaries and descriptions. The
 * document is generated at build time on the Node host (architecture.md §10), so the edge script needs none of
 * them: wrangler.toml's [alias] replaces this module there with worker/edge-aliases/overview-api-words.js (empty
 * strings), as for the webhooks' words (docs/performance.md, "The edge bundle").
 */
export const W: Record<string, string> = {
  d1: 'what put it on the list (see the list)',
  d2: 'the start of the 24 hours the `last24h` numbers count',
  d3: '`login.failure` events (wrong password, unknown login, passkey refused)',
  d4: '`account.locked` events (a failed-login restriction applied)',
  d5: 'distinct logins they restricted',
  d6: '`address.throttled` events',
  d7:
    'mails created in the window and given up; not a mail to an account without an e-mail address, which ' +
    'was never tried (the notifications list shows it, given up, "the account has no e-mail address")',
  d8: 'live sessions of all accounts (cookie and OAuth)',
  d9: 'the login key (case-folded)',
  d10: 'the local account, if one has the login',
  d11: 'logins locked for untrusted clients now (local and LDAP), latest end first',
  d12: 'mails whose last try failed, waiting for another',
  d13:
    'the newest 5 mails of the last 24 hours that failed or were given up (to an address: not a mail to ' +
    'an account without one)',
  d14: 'configured: LOGSTORE_URLS; embedded: the audit log in libSQL (docs/audit-logs-embedded.md)',
  d15:
    'local: every event kept in libSQL (AUDIT_LOCAL_MAX_MB); delivered: events already in the ' +
    'log store, kept in the outbox (OUTBOX_DELIVERED_MAX_MB)',
  d16: 'estimated bytes of those events',
  d17: 'the bound; beyond, the oldest are deleted',
  d18: 'bytes in percent of maxBytes',
  d19: 'true from 80 % of the bound',
  d20: 'when the job bound-audit-store measured it',
  d21:
    'the audit events against their size bound (docs/audit-logs-embedded.md, "Size bound"); ' +
    'null before its first measure',
  d22: 'subscriptions whose last attempt failed, or that the service disabled',
  d23: 'webhook subscriptions needing attention (docs/webhooks.md), the first 5',
  d24:
    'configured: a mail server; outbox: none, mails are written as .eml files (Node host; docs/mail.md, ' +
    '"Development outbox"); not_configured: mail cannot be sent',
  d25: 'why mail cannot be sent (not_configured)',
  s26: "The administrator's overview",
  d27:
    'Failed logins and locks of the last 24 hours, live sessions, accounts needing attention (blocked, expired ' +
    'password, inactive soon), mail delivery failures, and the state of the log store and of mail: counts with ' +
    'the first few items of each. The 24-hour numbers read the audit outbox, which holds shipped events ' +
    'OUTBOX_RETENTION_DAY days with a log store and AUDIT_LOCAL_RETENTION_DAYS days without.',
  blocked: 'blocked accounts (by an administrator or for inactivity), last changed first; `at`: last change',
  passwordExpired:
    'active local accounts whose password is older than USER_PASSWORD_EXPIRATION_DAY; `at`: when it was set',
  inactiveSoon:
    'active accounts the inactivity block (USER_INACTIVE_TIMEOUT_DAY) reaches within 7 days; `at`: last activity',
};
