/**
 * What `npm start` says once it serves (docs/architecture.md §8, "Start messages"): on a terminal a
 * short banner a person reads (addresses, the first administrator, where mail and the audit log
 * go), and human log lines after it; JSON log lines, as always, when stdout is not a terminal.
 */
import type { ConfigSnapshot } from '../src/config/index.js';
import { CONSOLE_PATH } from '../src/pages/page.js';
import type { Level } from '../src/http/logger.js';
import { logstoreTarget } from '../src/logs/target.js';
import { mailNotConfigured, noMailServer } from '../src/notifications/mail-settings.js';
import { mailLinkBase } from '../src/accounts/reset-tokens.js';
import { shownPath } from './sealing-key.js';

export interface BannerFacts {
  url: string;
  config: ConfigSnapshot;
  /** The first-run page and its one-time code, while no administrator exists and the host offers it. */
  firstRun?: { url: string; code: string };
  adminExists: boolean;
  bridge: string | null;
  /** The development outbox's folder (worker/node/mail-outbox.ts). */
  outbox?: string;
  /** The kept sealing key's file, when no key is configured (worker/node/sealing-key.ts). */
  sealingKey?: KeptKeyFacts;
}

/** The kept sealing key: its file and whether this start generated it. */
export interface KeptKeyFacts {
  file: string;
  created: boolean;
}

/** The kept sealing key, in one line (also the INFO line of a start that is not on a terminal). */
export function sealingKeyState(k: KeptKeyFacts): string {
  const when = k.created ? 'generated at this start' : 'kept from an earlier start';
  return (
    `${shownPath(k.file)} (${when}; no AUTH_SECRETS_ENCRYPTION_KEY): back it up with the database, ` +
    'without it the stored secrets (TOTP, LDAP and OIDC, mail) cannot be opened'
  );
}

/** Where audit events go, in one line (also the INFO line of a start that is not on a terminal). */
export function auditLogState(config: ConfigSnapshot): string {
  const target = logstoreTarget(config);
  if (target) return `the log store (${target.urls.join(', ')}), through the bridge`;
  const days = config.get('AUDIT_LOCAL_RETENTION_DAYS');
  const mb = config.get('AUDIT_LOCAL_MAX_MB');
  return (
    `kept in this service's database for ${days} days, at most ${mb} MB (no log store: LOGSTORE_URLS is the ` +
    'placeholder; AUDIT_LOCAL_RETENTION_DAYS and AUDIT_LOCAL_MAX_MB set the bounds)'
  );
}

/** Where mail goes, in one line (also the INFO line of a start that is not on a terminal). */
export function mailState(config: ConfigSnapshot, bridge: string | null, outbox?: string): string {
  if (outbox && noMailServer(config))
    return `written as .eml files to ${outbox} (development outbox: no mail server, EMAIL_HOST is the placeholder)`;
  const why = mailNotConfigured(config);
  if (why) return `not sent: ${why}`;
  return `through ${config.get('EMAIL_HOST')}:${config.get('EMAIL_PORT')}, by the bridge (${bridge ?? 'none'})`;
}

/** Where the links in mails lead (docs/mail.md, "Links"). */
export function mailLinksState(config: ConfigSnapshot): string {
  const why =
    config.source('DEFAULT_FRONTEND_URL') !== 'default'
      ? 'DEFAULT_FRONTEND_URL'
      : config.get('PUBLIC_URL')
        ? "this service's console at AUTH_PUBLIC_URL"
        : 'the default DEFAULT_FRONTEND_URL: set it, or AUTH_PUBLIC_URL';
  return `${mailLinkBase(config)}/ (${why})`;
}

/** The bridge in one line: its URL, or none and what then fails. */
export function bridgeState(bridge: string | null): string {
  return (
    bridge ??
    'none: LDAP logins, mail through a server and the log store answer 503 (AUTH_BRIDGE_URL; ' +
      'docs/operations-bridge.md)'
  );
}

/** The start banner of a terminal. */
export function startBanner(f: BannerFacts): string {
  const admin = f.adminExists
    ? `an administrator exists: sign in at ${f.url}${CONSOLE_PATH}/`
    : f.firstRun
      ? `none yet: open ${f.firstRun.url} in a browser on this machine, one-time code ${f.firstRun.code}`
      : 'none yet: run npm run ops -- create-admin <login>';
  const rows: Array<[string, string]> = [
    ['service', f.url],
    ['console', `${f.url}${CONSOLE_PATH}/`],
    ['API docs', `${f.url}${f.config.get('DOCS_PREFIX')}`],
    ['admin', admin],
    ['bridge', bridgeState(f.bridge)],
    ['mail', mailState(f.config, f.bridge, f.outbox)],
    ['mail links', mailLinksState(f.config)],
    ['audit log', auditLogState(f.config)],
    ...(f.sealingKey ? [['secrets key', sealingKeyState(f.sealingKey)] as [string, string]] : []),
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `  ${`${k}:`.padEnd(width + 2)}${v}`);
  const level = f.config.get('LOG_LEVEL');
  return [
    `${f.config.get('PROJECT_NAME')} is running`,
    ...lines,
    `Log lines follow at ${level} and above (AUTH_LOG_LEVEL); JSON lines when the output is not a terminal.`,
    '',
  ].join('\n');
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * A JSON log line as a person reads it on a terminal: `HH:MM:SS LEVEL message key=value ...`
 * (fields as compact JSON values). A line that is not JSON passes as it is.
 */
export function humanLogLine(line: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const { time, level, msg, ...fields } = o;
  const at = typeof time === 'string' ? new Date(time) : new Date();
  const clock = `${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`;
  const rest = Object.entries(fields)
    .map(([k, v]) => `${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${clock} ${String(level as Level).padEnd(7)} ${String(msg)}${rest ? `  ${rest}` : ''}`;
}
