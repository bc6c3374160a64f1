/**
 * The registry against the specification: every variable of the specification's tables (read from
 * docs/specification.md, a copy of the specification) exists with its environment name, type and
 * default. The expected values come from the specification text, never from the registry itself.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseValue } from './parse.js';
import { REGISTRY, VAR_NAMES, isVarName } from './registry.js';

interface SpecRow {
  name: string;
  env: string;
  type: string;
  dflt: string;
  section: string;
}

function specRows(): SpecRow[] {
  const text = readFileSync(new URL('../../../docs/specification.md', import.meta.url), 'utf8');
  const start = text.indexOf('### Configuration variables');
  const end = text.indexOf('### Other resources');
  const rows: SpecRow[] = [];
  let section = '';
  for (const line of text.slice(start, end).split('\n')) {
    if (line.startsWith('#### ')) section = line.slice(5);
    else if (/^[A-Z][A-Za-z -]+:$/.test(line)) section = line.slice(0, -1);
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 6 || !/^[A-Z][A-Z0-9_]+$/.test(cells[1]!)) continue;
    rows.push({ name: cells[1]!, env: cells[2]!, type: cells[3]!, dflt: cells[4]!, section });
  }
  return rows;
}

// Environment names the specification leaves "not shown" (architecture.md §4).
const NOT_SHOWN_ENV: Record<string, string> = {
  STATIC_DIR: 'AUTH_STATIC_DIR',
  DEBUG_COUNTDOWN_USER_SU: 'AUTH_DEBUG_COUNTDOWN_USER_SU',
};

/** Defaults the specification describes in words, and what satisfies the description. */
const DESCRIBED: Record<string, (v: unknown) => boolean> = {
  'the four characters $, @, #, %': (v) => JSON.stringify(v) === JSON.stringify(['$', '@', '#', '%']),
  'a placeholder mail-server host name': (v) => v === 'mail.example.com',
  'a placeholder sender domain': (v) => typeof v === 'string' && v.endsWith('example.com'),
  'a short placeholder user name': (v) => typeof v === 'string' && v.length > 0 && v.length <= 8,
  'a placeholder password string': (v) => typeof v === 'string' && v.length > 0,
  "the Russian-language words for 'authorization service'": (v) => v === 'Сервис авторизации',
  'generated automatically at start': (v) => v === '',
  empty: (v) => v === '',
  'https://<logstore_host>:9200': (v) => v === 'https://<logstore_host>:9200',
};

function specType(t: string): string {
  if (t.startsWith('string')) return 'string';
  if (t.startsWith('number')) return 'number';
  if (t.startsWith('integer')) return 'integer';
  return t;
}

const rows = specRows();

describe('registry against the specification', () => {
  it('reads every table of the specification', () => {
    // API 11, Security 20, Mail 6, Error tracking 1, hidden 4 + 14 + 9 + 6 + 2 + 10
    expect(rows.length).toBe(83);
  });

  it.each(rows.map((r) => [r.name, r] as const))('%s', (_name, row) => {
    expect(isVarName(row.name), `${row.name} missing from the registry`).toBe(true);
    if (!isVarName(row.name)) return;
    const def = REGISTRY[row.name];
    const env = row.env.startsWith('(') ? (NOT_SHOWN_ENV[row.name] ?? row.name) : row.env;
    expect(def.env).toBe(env);
    const expectedType = specType(row.type);
    // LOG_LEVEL and ACCESS_LOG_LEVEL are strings restricted to level names; the type stays "string".
    expect(def.type).toBe(expectedType);
    const ui = ['API', 'Security', 'Mail', 'Error tracking'].some((g) => row.section.startsWith(`Group ${g}`));
    expect(def.ui).toBe(ui);
    const described = DESCRIBED[row.dflt];
    if (described) {
      expect(described(def.default), `default of ${row.name}: ${JSON.stringify(def.default)}`).toBe(true);
    } else if (def.type === 'boolean') {
      expect(def.default).toBe(row.dflt === 'True');
    } else if (def.type === 'integer' || def.type === 'number') {
      expect(def.default).toBe(Number(row.dflt));
    } else {
      expect(def.default).toBe(row.dflt);
    }
    // The default passes the registry's own validation.
    const text = Array.isArray(def.default) ? def.default.join(',') : String(def.default);
    expect(parseValue(row.name, text).ok).toBe(true);
  });

  it('adds only deployment variables beyond the specification', () => {
    const specNames = new Set(rows.map((r) => r.name));
    const extra = VAR_NAMES.filter((n) => !specNames.has(n));
    for (const n of extra) expect(REGISTRY[n].group, n).toBe('Deployment');
    expect(extra.sort()).toEqual([
      'ADDRESS_FAILED_COUNT',
      'ADDRESS_FAILED_WINDOW_MIN',
      'AUDIT_API_ACCESS_ENABLED',
      'AUDIT_API_ACCESS_WINDOW_SEC',
      'AUDIT_LOCAL_MAX_MB',
      'AUDIT_LOCAL_RETENTION_DAYS',
      'AUTH_BOOTSTRAP_ADMIN_LOGIN',
      'AUTH_BOOTSTRAP_ADMIN_PASSWORD',
      'BRIDGE_EMBEDDED',
      'BRIDGE_TLS_CA',
      'BRIDGE_TLS_CERT',
      'BRIDGE_TLS_KEY',
      'BRIDGE_URL',
      'COOKIE_DOMAIN',
      'GROUP_ROLES',
      'LDAP_GROUPS_REFRESH_MIN',
      'LIBSQL_AUTH_TOKEN',
      'LIBSQL_URL',
      'MAIL_LANGUAGE',
      'MAX_BODY_SIZE',
      'METRICS_TOKEN',
      'MFA_REQUIRED_ROLES',
      'MFA_STEP_UP_MIN',
      'NEW_DEVICE_MAIL',
      'OUTBOX_DELIVERED_MAX_MB',
      'OUTBOX_RETENTION_DAY',
      'PASSWORD_ADDRESS_BURST',
      'PASSWORD_ADDRESS_IN_FLIGHT',
      'PASSWORD_ADDRESS_RATE',
      'PASSWORD_BLOCKLIST_FILE',
      'PASSWORD_EXPIRY_NOTICE_DAY',
      'PASSWORD_HASH_CONCURRENCY',
      'PASSWORD_HASH_QUEUE',
      'PASSWORD_RESET_TTL_MIN',
      'PUBLIC_URL',
      'REVOCATION_CHECK_SEC',
      'SECRETS_ENCRYPTION_KEY',
      'SECRETS_ENCRYPTION_KEY_PREVIOUS',
      'SESSION_ABSOLUTE_TIMEOUT_HOURS',
      'SESSION_IDLE_TIMEOUT_MIN',
      'SESSION_SECRET_KEY_PREVIOUS',
      'TEST_CLOCK_CONTROL',
      'TOKEN_DEFAULT_LIFETIME_DAYS',
      'TOKEN_EXPIRY_NOTICE_DAY',
      'TOKEN_MAX_LIFETIME_DAYS',
      'TOKEN_NO_EXPIRY_ALLOWED',
      'TRUSTED_PROXIES',
      'WEBAUTHN_ORIGINS',
      'WEBAUTHN_RP_ID',
      'WEBHOOK_ALLOW_HTTP_HOSTS',
      'WEBHOOK_ALLOW_PRIVATE',
      'WELCOME_LINK_TTL_HOURS',
    ]);
  });

  it('environment names are unique', () => {
    const envs = VAR_NAMES.map((n) => REGISTRY[n].env);
    expect(new Set(envs).size).toBe(envs.length);
  });

  it('marks the secrets', () => {
    const secrets = VAR_NAMES.filter((n) => REGISTRY[n].secret).sort();
    expect(secrets).toEqual([
      'AUTH_BOOTSTRAP_ADMIN_PASSWORD',
      'EMAIL_HOST_PASSWORD',
      'LIBSQL_AUTH_TOKEN',
      'METRICS_TOKEN',
      'SECRETS_ENCRYPTION_KEY',
      'SECRETS_ENCRYPTION_KEY_PREVIOUS',
      'SESSION_SECRET_KEY',
      'SESSION_SECRET_KEY_PREVIOUS',
    ]);
  });
});
