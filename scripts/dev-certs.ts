/**
 * Development certificates for the worker ↔ bridge mutual TLS (architecture.md §1.2), made with the
 * openssl CLI: a CA, a server certificate for the bridge (127.0.0.1, localhost) and a client
 * certificate for the worker. `npm run certs:dev` writes them to data/certs (never committed).
 * Production certificates come from ops (files or secrets); these are for development and tests.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Issued {
  key: string;
  cert: string;
}

const openssl = (args: string[], cwd: string) =>
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });

function newKey(dir: string, name: string): string {
  const path = join(dir, `${name}.key`);
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', path], dir);
  return path;
}

/** A self-signed CA valid for `days`. */
export function makeCa(dir: string, name: string, days = 825): Issued {
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
}

/** A certificate for `o.cn` signed by `ca`; servers get 127.0.0.1 and localhost as names. */
export function issueCert(dir: string, ca: Issued, name: string, o: IssueOptions): Issued {
  const key = newKey(dir, name);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.pem`);
  openssl(['req', '-new', '-key', key, '-subj', `/CN=${o.cn}`, '-out', csr], dir);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(
    ext,
    o.usage === 'server'
      ? 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n' +
          'subjectAltName=IP:127.0.0.1,DNS:localhost\n'
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

/** CA, bridge server and worker client certificates in `dir`. */
export function makeDevCertificates(dir: string): { ca: Issued; server: Issued; client: Issued } {
  const ca = makeCa(dir, 'dev-ca');
  return {
    ca,
    server: issueCert(dir, ca, 'bridge-server', { cn: 'ldap-bridge', usage: 'server' }),
    client: issueCert(dir, ca, 'worker-client', { cn: 'auth-worker', usage: 'client' }),
  };
}

// Run as a script only: the compiled Node host (dist/node/main.js) bundles this module, and there
// import.meta.url is the bundle's, the same as argv[1].
if (process.argv[1] === fileURLToPath(import.meta.url) && /dev-certs\.[jt]s$/.test(process.argv[1])) {
  const dir = process.argv[2] ?? 'data/certs';
  const made = makeDevCertificates(dir);
  console.log(`development certificates in ${dir}:`, JSON.stringify(made, null, 2));
}
