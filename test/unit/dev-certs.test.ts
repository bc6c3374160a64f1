/**
 * `npm run certs:dev` as an operator runs it from a fresh checkout (a relative output folder), and the
 * script with the bridge's host names and the worker's CN (docs/operations-bridge.md §2): the
 * certificates are checked with openssl itself.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
let clone: string;

const openssl = (...args: string[]) => execFileSync('openssl', args, { encoding: 'utf8' });
const x509 = (file: string) =>
  openssl('x509', '-in', file, '-noout', '-subject', '-ext', 'subjectAltName,extendedKeyUsage');
const run = (cmd: string, args: string[]) =>
  spawnSync(cmd, args, { cwd: clone, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: process.env.HOME } });

beforeAll(() => {
  // What the script needs of a checkout: package.json, scripts/ and the installed packages.
  clone = mkdtempSync(join(tmpdir(), 'certs-clone-'));
  copyFileSync(join(ROOT, 'package.json'), join(clone, 'package.json'));
  mkdirSync(join(clone, 'scripts'));
  copyFileSync(join(ROOT, 'scripts', 'dev-certs.ts'), join(clone, 'scripts', 'dev-certs.ts'));
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
});

afterAll(() => rmSync(clone, { recursive: true, force: true }));

describe('certs:dev', () => {
  it('npm run certs:dev writes a CA, a bridge server and a worker client certificate to data/certs', () => {
    const r = run('npm', ['run', '--silent', 'certs:dev']);
    expect(r.status, r.stderr + r.stdout).toBe(0);
    const dir = join(clone, 'data', 'certs');
    for (const f of ['dev-ca.pem', 'dev-ca.key', 'bridge-server.pem', 'bridge-server.key', 'worker-client.pem'])
      expect(existsSync(join(dir, f)), f).toBe(true);
    const ca = join(dir, 'dev-ca.pem');
    expect(openssl('verify', '-CAfile', ca, join(dir, 'bridge-server.pem'), join(dir, 'worker-client.pem'))).toMatch(
      /bridge-server.pem: OK[\s\S]*worker-client.pem: OK/,
    );
    const server = x509(join(dir, 'bridge-server.pem'));
    expect(server).toMatch(/IP Address:127\.0\.0\.1/);
    expect(server).toMatch(/DNS:localhost/);
    expect(server).toMatch(/TLS Web Server Authentication/);
    const client = x509(join(dir, 'worker-client.pem'));
    expect(client).toMatch(/CN\s*=\s*auth-worker/);
    expect(client).toMatch(/TLS Web Client Authentication/);
  });

  it('--host names the bridge host (DNS or IP, repeatable) and --client-cn sets the worker CN', () => {
    const r = run(process.execPath, [
      '--import',
      'tsx',
      'scripts/dev-certs.ts',
      '--host',
      'bridge.example.internal',
      '--host',
      '10.1.2.3',
      '--client-cn',
      'auth-worker-prod',
      'out/certs',
    ]);
    expect(r.status, r.stderr + r.stdout).toBe(0);
    const dir = join(clone, 'out', 'certs');
    const server = x509(join(dir, 'bridge-server.pem'));
    expect(server).toMatch(/DNS:bridge\.example\.internal/);
    expect(server).toMatch(/IP Address:10\.1\.2\.3/);
    expect(server).not.toMatch(/127\.0\.0\.1/);
    const client = x509(join(dir, 'worker-client.pem'));
    expect(client).toMatch(/CN\s*=\s*auth-worker-prod/);
    expect(client).toMatch(/TLS Web Client Authentication/);
    // It says what to set, not a dump of file paths.
    expect(r.stdout).toContain('BRIDGE_ALLOWED_CLIENTS=auth-worker-prod');
  });

  it('a bad host name or an unwritable folder stops it with one line of text, no stack or byte arrays', () => {
    const bad = run(process.execPath, ['--import', 'tsx', 'scripts/dev-certs.ts', '--host', 'bad host!', 'x']);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('"bad host!"');
    const blocked = run(process.execPath, ['--import', 'tsx', 'scripts/dev-certs.ts', 'package.json/certs']);
    expect(blocked.status).not.toBe(0);
    for (const r of [bad, blocked]) {
      expect(r.stderr).not.toMatch(/\b\d{2,3},\d{2,3},\d{2,3}\b|<Buffer|\n\s+at /);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});
