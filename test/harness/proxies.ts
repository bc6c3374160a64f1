/**
 * Real reverse proxies in front of a small upstream, for the gate's suites (docs/integration.md): nginx
 * (auth_request) and Caddy (forward_auth) from Debian's packages, started on loopback ports with the
 * configurations docs/integration/ shows, their example addresses replaced by the test's own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, isListening } from './hosts.js';

const DOCS = resolve(import.meta.dirname, '../../docs/integration');

/** A documented proxy configuration, as the doc shows it. */
export function documentedConfig(name: 'nginx.conf' | 'Caddyfile'): string {
  return readFileSync(join(DOCS, name), 'utf8');
}

/** `text` with each example string replaced; throws when one is not in it (the doc and the test drifted). */
function replaced(text: string, replacements: [string, string][]): string {
  let out = text;
  for (const [from, to] of replacements) {
    if (!out.includes(from)) throw new Error(`the documented configuration no longer contains ${from}`);
    out = out.split(from).join(to);
  }
  return out;
}

export interface Upstream {
  /** host:port */
  hostPort: string;
  /** The requests it received (method, path and the headers it got). */
  seen: { method: string; url: string; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

/** An upstream that answers every request with the identity headers it received (JSON, or a small page). */
export async function startEchoUpstream(): Promise<Upstream> {
  const seen: Upstream['seen'] = [];
  const server: Server = createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers });
    const identity = {
      path: req.url,
      user: req.headers['remote-user'] ?? null,
      name: req.headers['remote-name'] ?? null,
      email: req.headers['remote-email'] ?? null,
      groups: req.headers['remote-groups'] ?? null,
      role: req.headers['remote-role'] ?? null,
    };
    if ((req.headers.accept ?? '').includes('text/html')) {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>protected</title><h1 id="who">${String(identity.user)}</h1>`);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(identity));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    hostPort: `127.0.0.1:${port}`,
    seen,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

export interface RunningProxy {
  url: string;
  port: number;
  /** The configuration it runs (the documented one, addresses replaced). */
  config: string;
  stop(): Promise<void>;
}

async function waitListening(port: number, child: ChildProcess, output: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`the proxy exited (${child.exitCode}): ${output()}`);
    if (await isListening(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the proxy did not listen on ${port}: ${output()}`);
}

function stopProcess(child: ChildProcess, dir: string): Promise<void> {
  return new Promise((res) => {
    const done = () => {
      rmSync(dir, { recursive: true, force: true });
      res();
    };
    if (child.exitCode !== null || child.signalCode !== null) return done();
    const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(t);
      done();
    });
    child.kill('SIGTERM');
  });
}

function run(
  command: string,
  args: string[],
  dir: string,
  port: number,
): Promise<ChildProcess & { out: () => string }> {
  const child = spawn(command, args, {
    cwd: dir,
    env: { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  const out = () => text.slice(-2000);
  return waitListening(port, child, out).then(
    () => Object.assign(child, { out }),
    async (err) => {
      child.kill('SIGKILL');
      throw err;
    },
  );
}

/** What the benchmark adds to the suites' nginx (scripts/bench/forward-auth-nginx.ts). */
export interface NginxOptions {
  /** More `server` blocks, in the same nginx (e.g. the upstream itself, or the service without the gate). */
  servers?: (port: number) => string;
  /** The core nginx and its worker run on (`taskset -c`), when given. */
  core?: number;
}

/**
 * nginx with docs/integration/nginx.conf in front of `upstream`, asking the gate at `authBase` (the
 * service's base URL, ROOT_PATH included).
 */
export async function startNginx(authBase: string, upstream: Upstream, o: NginxOptions = {}): Promise<RunningProxy> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'gate-nginx-'));
  // The workers may run as nobody (the suites may run as root): they write their temporary files here.
  chmodSync(dir, 0o777);
  const auth = new URL(authBase);
  // The service here speaks plain HTTP: the upstream's scheme and address are the test's (the
  // proxy_ssl_* lines then do nothing).
  const site = replaced(documentedConfig('nginx.conf'), [
    ['listen 80;', `listen 127.0.0.1:${port};`],
    ['server auth.example.com:443;', `server ${auth.host};`],
    ['https://auth_service/api/auth', `${auth.protocol}//auth_service${auth.pathname}`],
    ['proxy_set_header Host auth.example.com;', `proxy_set_header Host ${auth.host};`],
    ['http://127.0.0.1:3000', `http://${upstream.hostPort}`],
  ]);
  writeFileSync(join(dir, 'site.conf'), o.servers ? `${site}\n${o.servers(port)}` : site);
  for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, d), { mode: 0o777 });
  const main = [
    'daemon off;',
    'worker_processes 1;',
    `pid ${dir}/nginx.pid;`,
    `error_log ${dir}/error.log warn;`,
    'events { worker_connections 256; }',
    'http {',
    '  access_log off;',
    ...['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
      (d) => `  ${d === 'body' ? 'client_body' : d}_temp_path ${dir}/${d};`,
    ),
    `  include ${dir}/site.conf;`,
    '}',
  ].join('\n');
  writeFileSync(join(dir, 'nginx.conf'), main);
  const args = ['-p', dir, '-c', join(dir, 'nginx.conf')];
  const child = await (o.core === undefined
    ? run('nginx', args, dir, port)
    : run('taskset', ['-c', String(o.core), 'nginx', ...args], dir, port));
  return { url: `http://127.0.0.1:${port}`, port, config: site, stop: () => stopProcess(child, dir) };
}

/** Caddy with docs/integration/Caddyfile in front of `upstream`, asking the gate at `authBase`. */
export async function startCaddy(authBase: string, upstream: Upstream): Promise<RunningProxy> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'gate-caddy-'));
  const auth = new URL(authBase);
  const site = replaced(documentedConfig('Caddyfile'), [
    ['app.example.com {', `http://127.0.0.1:${port} {`],
    ['https://auth.example.com', auth.origin],
    ['uri /api/auth/', `uri ${auth.pathname}/`],
    ['127.0.0.1:3000', upstream.hostPort],
  ]);
  // The test's own global options: no admin endpoint, no certificates on loopback.
  writeFileSync(join(dir, 'Caddyfile'), `{\n\tadmin off\n\tauto_https off\n}\n\n${site}`);
  const child = await run('caddy', ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], dir, port);
  return { url: `http://127.0.0.1:${port}`, port, config: site, stop: () => stopProcess(child, dir) };
}
