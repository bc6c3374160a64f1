/** The Node host as `npm start` runs it: bad environment, .env, DB_SCHEMA stamp, clean stop, WORKERS. */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startNodeTestHost } from '../harness/hosts.js';

const ROOT = resolve(import.meta.dirname, '../..');
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function run(env: Record<string, string>, cwd = ROOT): Promise<{ code: number | null; out: string }> {
  return new Promise((res) => {
    const child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'worker/node/main.ts')], {
      cwd,
      env: { PATH: process.env.PATH, AUTH_BRIDGE_EMBEDDED: 'False', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (out += d));
    const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (code) => {
      clearTimeout(t);
      res({ code, out });
    });
  });
}

describe('Node host start', () => {
  it('a bad environment stops the start with exit code 1, naming each bad variable', async () => {
    const { code, out } = await run({ AUTH_BIND_PORT: 'http', AUTH_FAILED_COUNT: '0', SESSION_SECRET_KEY: 'tooshort' });
    expect(code).toBe(1);
    expect(out).toContain('AUTH_BIND_PORT (BIND_PORT): expected integer in 0..65535, received \\"http\\"');
    expect(out).toContain('AUTH_FAILED_COUNT (AUTH_FAILED_COUNT): expected integer in 1..100, received \\"0\\"');
    expect(out).toContain('SESSION_SECRET_KEY');
    expect(out).not.toContain('tooshort');
  });

  it('reads .env from the working directory; the real environment wins', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'auth-dotenv-'));
    dirs.push(dir);
    writeFileSync(join(dir, '.env'), 'AUTH_WORKERS=many\nAUTH_DEBUG=True\n');
    const { code, out } = await run({ AUTH_DEBUG: 'nope' }, dir);
    expect(code).toBe(1);
    expect(out).toContain('AUTH_WORKERS (WORKERS)');
    expect(out).toContain('received \\"nope\\"');
    expect(out).not.toContain('received \\"True\\"');
  });

  it('refuses a database stamped with another DB_SCHEMA', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'auth-stamp-'));
    dirs.push(dir);
    const LIBSQL_URL = `file:${join(dir, 'a.db')}`;
    const first = await startNodeTestHost({ LIBSQL_URL, AUTH_DB_SCHEMA: 'tenant_a' });
    await first.stop();
    const { code, out } = await run({
      LIBSQL_URL,
      AUTH_DB_SCHEMA: 'tenant_b',
      AUTH_BIND_PORT: String(await freePort()),
    });
    expect(code).toBe(1);
    expect(out).toContain('stamped with DB_SCHEMA \\"tenant_a\\"');
  });

  it('logs are JSON lines without credentials, cookies or tokens, honouring LOG_LEVEL', async () => {
    const host = await startNodeTestHost({ AUTH_LOG_LEVEL: 'DEBUG', AUTH_ACCESS_LOG_LEVEL: 'INFO' });
    const password = 'Adm1n$ecret';
    const auth = `Basic ${btoa(`root-admin:${password}`)}`;
    const tokenRes = await fetch(`${host.url}/v4/users/me/tokens`, {
      method: 'POST',
      headers: { Authorization: auth, 'Content-Type': 'application/json', Cookie: 'auth_session=cookie-value-123' },
      body: '{"name":"log-test"}',
    });
    const { token } = (await tokenRes.json()) as { token: string };
    await fetch(`${host.url}/v3/api_token_login?access_token=${token}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
    });
    await fetch(`${host.url}/v3/login_without_session`, {
      method: 'POST',
      headers: { Authorization: `Basic ${btoa('root-admin:Wr0ng$guess')}` },
    });
    await host.stop();
    const lines = host.output().trim().split('\n');
    const json = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(json.filter((l) => l.logger === 'access').length).toBeGreaterThanOrEqual(3);
    for (const secret of [password, 'Wr0ng$guess', token, 'cookie-value-123', auth, 'Bearer '])
      expect(host.output()).not.toContain(secret);
    expect(host.output()).not.toMatch(/authorization/i);
  });

  it('a setting saved through one instance applies on another within seconds, without a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'auth-two-'));
    dirs.push(dir);
    const LIBSQL_URL = `file:${join(dir, 'shared.db')}`;
    const a = await startNodeTestHost({ LIBSQL_URL });
    const b = await startNodeTestHost({ LIBSQL_URL });
    try {
      const auth = `Basic ${btoa('root-admin:Adm1n$ecret')}`;
      const get = async (host: typeof a) => {
        const res = await fetch(`${host.url}/v3/settings`, { headers: { Authorization: auth } });
        const { items } = (await res.json()) as { items: { name: string; value: unknown }[] };
        return items.find((i) => i.name === 'AUTH_FAILED_COUNT')!.value;
      };
      expect(await get(b)).toBe(3);
      const res = await fetch(`${a.url}/v3/settings`, {
        method: 'PATCH',
        headers: { Authorization: auth, 'Content-Type': 'application/json' },
        body: '{"values":{"AUTH_FAILED_COUNT":7}}',
      });
      expect(res.status).toBe(200);
      await expect.poll(() => get(b), { timeout: 5000, interval: 250 }).toBe(7);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it('SIGTERM: stops accepting, exits 0 and logs the stop', async () => {
    const host = await startNodeTestHost();
    expect((await fetch(`${host.url}/health/live`)).status).toBe(200);
    const exited = new Promise<number | null>((r) => host.child.once('exit', (c) => r(c)));
    host.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(host.output()).toContain('"msg":"stopped"');
    await expect(fetch(`${host.url}/health/live`)).rejects.toThrow();
    await host.stop();
  });

  it(
    'npm start runs the development bridge over mutual TLS (certificates made at the first start); ' +
      'WORKERS=2 share it',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'auth-embedded-bridge-'));
      dirs.push(dir);
      const certs = {
        AUTH_BRIDGE_EMBEDDED: 'True',
        AUTH_BRIDGE_TLS_CERT: join(dir, 'worker-client.pem'),
        AUTH_BRIDGE_TLS_KEY: join(dir, 'worker-client.key'),
        AUTH_BRIDGE_TLS_CA: join(dir, 'dev-ca.pem'),
      };
      const host = await startNodeTestHost({ ...certs, AUTH_WORKERS: '2' });
      try {
        expect(host.output()).toMatch(/development bridge on https:\/\/127\.0\.0\.1:\d+/);
        for (let i = 0; i < 4; i++) {
          const ready = (await (
            await fetch(`${host.url}/health/ready`, { headers: { connection: 'close' } })
          ).json()) as { checks: { bridge: string } };
          expect(ready.checks.bridge).toBe('ok');
        }
        expect(readFileSync(join(dir, 'bridge-server.pem'), 'utf8')).toContain('BEGIN CERTIFICATE');
      } finally {
        await host.stop();
      }
    },
  );

  it(
    'a development bridge that cannot start (no certificates can be made) leaves the service running, ' +
      'with a warning',
    async () => {
      // The certificates' folder would be below a plain file: it cannot be made.
      const dir = mkdtempSync(join(tmpdir(), 'auth-no-bridge-'));
      dirs.push(dir);
      writeFileSync(join(dir, 'file'), '');
      const under = join(dir, 'file', 'certs');
      const host = await startNodeTestHost({
        AUTH_BRIDGE_EMBEDDED: 'True',
        AUTH_BRIDGE_TLS_CERT: join(under, 'worker-client.pem'),
        AUTH_BRIDGE_TLS_KEY: join(under, 'worker-client.key'),
        AUTH_BRIDGE_TLS_CA: join(under, 'dev-ca.pem'),
      });
      try {
        expect(host.output()).toContain('no development bridge (LDAP logins will answer 503)');
        const ready = (await (await fetch(`${host.url}/health/ready`)).json()) as { checks: { bridge: string } };
        expect(ready.checks.bridge).toBe('not-configured');
      } finally {
        await host.stop();
      }
    },
  );

  it('WORKERS=2: two processes serve one port and stop together', async () => {
    const host = await startNodeTestHost({ AUTH_WORKERS: '2' });
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${host.url}/health/live`, { headers: { connection: 'close' } });
      expect(res.status).toBe(200);
    }
    // Both workers announce themselves.
    await expect.poll(() => (host.output().match(/"msg":"serving /g) ?? []).length, { timeout: 30_000 }).toBe(2);
    const exited = new Promise<number | null>((r) => host.child.once('exit', (c) => r(c)));
    host.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await host.stop();
  });
});
