/**
 * A real OpenLDAP server for tests and the benchmark: `startSlapd()` runs /usr/sbin/slapd in the
 * foreground on loopback with a fresh test CA, plain LDAP (StartTLS available) and LDAPS, the
 * fixtures of ./slapd/fixtures.ts loaded with slapadd, and a service account that may read people
 * but not passwords. `{ activeDirectory: true }` starts an Active Directory flavour: its root DSE
 * advertises AD's capability OID (the `rootDSE` directive), users carry sAMAccountName,
 * userPrincipalName, userAccountControl and objectGUID (./slapd/ad.schema).
 *
 * Also: `startSilentServer()` (accepts TCP and never answers, for timeouts) and `closedPortUrl()`.
 * Needs the Debian packages slapd and ldap-utils (slapadd); `slapdAvailable()` tells.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LdapConnection } from '../../schema/bridge/index.js';
import { issueCert, makeCa } from '../../scripts/dev-certs.js';
import { freePort, isListening } from './hosts.js';
import {
  ADMIN_GROUP_DN,
  AUDITOR_GROUP_DN,
  BASE_DN,
  buildFixtures,
  SERVICE_DN,
  type DirectoryUser,
} from './slapd/fixtures.js';

export { ADMIN_GROUP_DN, AUDITOR_GROUP_DN, BASE_DN, SERVICE_DN, type DirectoryUser } from './slapd/fixtures.js';

const SLAPD = '/usr/sbin/slapd';
const SLAPADD = '/usr/sbin/slapadd';
const SCHEMA_DIR = '/etc/ldap/schema';
const MODULE_DIR = '/usr/lib/ldap';
const AD_SCHEMA = join(import.meta.dirname, 'slapd', 'ad.schema');
/** LDAP_CAP_ACTIVE_DIRECTORY_OID: what AD lists in its root DSE's supportedCapabilities. */
export const AD_CAPABILITY = '1.2.840.113556.1.4.800';

export interface SlapdOptions {
  /** Start the Active Directory flavour (see the file comment). Default false. */
  activeDirectory?: boolean;
  /** Let anonymous clients search people (never passwords). Default false. */
  anonymousSearch?: boolean;
  /** slapd's -d level; "stats" logs connections, binds and searches (never passwords). Default "stats". */
  logLevel?: string;
  /** Readiness deadline in ms. Default 10 000. */
  startTimeoutMs?: number;
}

export interface Slapd {
  /** ldap://127.0.0.1:port (StartTLS is offered there). */
  ldapUrl: string;
  /** ldaps://127.0.0.1:port */
  ldapsUrl: string;
  /** The test CA (PEM) that signed the server's certificate (SAN 127.0.0.1, localhost), and its file. */
  caCertPem: string;
  caCertPath: string;
  /** A CA that signed nothing this server shows: TLS verification with it must fail. */
  otherCaCertPem: string;
  baseDn: string;
  /** The service account (read access to people, not to passwords). */
  serviceDn: string;
  servicePassword: string;
  /** The rootdn (full rights; for tests that change entries). */
  rootDn: string;
  rootPassword: string;
  /** The role groups (groupOfNames, or AD `group`), members listed in users' memberOf. */
  groups: { admin: string; auditor: string };
  activeDirectory: boolean;
  /** Users by fixture key (see ./slapd/fixtures.ts); `user(key)` throws on an unknown key. */
  users: Readonly<Record<string, DirectoryUser>>;
  user(key: string): DirectoryUser;
  /**
   * The bridge's connection settings for this server (schema/bridge): `via` picks ldap://,
   * StartTLS or ldaps:// (default ldap); userFilter null (the default of the directory kind); the
   * role is read from memberOf with the groups above;
   * anything may be overridden.
   */
  connection(o?: { via?: 'ldap' | 'starttls' | 'ldaps' } & Partial<LdapConnection>): LdapConnection;
  /** What slapd printed so far (at logLevel "stats": one line per operation, no passwords). */
  log(): string;
  pid: number;
  /** Stops slapd (SIGTERM, then SIGKILL) and removes its folder; idempotent. */
  stop(): Promise<void>;
}

const LOG_LIMIT = 2_000_000;

/** Whether slapd and slapadd are installed here. */
export function slapdAvailable(): boolean {
  return existsSync(SLAPD) && existsSync(SLAPADD);
}

export { freePort };

/** An ldap:// URL on a loopback port where nothing listens (connections are refused). */
export async function closedPortUrl(): Promise<string> {
  return `ldap://127.0.0.1:${await freePort()}`;
}

function slapdConf(
  dir: string,
  o: { ad: boolean; anonymousSearch: boolean; rootPassword: string; cert: { ca: string; cert: string; key: string } },
): string {
  const schemas = ['core', 'cosine', 'inetorgperson', 'nis'].map((s) => `include ${SCHEMA_DIR}/${s}.schema`);
  if (o.ad) schemas.push(`include ${AD_SCHEMA}`);
  const peopleReaders = [
    `  by dn.exact="${SERVICE_DN}" read`,
    '  by self read',
    ...(o.anonymousSearch ? ['  by anonymous read'] : []),
    '  by * none',
  ];
  return [
    ...schemas,
    `pidfile ${join(dir, 'slapd.pid')}`,
    `argsfile ${join(dir, 'slapd.args')}`,
    `modulepath ${MODULE_DIR}`,
    'moduleload back_mdb',
    'moduleload memberof',
    ...(o.ad ? [`rootDSE ${join(dir, 'root-dse.ldif')}`] : []),
    `TLSCACertificateFile ${o.cert.ca}`,
    `TLSCertificateFile ${o.cert.cert}`,
    `TLSCertificateKeyFile ${o.cert.key}`,
    'TLSVerifyClient never',
    // The root DSE and the schema are public, as on any directory (AD too).
    'access to dn.base="" by * read',
    'access to dn.base="cn=Subschema" by * read',
    'database mdb',
    `suffix "${BASE_DN}"`,
    `rootdn "cn=admin,${BASE_DN}"`,
    `rootpw ${o.rootPassword}`,
    `directory ${join(dir, 'db')}`,
    'maxsize 67108864',
    'index objectClass eq',
    ...(o.ad ? ['index sAMAccountName,userPrincipalName eq'] : ['index uid eq']),
    'overlay memberof',
    ...(o.ad ? ['memberof-group-oc group'] : []),
    // Passwords can be used to bind and nothing else; the service account reads the rest.
    'access to attrs=userPassword',
    '  by anonymous auth',
    '  by * none',
    `access to dn.subtree="${BASE_DN}"`,
    ...peopleReaders,
    '',
  ].join('\n');
}

/** Starts slapd with the test fixtures; ready (both listeners accept) when it resolves. */
export async function startSlapd(opts: SlapdOptions = {}): Promise<Slapd> {
  if (!slapdAvailable())
    throw new Error(`startSlapd: ${SLAPD} or ${SLAPADD} is missing (apt-get install slapd ldap-utils)`);
  const ad = opts.activeDirectory ?? false;
  const dir = mkdtempSync(join(tmpdir(), 'auth-slapd-'));
  try {
    const ca = makeCa(dir, 'ldap-test-ca', 30);
    const server = issueCert(dir, ca, 'ldap-server', { cn: '127.0.0.1', usage: 'server' });
    const otherCa = makeCa(join(dir, 'other'), 'unrelated-ca', 30);
    const servicePassword = randomBytes(18).toString('base64url');
    const rootPassword = randomBytes(18).toString('base64url');
    const fixtures = buildFixtures({ activeDirectory: ad, servicePassword });
    mkdirSync(join(dir, 'db'));
    writeFileSync(join(dir, 'data.ldif'), fixtures.ldif);
    if (ad)
      writeFileSync(
        join(dir, 'root-dse.ldif'),
        `dn:\nsupportedCapabilities: ${AD_CAPABILITY}\nsupportedCapabilities: 1.2.840.113556.1.4.1670\n` +
          `supportedCapabilities: 1.2.840.113556.1.4.1791\n`,
      );
    const conf = join(dir, 'slapd.conf');
    writeFileSync(
      conf,
      slapdConf(dir, {
        ad,
        anonymousSearch: opts.anonymousSearch ?? false,
        rootPassword,
        cert: { ca: ca.cert, cert: server.cert, key: server.key },
      }),
    );
    const added = spawnSync(SLAPADD, ['-q', '-f', conf, '-l', join(dir, 'data.ldif')], { encoding: 'utf8' });
    if (added.status !== 0) throw new Error(`slapadd failed (${added.status}): ${added.stderr}`);

    const caCertPem = readFileSync(ca.cert, 'utf8');
    const otherCaCertPem = readFileSync(otherCa.cert, 'utf8');
    // A port picked free may be taken before slapd binds it: try again with new ports.
    for (let attempt = 1; ; attempt++) {
      const [ldapPort, ldapsPort] = [await freePort(), await freePort()];
      try {
        const run = await launch(dir, conf, ldapPort, ldapsPort, opts);
        const ldapUrl = `ldap://127.0.0.1:${ldapPort}`;
        const ldapsUrl = `ldaps://127.0.0.1:${ldapsPort}`;
        const users = fixtures.users;
        const groups = { admin: ADMIN_GROUP_DN, auditor: AUDITOR_GROUP_DN };
        return {
          ldapUrl,
          ldapsUrl,
          caCertPem,
          caCertPath: ca.cert,
          otherCaCertPem,
          baseDn: BASE_DN,
          serviceDn: SERVICE_DN,
          servicePassword,
          rootDn: `cn=admin,${BASE_DN}`,
          rootPassword,
          groups,
          activeDirectory: ad,
          users,
          user(key) {
            const u = users[key];
            if (!u)
              throw new Error(
                `no fixture user "${key}" (${ad ? 'AD' : 'plain'} instance has: ${Object.keys(users).join(', ')})`,
              );
            return u;
          },
          connection({ via = 'ldap', ...over } = {}) {
            return {
              urls: [via === 'ldaps' ? ldapsUrl : ldapUrl],
              startTls: via === 'starttls',
              caCert: via === 'ldap' ? null : caCertPem,
              bindDn: SERVICE_DN,
              bindPassword: servicePassword,
              baseDn: BASE_DN,
              userFilter: null,
              attributes: { displayName: 'displayName', email: 'mail', role: 'memberOf' },
              roleGroups: groups,
              directorySignature: AD_CAPABILITY,
              connectTimeoutMs: 2000,
              searchTimeoutMs: 2000,
              ...over,
            };
          },
          log: run.log,
          pid: run.child.pid!,
          stop: run.stop,
        };
      } catch (err) {
        if (!(err instanceof PortTaken) || attempt >= 3) throw err;
      }
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

class PortTaken extends Error {}

/** Spawns slapd and waits until both listeners accept connections. */
async function launch(dir: string, conf: string, ldapPort: number, ldapsPort: number, opts: SlapdOptions) {
  const child: ChildProcess = spawn(
    SLAPD,
    ['-f', conf, '-h', `ldap://127.0.0.1:${ldapPort}/ ldaps://127.0.0.1:${ldapsPort}/`, '-d', opts.logLevel ?? 'stats'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  const collect = (b: Buffer) => {
    out += b.toString('utf8');
    if (out.length > LOG_LIMIT) out = out.slice(-LOG_LIMIT / 2);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  let exited = false;
  const exitedP = new Promise<void>((r) => child.once('exit', () => ((exited = true), r())));
  // Nothing we start may outlive the test process.
  const onExit = () => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      process.off('exit', onExit);
      if (!exited) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 2000);
        await exitedP;
        clearTimeout(killer);
      }
      rmSync(dir, { recursive: true, force: true });
    })());

  const deadline = Date.now() + (opts.startTimeoutMs ?? 10_000);
  while (true) {
    if (exited) {
      process.off('exit', onExit);
      if (/Address already in use/.test(out)) throw new PortTaken(out);
      throw new Error(`slapd exited during start:\n${out}`);
    }
    if ((await isListening(ldapPort)) && (await isListening(ldapsPort))) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`slapd did not accept connections within ${opts.startTimeoutMs ?? 10_000} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, log: () => out, stop };
}

export interface SilentServer {
  /** ldap:// URL: the TCP connection succeeds, nothing is ever answered. */
  url: string;
  /** ldaps:// URL on the same port: the TLS handshake never completes. */
  ldapsUrl: string;
  port: number;
  /** Connections accepted so far. */
  connections(): number;
  stop(): Promise<void>;
}

/** A TCP server on loopback that accepts connections and never answers (timeout tests). */
export async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  let count = 0;
  const server = createServer((s) => {
    count++;
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as { port: number };
  return {
    url: `ldap://127.0.0.1:${port}`,
    ldapsUrl: `ldaps://127.0.0.1:${port}`,
    port,
    connections: () => count,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
