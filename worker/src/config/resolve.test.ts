/** Typed parsing of every value type, error messages, and the priority UI → environment → default. */
import { describe, expect, it } from 'vitest';
import { ConfigError, parseValue } from './parse.js';
import { ConfigService, parseEnvironment } from './resolve.js';

describe('parsing by type', () => {
  it('integer: bounds inclusive, junk refused', () => {
    expect(parseValue('AUTH_FAILED_COUNT', '1')).toEqual({ ok: true, value: 1 });
    expect(parseValue('AUTH_FAILED_COUNT', '100')).toEqual({ ok: true, value: 100 });
    expect(parseValue('AUTH_FAILED_COUNT', ' 7 ')).toEqual({ ok: true, value: 7 });
    for (const bad of ['0', '101', '3.5', 'abc', '', '1e2', '0x10'])
      expect(parseValue('AUTH_FAILED_COUNT', bad).ok, bad).toBe(false);
  });

  it('number: range 0.0..1.0 for sample rates', () => {
    expect(parseValue('FRONTEND_ERRTRACK_TRACES_SAMPLE_RATE', '0.25')).toEqual({ ok: true, value: 0.25 });
    expect(parseValue('FRONTEND_ERRTRACK_TRACES_SAMPLE_RATE', '0')).toEqual({ ok: true, value: 0 });
    expect(parseValue('FRONTEND_ERRTRACK_TRACES_SAMPLE_RATE', '1.0')).toEqual({ ok: true, value: 1 });
    for (const bad of ['1.01', '-0.1', 'NaN', 'Infinity', 'half', ''])
      expect(parseValue('FRONTEND_ERRTRACK_TRACES_SAMPLE_RATE', bad).ok, bad).toBe(false);
  });

  it('boolean: True/False/true/false/1/0', () => {
    for (const t of ['True', 'true', 'TRUE', '1']) expect(parseValue('DEBUG', t)).toEqual({ ok: true, value: true });
    for (const f of ['False', 'false', '0']) expect(parseValue('DEBUG', f)).toEqual({ ok: true, value: false });
    for (const bad of ['yes', 'on', '2', '']) expect(parseValue('DEBUG', bad).ok, bad).toBe(false);
  });

  it('list: comma-separated, items validated', () => {
    expect(parseValue('USER_PASSWORD_SPECIAL_SYM', '!, ?,*')).toEqual({ ok: true, value: ['!', '?', '*'] });
    expect(parseValue('USER_PASSWORD_SPECIAL_SYM', '')).toEqual({ ok: true, value: [] });
    expect(parseValue('USER_PASSWORD_SPECIAL_SYM', 'a,!').ok).toBe(false);
    expect(parseValue('USER_PASSWORD_SPECIAL_SYM', '!!').ok).toBe(false);
    expect(parseValue('USER_PASSWORD_SPECIAL_SYM', '7').ok).toBe(false);
  });

  it('enumeration: case-insensitive, unknown refused', () => {
    expect(parseValue('BACKGROUND_TYPE', 'memory')).toEqual({ ok: true, value: 'MEMORY' });
    expect(parseValue('BACKGROUND_TYPE', 'REDIS').ok).toBe(false);
  });

  it('string with a format: log levels, URLs, paths, DSNs, PEM', () => {
    expect(parseValue('LOG_LEVEL', 'warn')).toEqual({ ok: true, value: 'WARNING' });
    expect(parseValue('LOG_LEVEL', 'debug')).toEqual({ ok: true, value: 'DEBUG' });
    expect(parseValue('LOG_LEVEL', 'verbose').ok).toBe(false);
    expect(parseValue('DEFAULT_FRONTEND_URL', 'https://app.example.org/home').ok).toBe(true);
    expect(parseValue('DEFAULT_FRONTEND_URL', 'javascript:alert(1)').ok).toBe(false);
    expect(parseValue('ROOT_PATH', '/api/auth').ok).toBe(true);
    expect(parseValue('ROOT_PATH', 'api/auth').ok).toBe(false);
    expect(parseValue('ROOT_PATH', '/api/auth/').ok).toBe(false);
    expect(parseValue('FRONTEND_ERRTRACK_DSN', 'https://abc@o1.ingest.example.com/42').ok).toBe(true);
    expect(parseValue('FRONTEND_ERRTRACK_DSN', 'https://o1.ingest.example.com/42').ok).toBe(false);
    expect(parseValue('ERRTRACK_CA', 'not a pem').ok).toBe(false);
    expect(parseValue('LOGSTORE_URLS', 'https://a:9200; https://b:9200').ok).toBe(true);
    expect(parseValue('LOGSTORE_URLS', 'https://a:9200;ftp://b').ok).toBe(false);
  });
});

describe('error messages', () => {
  it('name the variable, the expected type and the value received', () => {
    const r = parseValue('BIND_PORT', 'eighty');
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.issue.message).toBe('AUTH_BIND_PORT (BIND_PORT): expected integer in 0..65535, received "eighty"');
  });

  it('mask secrets', () => {
    const r = parseValue('SESSION_SECRET_KEY', 'short-secret');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.issue.message).toContain('SESSION_SECRET_KEY');
      expect(r.issue.message).not.toContain('short-secret');
      expect(r.issue.message).toContain('***');
    }
  });

  it('parseEnvironment lists every bad variable at once', () => {
    try {
      parseEnvironment({ AUTH_BIND_PORT: 'x', AUTH_DEBUG: 'maybe', AUTH_WORKERS: '2' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const e = err as ConfigError;
      expect(e.issues.map((i) => i.name).sort()).toEqual(['BIND_PORT', 'DEBUG']);
      expect(e.message).toContain('AUTH_DEBUG (DEBUG): expected boolean');
    }
  });
});

describe('priority: UI → environment → default', () => {
  const env = parseEnvironment({
    AUTH_FAILED_COUNT: '7',
    USER_PASSWORD_MIN_LENGTH: '10',
    AUTH_DB_SCHEMA: 'envschema',
    AUTH_PROFILE: 'False',
  });

  it('default when nothing is set, environment over default', () => {
    expect(env.get('AUTH_SESSIONS_MAX_COUNT')).toBe(5);
    expect(env.source('AUTH_SESSIONS_MAX_COUNT')).toBe('default');
    expect(env.get('AUTH_FAILED_COUNT')).toBe(7);
    expect(env.source('AUTH_FAILED_COUNT')).toBe('env');
  });

  it('wrangler [vars] may be numbers or booleans', () => {
    const e = parseEnvironment({ AUTH_FAILED_COUNT: 4, AUTH_DEBUG: true });
    expect(e.get('AUTH_FAILED_COUNT')).toBe(4);
    expect(e.get('DEBUG')).toBe(true);
  });

  it('UI value over environment, for UI-editable variables only; bad saved values are skipped', async () => {
    const issues: string[] = [];
    const svc = new ConfigService({
      env,
      load: async () => ({ AUTH_FAILED_COUNT: '9', DB_SCHEMA: 'uischema', USER_PASSWORD_MIN_LENGTH: 'junk' }),
      onIssue: (i) => issues.push(i.name),
    });
    const c = await svc.current();
    expect(c.get('AUTH_FAILED_COUNT')).toBe(9);
    expect(c.source('AUTH_FAILED_COUNT')).toBe('ui');
    expect(c.get('DB_SCHEMA')).toBe('envschema'); // hidden: never from the UI
    expect(c.get('USER_PASSWORD_MIN_LENGTH')).toBe(10);
    expect(c.source('USER_PASSWORD_MIN_LENGTH')).toBe('env');
    expect(issues).toEqual(['USER_PASSWORD_MIN_LENGTH']);
  });

  it('UI values are cached for the TTL, then re-read; invalidate() re-reads at once', async () => {
    let now = 0;
    let saved: Record<string, string> = { AUTH_FAILED_COUNT: '9' };
    let loads = 0;
    const svc = new ConfigService({ env, ttlMs: 1000, now: () => now, load: async () => (loads++, saved) });
    expect((await svc.current()).get('AUTH_FAILED_COUNT')).toBe(9);
    saved = { AUTH_FAILED_COUNT: '2' };
    now = 999;
    expect((await svc.current()).get('AUTH_FAILED_COUNT')).toBe(9);
    now = 1000;
    expect((await svc.current()).get('AUTH_FAILED_COUNT')).toBe(2);
    saved = {};
    svc.invalidate();
    expect((await svc.current()).get('AUTH_FAILED_COUNT')).toBe(7);
    expect(loads).toBe(3);
  });

  it('reads within the TTL cost no load', async () => {
    let loads = 0;
    const svc = new ConfigService({ env, load: async () => (loads++, {}) });
    await svc.current();
    await Promise.all([svc.current(), svc.current(), svc.current()]);
    expect(loads).toBe(1);
  });

  it('no request waits while the snapshot is younger than staleMs: it is refreshed in the background', async () => {
    let now = 0;
    let saved: Record<string, string> = { AUTH_FAILED_COUNT: '9' };
    let loads = 0;
    const svc = new ConfigService({ env, ttlMs: 1000, staleMs: 5000, now: () => now, load: async () => saved });
    const load = async () => {
      loads++;
      return saved;
    };
    const background: Promise<unknown>[] = [];
    const later = (work: () => Promise<unknown>) => void background.push(work());
    expect(svc.served(load, later)).toBeUndefined(); // nothing loaded yet: the first request waits
    await svc.current(load);
    saved = { AUTH_FAILED_COUNT: '2' };
    now = 999;
    expect(svc.served(load, later)?.get('AUTH_FAILED_COUNT')).toBe(9);
    expect(background).toHaveLength(0);
    now = 1000;
    // Old enough to refresh: the old values at once, one refresh in the background, not one per request.
    expect(svc.served(load, later)?.get('AUTH_FAILED_COUNT')).toBe(9);
    expect(svc.served(load, later)?.get('AUTH_FAILED_COUNT')).toBe(9);
    expect(background).toHaveLength(1);
    await Promise.all(background);
    expect(svc.served(load, later)?.get('AUTH_FAILED_COUNT')).toBe(2);
    expect(loads).toBe(2);
    // The bound: a snapshot read 5 s ago or more is not served; the request waits for current().
    now = 1000 + 5000;
    expect(svc.served(load, later)).toBeUndefined();
  });

  it("a background read that started before a local write does not overwrite the write's values", async () => {
    let now = 0;
    let saved: Record<string, string> = { AUTH_FAILED_COUNT: '9' };
    let release: () => void = () => {};
    const slow = () => new Promise<Record<string, string>>((r) => (release = () => r({ AUTH_FAILED_COUNT: '9' })));
    const svc = new ConfigService({ env, ttlMs: 1000, staleMs: 5000, now: () => now, load: async () => saved });
    await svc.current();
    now = 2000;
    const background: Promise<unknown>[] = [];
    svc.served(slow, (work) => void background.push(work())); // reads the old values, slowly
    saved = { AUTH_FAILED_COUNT: '3' };
    svc.invalidate(); // a PATCH on this instance
    expect((await svc.current()).get('AUTH_FAILED_COUNT')).toBe(3);
    release();
    await Promise.all(background);
    expect(svc.served(slow, () => {})?.get('AUTH_FAILED_COUNT')).toBe(3);
  });

  it('restart-only variables (PROFILE) keep the value saved at start', async () => {
    let now = 0;
    let saved: Record<string, string> = { PROFILE: 'True' };
    const svc = new ConfigService({ env, ttlMs: 10, now: () => now, load: async () => saved });
    expect((await svc.current()).get('PROFILE')).toBe(true);
    saved = { PROFILE: 'False', AUTH_FAILED_COUNT: '5' };
    now = 100;
    const c = await svc.current();
    expect(c.get('PROFILE')).toBe(true);
    expect(c.get('AUTH_FAILED_COUNT')).toBe(5);
  });
});
