/**
 * Messages a person can act on when a start fails: a port in use (npm start, npm run dev:edge)
 * names the variable that moves it, without a stack trace, before anything else starts; a bad
 * configuration reads as lines on a terminal and stays one JSON line in a log.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createClient } from '@libsql/client';
import { formatMessage } from '../../worker/node/console.js';
import { JOBS } from '../../worker/src/schedule/index.js';
import { eventually } from '../harness/eventually.js';
import { saysPortTaken, startNodeTestHost } from '../harness/hosts.js';

const ROOT = resolve(import.meta.dirname, '../..');
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const cleanups: (() => void)[] = [];
// Each case starts processes that load the service's code (seconds each on a loaded machine).
vi.setConfig({ testTimeout: 90_000 });
afterAll(() => {
  for (const c of cleanups) c();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'auth-start-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs a command (argv) in `cwd` and collects its output. */
function run(argv: string[], env: Record<string, string>, cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((res) => {
    const childEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...env };
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (out += d));
    const t = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => {
      clearTimeout(t);
      res({ code, out });
    });
  });
}

/** A port taken by another listener (as by a first `npm start`), on every interface. */
async function busyPort(host?: string): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((ok) => server.listen(0, host, ok));
  cleanups.push(() => server.close());
  return (server.address() as { port: number }).port;
}

const node = (script: string) => [process.execPath, '--import', TSX, join(ROOT, script)];

describe('a port in use', () => {
  it('npm start: names AUTH_BIND_PORT and what to do, before starting the development bridge', async () => {
    const port = await busyPort();
    const cwd = tempDir();
    const env = { AUTH_BIND_PORT: String(port), LIBSQL_URL: `file:${join(cwd, 'a.db')}` };
    const { code, out } = await run(node('worker/node/main.ts'), env, cwd);
    expect(code).toBe(1);
    expect(out).toContain(`cannot start: port ${port} is already in use`);
    expect(out).toContain('set AUTH_BIND_PORT to a free port');
    expect(out).not.toContain('EADDRINUSE');
    // The HTTP suites' hosts start again on other ports when they read this (test/harness/hosts.ts).
    expect(saysPortTaken(out)).toBe(true);
    expect(out).not.toMatch(/\n\s+at /);
    // Checked first: no development bridge (nor its certificates) was started.
    expect(out).not.toContain('development bridge');
    expect(existsSync(join(cwd, 'data/certs'))).toBe(false);
  });

  it('npm run dev:edge: names DEV_EDGE_LIBSQL_PORT or DEV_EDGE_PORT, plainly (no stack trace)', async () => {
    const cwd = tempDir();
    const libsql = await busyPort('127.0.0.1');
    const devEdge = (libsqlPort: number, edgePort: number) =>
      run(node('scripts/dev-edge.ts'), { DEV_EDGE_LIBSQL_PORT: `${libsqlPort}`, DEV_EDGE_PORT: `${edgePort}` }, cwd);
    const first = await devEdge(libsql, 0);
    expect(first.code).toBe(1);
    // DEV_EDGE_PORT 0 is not a port one can open in a browser: refused first, plainly.
    expect(first.out).toBe('dev:edge cannot start: DEV_EDGE_PORT must be a port number (1..65535), received "0"\n');

    const edge = await busyPort('127.0.0.1');
    const second = await devEdge(libsql, edge);
    expect(second.code).toBe(1);
    const said = `port ${libsql} is already in use, so the libSQL dev server cannot listen there`;
    expect(second.out).toContain(`dev:edge cannot start: ${said} (DEV_EDGE_LIBSQL_PORT)`);
    expect(second.out).not.toMatch(/\n\s+at /);

    const free = await busyPort('127.0.0.1');
    cleanups.pop()!(); // closes it: a free port for the libSQL dev server
    const third = await devEdge(free, edge);
    expect(third.code).toBe(1);
    expect(third.out).toContain(`port ${edge} is already in use, so wrangler dev cannot listen there (DEV_EDGE_PORT)`);
    expect(third.out.trim().split('\n')).toHaveLength(1);
    // Nothing was started: no database was made.
    expect(existsSync(join(cwd, 'data'))).toBe(false);
  });
});

describe('the bootstrap variables', () => {
  it('once an administrator exists, the start says the variables are ignored (not a silent no-op)', async () => {
    const url = `file:${join(tempDir(), 'a.db')}`;
    const first = await startNodeTestHost({ LIBSQL_URL: url });
    await expect.poll(() => first.output()).toContain('created the first administrator \\"root-admin\\"');
    await first.stop();
    const second = await startNodeTestHost({ LIBSQL_URL: url, AUTH_BOOTSTRAP_ADMIN_PASSWORD: 'Chang3d@pass' });
    const said = 'an administrator exists, so AUTH_BOOTSTRAP_ADMIN_LOGIN and AUTH_BOOTSTRAP_ADMIN_PASSWORD are ignored';
    await expect.poll(() => second.output()).toContain(said);
    await second.stop();
    expect(second.output()).toContain('npm run ops -- reset-password <login>');
    expect(second.output().split(said)).toHaveLength(2);
  });

  it("while no administrator exists, the start says how to get one, the first-run page's URL first", async () => {
    const host = await startNodeTestHost({ AUTH_BOOTSTRAP_ADMIN_LOGIN: '', AUTH_BOOTSTRAP_ADMIN_PASSWORD: '' });
    const said = `no administrator exists yet: open ${host.url}/first-run in a browser`;
    await expect.poll(() => host.output()).toContain(said);
    await host.stop();
    expect(host.output()).toContain('npm run ops -- create-admin <login>');
  });
});

describe('npm run dev:edge without an administrator', () => {
  it('says how to get one: the first-run page, .dev.vars, or npm run ops', async () => {
    const cwd = tempDir();
    const [libsql, edge] = [await busyPort('127.0.0.1'), await busyPort('127.0.0.1')];
    cleanups.pop()!();
    cleanups.pop()!(); // both closed: two free ports
    // In a scratch directory wrangler itself is not found, so the script stops after its hint.
    const env = { DEV_EDGE_LIBSQL_PORT: `${libsql}`, DEV_EDGE_PORT: `${edge}`, AUTH_BRIDGE_EMBEDDED: 'False' };
    const { out } = await run(node('scripts/dev-edge.ts'), env, cwd);
    expect(out).toContain(`no administrator yet: open http://127.0.0.1:${edge}/api/auth/first-run in a browser`);
    expect(out).toContain('AUTH_BOOTSTRAP_ADMIN_PASSWORD in .dev.vars');
    expect(out).toContain(`LIBSQL_URL=http://127.0.0.1:${libsql} npm run ops -- create-admin <login>`);

    const vars = "AUTH_BOOTSTRAP_ADMIN_LOGIN=admin\nAUTH_BOOTSTRAP_ADMIN_PASSWORD='Chang3@me'\n";
    writeFileSync(join(cwd, '.dev.vars'), vars);
    const withVars = await run(node('scripts/dev-edge.ts'), env, cwd);
    expect(withVars.out).toContain('the worker creates "admin" (AUTH_BOOTSTRAP_ADMIN_* in .dev.vars)');
  });
});

describe('configuration errors', () => {
  it('on a terminal: readable lines, one per bad variable (no JSON, no \\n escapes)', async () => {
    const cwd = tempDir();
    // `script` runs the host on a pseudo-terminal, as a person's shell does.
    const command = node('worker/node/main.ts')
      .map((a) => `'${a}'`)
      .join(' ');
    const env = { AUTH_BIND_PORT: 'http', AUTH_FAILED_COUNT: '0', AUTH_BRIDGE_EMBEDDED: 'False' };
    const { out } = await run(['script', '-qec', command, '/dev/null'], env, cwd);
    const lines = out.replace(/\r/g, '').trim().split('\n');
    expect(lines[0]).toBe('error: invalid configuration:');
    expect(lines).toContain('  AUTH_BIND_PORT (BIND_PORT): expected integer in 0..65535, received "http"');
    expect(lines).toContain('  AUTH_FAILED_COUNT (AUTH_FAILED_COUNT): expected integer in 1..100, received "0"');
    expect(out).not.toContain('{"time"');
  });

  it('not on a terminal: one JSON line (the log format)', () => {
    const line = formatMessage('CRITICAL', 'invalid configuration:\nA: bad', false, new Date(0));
    const expected = { time: '1970-01-01T00:00:00.000Z', level: 'CRITICAL', msg: 'invalid configuration:\nA: bad' };
    expect(JSON.parse(line)).toEqual(expected);
    expect(formatMessage('WARNING', 'careful', true)).toBe('warning: careful\n');
  });
});

/**
 * Once every job of the scheduler's first round at start has run (its lease row counts a run), any line
 * it logs has been written (each job logs before it gives its lease back).
 */
async function firstRoundRan(url: string): Promise<void> {
  const db = createClient({ url });
  try {
    await eventually(
      async () => {
        const rs = await db.execute('select count(*) as n from job_leases where run_count > 0');
        return Number(rs.rows[0]!.n) >= JOBS.length;
      },
      { timeoutMs: 30_000, what: "the scheduler's first round" },
    );
  } finally {
    db.close();
  }
}

describe('npm start on a terminal, and not', () => {
  it('a terminal: a short human banner (addresses, first run, mail, audit log), no JSON and no job lines', async () => {
    const cwd = tempDir();
    const port = await busyPort('127.0.0.1');
    cleanups.pop()!(); // closed: a free port
    const command = node('worker/node/main.ts')
      .map((a) => `'${a}'`)
      .join(' ');
    const env = {
      AUTH_BIND_HOST: '127.0.0.1',
      AUTH_BIND_PORT: String(port),
      LIBSQL_URL: `file:${join(cwd, 'a.db')}`,
      AUTH_BRIDGE_EMBEDDED: 'False',
      SESSION_SECRET_KEY: 'test-session-secret-key-0123456789abcdef',
    };
    // `script` runs the host on a pseudo-terminal, as a person's shell does; stopped once it served a while.
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    try {
      await expect.poll(() => out, { timeout: 60_000, interval: 200 }).toContain('audit log:');
      // The scheduler's first round ran at start: its lines are DEBUG now, below the default INFO.
      await firstRoundRan(env.LIBSQL_URL);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('close', r));
    }
    const text = out.replace(/\r/g, '');
    const url = `http://127.0.0.1:${port}/api/auth`;
    expect(text).toMatch(/^AUTH is running\r?$/m); // PROJECT_NAME's default
    expect(text).toMatch(new RegExp(`service: +${url}\n`));
    expect(text).toMatch(new RegExp(`console: +${url}/ui/\n`));
    expect(text).toMatch(/API docs: +http:\/\/127\.0\.0\.1:\d+\/api\/auth\/docs/);
    expect(text).toMatch(
      new RegExp(`admin: +none yet: open ${url}/first-run in a browser on this machine, one-time code \\S+`),
    );
    // No mail server: the development outbox beside the database, named (docs/mail.md).
    expect(text).toMatch(/mail: +written as \.eml files to \S+ \(development outbox/);
    expect(text).toContain(`to ${join(cwd, 'mail-outbox')} (development outbox`);
    expect(text).toMatch(/audit log: +kept in this service's database for 30 days/);
    expect(text).not.toContain('{"time"');
    expect(text).not.toContain('job ran');
  });

  it('not a terminal: JSON lines, with where the audit log goes said once at INFO and no job lines', async () => {
    const host = await startNodeTestHost({ AUTH_BOOTSTRAP_ADMIN_LOGIN: '', AUTH_BOOTSTRAP_ADMIN_PASSWORD: '' });
    await expect.poll(() => host.output()).toContain('"msg":"audit log: kept in this service');
    // No job line may come in the scheduler's first round.
    await firstRoundRan(host.libsqlUrl);
    await host.stop();
    const lines = host
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: string; msg: string });
    expect(lines.filter((l) => l.msg.startsWith('audit log:'))).toEqual([expect.objectContaining({ level: 'INFO' })]);
    expect(lines.some((l) => l.msg === 'job ran')).toBe(false);
    expect(lines.some((l) => l.level === 'ERROR' || l.level === 'CRITICAL')).toBe(false);
  });
});
