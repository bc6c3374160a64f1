/**
 * Development certificates for the worker ↔ bridge mutual TLS (architecture.md §1.2), made with the
 * openssl CLI: a CA, a server certificate for the bridge (127.0.0.1 and localhost, or the names given
 * with --host) and a client certificate for the worker (CN auth-worker, or --client-cn).
 * `npm run certs:dev` writes them to data/certs (never committed). What production certificates must
 * contain, and the openssl commands for them: docs/operations-bridge.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export interface Issued {
  key: string;
  cert: string;
}

/** An openssl command failed: its own words (stderr as text), not the child process's byte arrays. */
export class OpensslError extends Error {
  override name = 'OpensslError';
}

// Every path handed to openssl is absolute (the callers' folders are resolved first), so the working
// directory openssl runs in never changes what a path names.
const openssl = (args: string[], cwd: string) => {
  try {
    return execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  } catch (err) {
    const e = err as { stderr?: string; message?: string };
    const said = (e.stderr ?? '').trim().split('\n')[0] || e.message || String(err);
    throw new OpensslError(`openssl ${args[0]} failed: ${said}`);
  }
};

function newKey(dir: string, name: string): string {
  const path = join(dir, `${name}.key`);
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', path], dir);
  return path;
}

/** A self-signed CA valid for `days`. */
export function makeCa(folder: string, name: string, days = 825): Issued {
  const dir = resolve(folder);
  mkdirSync(dir, { recursive: true });
  const key = newKey(dir, name);
  const cert = join(dir, `${name}.pem`);
  openssl(
    [
      'req',
      '-x509',
      '-new',
      '-key',
      key,
      '-sha256',
      '-days',
      String(days),
      '-subj',
      `/CN=${name}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
      '-out',
      cert,
    ],
    dir,
  );
  return { key, cert };
}

export interface IssueOptions {
  cn: string;
  usage: 'server' | 'client';
  /** Validity as openssl dates (YYYYMMDDHHMMSSZ); default: now for 825 days. */
  start?: string;
  end?: string;
  /** A server's names (DNS names or IP addresses); default 127.0.0.1 and localhost. */
  hosts?: readonly string[];
}

const DNS_NAME = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** The subjectAltName value of `hosts`; throws naming a host that is neither a DNS name nor an IP address. */
export function subjectAltName(hosts: readonly string[]): string {
  if (hosts.length === 0) throw new Error('a server certificate needs at least one host name');
  return hosts
    .map((h) => {
      if (isIP(h)) return `IP:${h}`;
      if (DNS_NAME.test(h)) return `DNS:${h}`;
      throw new Error(`--host ${JSON.stringify(h)} is neither a DNS name nor an IP address`);
    })
    .join(',');
}

/** A certificate for `o.cn` signed by `ca`; servers get `o.hosts` (default 127.0.0.1 and localhost) as names. */
export function issueCert(folder: string, ca: Issued, name: string, o: IssueOptions): Issued {
  const dir = resolve(folder);
  mkdirSync(dir, { recursive: true });
  const san = o.usage === 'server' ? subjectAltName(o.hosts ?? ['127.0.0.1', 'localhost']) : '';
  const key = newKey(dir, name);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.pem`);
  openssl(['req', '-new', '-key', key, '-subj', `/CN=${o.cn}`, '-out', csr], dir);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(
    ext,
    o.usage === 'server'
      ? 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n' +
          `subjectAltName=${san}\n`
      : 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n',
  );
  if (o.start || o.end) {
    // `openssl ca` is the openssl command that takes explicit validity dates (e.g. an expired certificate).
    const db = join(dir, `${name}.db`);
    mkdirSync(db, { recursive: true });
    writeFileSync(join(db, 'index.txt'), '');
    writeFileSync(
      join(db, 'ca.cnf'),
      `[ca]\ndefault_ca=dev\n[dev]\ndatabase=${join(db, 'index.txt')}\nnew_certs_dir=${db}\n` +
        `serial=${join(db, 'serial')}\ndefault_md=sha256\npolicy=any\ncopy_extensions=none\nunique_subject=no\n` +
        `[any]\ncommonName=supplied\n`,
    );
    writeFileSync(join(db, 'serial'), '1000\n');
    openssl(
      [
        'ca',
        '-batch',
        '-config',
        join(db, 'ca.cnf'),
        '-cert',
        ca.cert,
        '-keyfile',
        ca.key,
        '-in',
        csr,
        '-out',
        cert,
        '-startdate',
        o.start ?? '20240101000000Z',
        '-enddate',
        o.end ?? '20240102000000Z',
        '-extfile',
        ext,
        '-notext',
      ],
      dir,
    );
  } else {
    openssl(
      [
        'x509',
        '-req',
        '-in',
        csr,
        '-CA',
        ca.cert,
        '-CAkey',
        ca.key,
        '-CAcreateserial',
        '-days',
        '825',
        '-sha256',
        '-extfile',
        ext,
        '-out',
        cert,
      ],
      dir,
    );
  }
  return { key, cert };
}

export interface DevCertificateOptions {
  /** The bridge's host names (DNS names or IP addresses); default 127.0.0.1 and localhost. */
  hosts?: readonly string[];
  /** The worker client certificate's CN (what BRIDGE_ALLOWED_CLIENTS lists); default auth-worker. */
  clientCn?: string;
}

/** CA, bridge server and worker client certificates in `dir`. */
export function makeDevCertificates(
  dir: string,
  o: DevCertificateOptions = {},
): { ca: Issued; server: Issued; client: Issued } {
  // Checked before anything is written.
  if (o.hosts) subjectAltName(o.hosts);
  const ca = makeCa(dir, 'dev-ca');
  return {
    ca,
    server: issueCert(dir, ca, 'bridge-server', {
      cn: 'ldap-bridge',
      usage: 'server',
      ...(o.hosts ? { hosts: o.hosts } : {}),
    }),
    client: issueCert(dir, ca, 'worker-client', { cn: o.clientCn ?? 'auth-worker', usage: 'client' }),
  };
}

/** `npm run certs:dev [-- --host NAME ... --client-cn CN] [folder]`: prints what to set on each side. */
function cli(argv: string[]): void {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { host: { type: 'string', multiple: true }, 'client-cn': { type: 'string' } },
  });
  const dir = resolve(positionals.at(-1) ?? 'data/certs');
  const clientCn = values['client-cn'] ?? 'auth-worker';
  if (!/^[\w.@-]{1,64}$/.test(clientCn))
    throw new Error(`--client-cn ${JSON.stringify(clientCn)}: letters, digits and . _ @ - only (at most 64)`);
  const { ca, server, client } = makeDevCertificates(dir, {
    ...(values.host ? { hosts: values.host } : {}),
    clientCn,
  });
  const hosts = values.host ?? ['127.0.0.1', 'localhost'];
  console.log(
    [
      `certificates in ${dir} (bridge names: ${hosts.join(', ')}; worker CN: ${clientCn})`,
      'the bridge (npm run bridge):',
      `  BRIDGE_TLS_KEY=${server.key}`,
      `  BRIDGE_TLS_CERT=${server.cert}`,
      `  BRIDGE_TLS_CA=${ca.cert}`,
      `  BRIDGE_ALLOWED_CLIENTS=${clientCn}`,
      'the service on Node (AUTH_BRIDGE_URL names one of the bridge names above, e.g.):',
      `  AUTH_BRIDGE_URL=https://${hosts[0]!.includes(':') ? `[${hosts[0]}]` : hosts[0]}:8443`,
      `  AUTH_BRIDGE_TLS_CERT=${client.cert}`,
      `  AUTH_BRIDGE_TLS_KEY=${client.key}`,
      `  AUTH_BRIDGE_TLS_CA=${ca.cert}`,
      'the service on Workers: upload worker-client.pem and its key as the mtls_certificates binding BRIDGE_MTLS',
      '(docs/operations-bridge.md). Keep the .key files secret; dev-ca.key signs certificates.',
    ].join('\n'),
  );
}

// Run as a script only: the compiled Node host (dist/node/main.js) bundles this module, and there
// import.meta.url is the bundle's, the same as argv[1].
if (process.argv[1] === fileURLToPath(import.meta.url) && /dev-certs\.[jt]s$/.test(process.argv[1])) {
  try {
    cli(process.argv.slice(2));
  } catch (err) {
    console.error(`certs:dev: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
