/**
 * The password blocklist (docs/security.md, "Password blocklist") on both hosts: the bundled common passwords, the
 * login and the service name refused on every API path that sets a password (422 PASSWORD_POLICY naming the
 * rule, nothing changed), and the operator's own list compiled with `npm run blocklist:compile` and loaded
 * by a host started with AUTH_PASSWORD_BLOCKLIST_FILE (the edge reads it as a static asset of STATIC_DIR).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, basic, call, callJson, createUser, uniqueLogin, type Call } from '../harness/client.js';
import { startTestHost, type RunningHost } from '../harness/hosts.js';
import { parseExposition, sampleValue } from '../harness/prometheus.js';

const ROOT = resolve(import.meta.dirname, '../..');
const PASSWORD = 'Str0ng$pass';
const admin = basic(ADMIN.login, ADMIN.password);
// Entries of the bundled list (fxa-common-password-list) that pass every composition rule of the default
// policy once a letter is upper-case: the list is lower-case and matched without regard to case.
const COMMON = ['P@ssw0rd', 'Pa$$w0rd', 'Tr@nsf3r', 'G00dpa$$w0rd'];

type Refusal = { code: string; detail: string; violations: { rule: string; message: string }[] };

const refusedRules = (r: { status: number; body: Refusal }) => {
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(r.body.code).toBe('PASSWORD_POLICY');
  return r.body.violations.map((v) => v.rule);
};
const create = (login: string, password: string, o: Call = {}) =>
  callJson<Refusal>('/v4/users', { method: 'POST', auth: admin, json: { login, password }, ...o });
const logsIn = async (login: string, password: string, o: Call = {}) =>
  (await call('/v3/login_without_session', { method: 'POST', auth: basic(login, password), ...o })).status;

describe('the bundled list of common passwords', () => {
  it('an administrator cannot create an account with one (any case); nothing is created', async () => {
    for (const password of [...COMMON, 'pA$$W0RD']) {
      const login = uniqueLogin();
      const r = await create(login, password);
      expect(refusedRules(r), password).toEqual(['common_password']);
      expect(r.body.detail).toBe('not one of the most common passwords');
      expect(JSON.stringify(r.body)).not.toContain(password);
      expect(await logsIn(login, password)).toBe(401);
    }
  });

  it('own change: refused, the old password still works', async () => {
    const login = uniqueLogin();
    await createUser(login, PASSWORD);
    const r = await callJson<Refusal>('/v4/users/me/password', {
      method: 'PUT',
      auth: basic(login, PASSWORD),
      json: { oldPassword: PASSWORD, newPassword: 'Tr@nsf3r' },
    });
    expect(refusedRules(r)).toEqual(['common_password']);
    expect(await logsIn(login, PASSWORD)).toBe(200);
    expect(await logsIn(login, 'Tr@nsf3r')).toBe(401);
  });

  it("an administrator's reset: refused, the password unchanged", async () => {
    const login = uniqueLogin();
    const id = await createUser(login, PASSWORD);
    const r = await callJson<Refusal>(`/v4/users/${id}/password`, {
      method: 'POST',
      auth: admin,
      json: { password: 'G00dpa$$w0rd' },
    });
    expect(refusedRules(r)).toEqual(['common_password']);
    expect(await logsIn(login, PASSWORD)).toBe(200);
  });

  it('a password that only looks like one passes', async () => {
    const login = uniqueLogin();
    expect((await create(login, 'P@ssw0rd#7Kq')).status).toBe(201);
    expect(await logsIn(login, 'P@ssw0rd#7Kq')).toBe(200);
  });
});

describe('the login and the service name', () => {
  it('a password containing the login (any case) is refused as contains_login', async () => {
    const login = uniqueLogin('jd');
    const password = `Xy#1${login.toUpperCase()}`;
    expect(refusedRules(await create(login, password))).toEqual(['contains_login']);
    await createUser(login, PASSWORD);
    const r = await callJson<Refusal>('/v4/users/me/password', {
      method: 'PUT',
      auth: basic(login, PASSWORD),
      json: { oldPassword: PASSWORD, newPassword: `Xy#1${login}` },
    });
    expect(refusedRules(r)).toEqual(['contains_login']);
    expect(r.body.violations[0]?.message).toBe('not containing the login');
  });

  it(
    'a password containing AUTH_PROJECT_NAME ("AUTH" by default, any case) is refused as ' + 'contains_service_name',
    async () => {
      const r = await create(uniqueLogin(), 'My#auth2024');
      expect(refusedRules(r)).toEqual(['contains_service_name']);
    },
  );

  it('the refusal lists the blocklist rules with the composition rules', async () => {
    const r = await create(uniqueLogin(), 'auth$');
    expect(refusedRules(r)).toEqual(['min_length', 'digit_min', 'upper_min', 'contains_service_name']);
  });
});

describe("the operator's list (AUTH_PASSWORD_BLOCKLIST_FILE)", () => {
  const kind = inject('hostKind');
  const TOKEN = 'metrics-scrape-token-0123456789abcdef-XYZ';
  // In STATIC_DIR, where the edge reads it as an asset; the Node host reads the same path from the disk.
  const name = `test-blocklist-${process.pid}-${Date.now().toString(36)}.pwbf`;
  const filterPath = join(ROOT, 'static', name);
  const dir = mkdtempSync(join(tmpdir(), 'auth-blocklist-'));
  let host: RunningHost;

  beforeAll(async () => {
    // The operator's file: one password per line, any case, a blank line and a CRLF line end.
    const list = join(dir, 'list.txt');
    writeFileSync(list, 'Zebra$Lamp42\r\n\ncorp#Winter2031\nkeycloak-style-entry\n');
    const compiled = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'scripts/blocklist-compile.ts', list, filterPath, '--fpr', '0.0001'],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(compiled.status, compiled.stderr).toBe(0);
    expect(compiled.stdout).toMatch(/3 lines, \d+ bytes/);
    host = await startTestHost(kind, {
      AUTH_PASSWORD_BLOCKLIST_FILE: `static/${name}`,
      AUTH_METRICS_TOKEN: TOKEN,
    });
  }, 180_000);

  afterAll(async () => {
    await host?.stop();
    rmSync(filterPath, { force: true });
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses the operator's passwords (any case) besides the bundled ones, and counts the refusals", async () => {
    const scrape = async () =>
      parseExposition(await (await call('/metrics', { base: host.url, auth: `Bearer ${TOKEN}` })).text());
    const before = sampleValue(await scrape(), 'auth_password_blocklist_refusals_total', { rule: 'common_password' });
    for (const password of ['zebra$LAMP42', 'Corp#Winter2031', 'P@ssw0rd']) {
      const r = await create(uniqueLogin(), password, { base: host.url });
      expect(refusedRules(r), password).toEqual(['common_password']);
    }
    const after = sampleValue(await scrape(), 'auth_password_blocklist_refusals_total', { rule: 'common_password' });
    expect((after ?? 0) - (before ?? 0)).toBe(3);
    // The shared host has no operator list: the same password is fine there.
    const login = uniqueLogin();
    expect((await create(login, 'Zebra$Lamp42')).status).toBe(201);
  });

  it('the filter in STATIC_DIR is never served as a static file', async () => {
    const res = await call(`/docs/${name}`, { base: host.url });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
  });
});
