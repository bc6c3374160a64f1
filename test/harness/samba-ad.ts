/**
 * A real Active Directory for tests: Debian's Samba AD DC (`samba-ad-dc`), provisioned in a
 * temporary folder (about 5 s), serving only LDAP on loopback (127.0.0.1:389 and ldaps 636) with a
 * certificate for IP 127.0.0.1 from a fresh test CA, and the users of SAMBA_USERS, one per way AD
 * refuses a bind (disabled, account expired, password expired, must change, logon hours,
 * workstation). Unlike the slapd flavour (./slapd.ts), this directory refuses such binds itself,
 * with result 49 and a sub-code (`data 533`, ...) in the diagnostic message.
 *
 * Samba's LDAP ports are fixed, so only one instance can run on the machine: `startSambaAd()`
 * takes a lock file (the Node and edge HTTP projects may run at once) and waits for it. Needs
 * root (ports below 1024) and the packages samba-ad-dc and samba-ad-provision.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Attribute, Change, Client } from 'ldapts';
import { issueCert, makeCa } from '../../scripts/dev-certs.js';
import { isListening } from './hosts.js';

const SAMBA = '/usr/sbin/samba';
const SAMBA_TOOL = '/usr/bin/samba-tool';
/** Samba's Python modules live in Debian's python3, not in whatever python3 comes first in PATH. */
const PYTHON = '/usr/bin/python3';
const PROVISION_FILES = '/usr/share/samba/setup/ad-schema';
const LOCK = join(tmpdir(), 'auth-test-samba-ad.lock');
export const REALM = 'ad.test';
export const BASE_DN = 'DC=ad,DC=test';
export const USERS_DN = `CN=Users,${BASE_DN}`;
/** The LDAP ports Samba always uses. */
const PORTS = [389, 636];

/** What a fixture user is set up to be (each is refused by AD with its own sub-code). */
export type SambaUserState =
  | 'ok'
  | 'disabled'
  | 'account-expired'
  | 'password-expired'
  | 'must-change'
  | 'logon-hours'
  | 'workstation';

export interface SambaUser {
  /** sAMAccountName */
  login: string;
  upn: string;
  dn: string;
  password: string;
  displayName: string;
  email: string;
  state: SambaUserState;
}

/** The fixture users by key (key = sAMAccountName). */
export const SAMBA_USERS: Readonly<Record<string, Omit<SambaUser, 'upn' | 'dn' | 'email'>>> = {
  alice: { login: 'alice', password: 'Al1ce$pass', displayName: 'Alice Admin', state: 'ok' },
  bob: { login: 'bob', password: 'B0b$ecret-1', displayName: 'Bob Builder', state: 'ok' },
  loki: { login: 'loki', password: 'L0ki$ecret-2', displayName: 'Loki Lockout', state: 'ok' },
  dora: { login: 'dora', password: 'D0ra$ecret-3', displayName: 'Dora Disabled', state: 'disabled' },
  exa: { login: 'exa', password: 'Ex4$ecret-4', displayName: 'Exa Expired', state: 'account-expired' },
  olga: { login: 'olga', password: '0lga$ecret-5', displayName: 'Olga Oldpassword', state: 'password-expired' },
  mia: { login: 'mia', password: 'M1a$ecret-6', displayName: 'Mia Mustchange', state: 'must-change' },
  hugo: { login: 'hugo', password: 'Hug0$ecret-7', displayName: 'Hugo Hours', state: 'logon-hours' },
  wes: { login: 'wes', password: 'W3s$ecret-8', displayName: 'Wes Workstation', state: 'workstation' },
};

export interface SambaAdOptions {
  /** Samba's own lockout policy: wrong passwords before it locks an account (0: never). Default 5. */
  lockoutThreshold?: number;
  /** How long to wait for another test file's Samba to stop. Default 10 minutes. */
  lockWaitMs?: number;
}

export interface SambaAd {
  /** ldaps://127.0.0.1 (port 636) */
  ldapsUrl: string;
  /** The test CA (PEM) that signed Samba's certificate (IP 127.0.0.1). */
  caCertPem: string;
  baseDn: string;
  /** A plain domain user that finds the others (AD lets authenticated users read them). */
  serviceDn: string;
  servicePassword: string;
  /** Administrator (for tests that change entries over LDAP). */
  adminDn: string;
  adminPassword: string;
  /** The group whose members get the admin role (memberOf); alice is in it. */
  adminGroupDn: string;
  users: Readonly<Record<string, SambaUser>>;
  user(key: string): SambaUser;
  /** Runs samba-tool on this domain (e.g. `tool('user', 'disable', 'alice')`); rejects on failure. */
  tool(...args: string[]): Promise<string>;
  /** A simple bind over ldaps: null when it succeeds, else the directory's diagnostic message. */
  tryBind(dn: string, password: string): Promise<string | null>;
  /** What Samba printed so far. */
  log(): string;
  stop(): Promise<void>;
}

/** Why this machine cannot run the Samba tests, or null when it can (root is what tests skip on). */
export function sambaAdSkipReason(): string | null {
  if (process.getuid?.() !== 0) return 'needs root (Samba AD DC binds ports 389 and 636)';
  return null;
}

function sambaMissing(): string | null {
  for (const f of [SAMBA, SAMBA_TOOL, PYTHON, PROVISION_FILES]) {
    if (!existsSync(f)) {
      return `${f} is missing (apt-get install --no-install-recommends samba-ad-dc samba-ad-provision)`;
    }
  }
  return null;
}

/** Runs a program; resolves with its output, rejects with it on a non-zero exit. */
function run(cmd: string, args: string[], o: { timeoutMs?: number; input?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (out += b.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 120_000);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else {
        const shown = args.filter((a) => !a.includes('pass')).join(' ');
        reject(new Error(`${cmd} ${shown} failed (${code ?? signal}):\n${out}`));
      }
    });
    child.stdin.end(o.input ?? '');
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface Lock {
  /** Notes Samba's process group in the lock, so that a later taker can end it if we die. */
  noteSamba(pid: number): void;
  release(): void;
}

/**
 * Takes the machine-wide Samba lock (a file: our pid, then Samba's). A dead holder's lock is
 * taken over, and the Samba it left running (it was killed before it could stop it) is ended.
 */
async function acquireLock(waitMs: number): Promise<Lock> {
  const deadline = Date.now() + waitMs;
  const mine = () => readFileSync(LOCK, 'utf8').split(' ')[0] === String(process.pid);
  for (;;) {
    try {
      writeFileSync(LOCK, String(process.pid), { flag: 'wx' });
      let held = true;
      return {
        noteSamba: (pid) => held && mine() && writeFileSync(LOCK, `${process.pid} ${pid}`),
        release() {
          if (held && existsSync(LOCK) && mine()) unlinkSync(LOCK);
          held = false;
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const pids = readFileSync(LOCK, 'utf8').trim().split(' ');
    const [holder = 0, samba = 0] = pids.map((n) => Number.parseInt(n, 10) || 0);
    if (!holder || !alive(holder)) {
      const cmdline = `/proc/${samba}/cmdline`;
      if (samba && alive(samba) && existsSync(cmdline) && readFileSync(cmdline, 'utf8').includes('samba')) {
        process.kill(-samba, 'SIGKILL');
        await sleep(500);
      }
      rmSync(LOCK, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(`another test process (pid ${holder}) has held the Samba AD lock ${LOCK} for ${waitMs} ms`);
    }
    await sleep(500);
  }
}

/** FILETIME (100 ns since 1601) of a JavaScript time. */
function fileTime(ms: number): string {
  return (BigInt(ms) * 10_000n + 116_444_736_000_000_000n).toString();
}

/** unicodePwd: the password in double quotes, UTF-16LE (MS-ADTS 3.1.1.3.1.5.1). */
function unicodePwd(password: string): Buffer {
  return Buffer.from(`"${password}"`, 'utf16le');
}

/**
 * Sets an expired password: pwdLastSet can only be 0 or -1 over LDAP, so this writes sam.ldb
 * directly with the control Samba uses when importing passwords (DSDB_CONTROL_PASSWORD_BYPASS_LAST_SET).
 */
const BACKDATE_PASSWORD = `
import sys, base64
from samba.samdb import SamDB
from samba.auth import system_session
from samba.param import LoadParm
conf, sam, dn, password, last_set = sys.argv[1:6]
lp = LoadParm(); lp.load(conf)
db = SamDB(url=sam, session_info=system_session(), lp=lp)
pw = base64.b64encode(('"%s"' % password).encode('utf-16-le')).decode()
ldif = "dn: %s\\nchangetype: modify\\nreplace: unicodePwd\\nunicodePwd:: %s\\n-\\n" % (dn, pw)
ldif += "replace: pwdLastSet\\npwdLastSet: %s\\n" % last_set
db.modify_ldif(ldif, controls=["local_oid:1.3.6.1.4.1.7165.4.3.20:0"])
`;

/** Provisions and starts Samba AD DC with the fixture users; ready when it resolves. */
export async function startSambaAd(opts: SambaAdOptions = {}): Promise<SambaAd> {
  const skip = sambaAdSkipReason() ?? sambaMissing();
  if (skip) throw new Error(`startSambaAd: ${skip}`);
  const lock = await acquireLock(opts.lockWaitMs ?? 600_000);
  const dir = mkdtempSync(join(tmpdir(), 'auth-samba-ad-'));
  let child: ChildProcess | undefined;
  let out = '';
  const kill = (signal: NodeJS.Signals) => {
    // Samba forks a process tree in its own process group: signal all of it.
    if (child?.pid) {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    }
  };
  const onExit = () => {
    kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    lock.release();
  };
  process.once('exit', onExit);
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      process.off('exit', onExit);
      if (child && child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child!.once('exit', r));
        kill('SIGTERM');
        const killer = setTimeout(() => kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(killer);
        // The workers may outlive the root process by a moment: wait until the ports are free.
        for (let i = 0; i < 50 && (await Promise.all(PORTS.map(isListening))).some(Boolean); i++) await sleep(100);
      }
      rmSync(dir, { recursive: true, force: true });
      lock.release();
    })());

  try {
    for (const port of PORTS) {
      if (await isListening(port)) throw new Error(`startSambaAd: something already listens on 127.0.0.1:${port}`);
    }
    const ca = makeCa(join(dir, 'tls'), 'samba-test-ca', 30);
    const server = issueCert(join(dir, 'tls'), ca, 'samba-dc', { cn: '127.0.0.1', usage: 'server' });
    const adminPassword = `Adm-${randomBytes(12).toString('base64url')}-1a`;
    const servicePassword = `Svc-${randomBytes(12).toString('base64url')}-1a`;
    const target = join(dir, 'dc');
    const options = {
      interfaces: 'lo',
      'bind interfaces only': 'yes',
      // LDAP only: no SMB, no KDC, no DNS, no winbind (fast, and nothing else bound).
      'server services': 'ldap',
      'tls enabled': 'yes',
      'tls keyfile': server.key,
      'tls certfile': server.cert,
      'tls cafile': ca.cert,
      'pid directory': join(target, 'run'),
      'winbindd socket directory': join(target, 'winbindd'),
      'ncalrpc dir': join(target, 'ncalrpc'),
      'log file': join(target, 'log'),
    };
    await run(SAMBA_TOOL, [
      'domain',
      'provision',
      '--server-role=dc',
      '--dns-backend=NONE',
      '--host-name=dc',
      `--realm=${REALM.toUpperCase()}`,
      '--domain=ADTEST',
      `--adminpass=${adminPassword}`,
      `--targetdir=${target}`,
      ...Object.entries(options).map(([k, v]) => `--option=${k}=${v}`),
    ]);
    const conf = join(target, 'etc', 'smb.conf');
    const sam = join(target, 'private', 'sam.ldb');

    // Its own process group (detached), which stop() signals as a whole.
    child = spawn(SAMBA, ['-s', conf, '-i', '--debuglevel=1'], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    if (child.pid) lock.noteSamba(child.pid);
    const collect = (b: Buffer) => {
      out += b.toString('utf8');
      if (out.length > 1_000_000) out = out.slice(-500_000);
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    const caCertPem = readFileSync(ca.cert, 'utf8');
    const ldapsUrl = 'ldaps://127.0.0.1';
    const adminDn = `CN=Administrator,${USERS_DN}`;

    const connectAdmin = async () => {
      const c = new Client({ url: ldapsUrl, tlsOptions: { ca: caCertPem }, timeout: 10_000, connectTimeout: 5_000 });
      await c.bind(adminDn, adminPassword);
      return c;
    };
    // Ready when Administrator can bind over ldaps.
    let admin: Client | undefined;
    const deadline = Date.now() + 60_000;
    while (!admin) {
      if (child.exitCode !== null) throw new Error(`samba exited during start:\n${out}`);
      if (await isListening(636)) admin = await connectAdmin().catch(() => undefined);
      if (!admin) {
        if (Date.now() > deadline) throw new Error(`samba did not accept ldaps binds within 60 s:\n${out}`);
        await sleep(200);
      }
    }

    const users: Record<string, SambaUser> = {};
    const adminGroupDn = `CN=auth-admins,${USERS_DN}`;
    const serviceDn = `CN=svc-auth,${USERS_DN}`;
    try {
      // The lockout policy (the password policy is Samba's default: these passwords meet it).
      const thirtyMinutes = String(-30n * 60n * 10_000_000n);
      const set = (type: string, value: string) =>
        new Change({ operation: 'replace', modification: new Attribute({ type, values: [value] }) });
      await admin.modify(BASE_DN, [
        set('lockoutThreshold', String(opts.lockoutThreshold ?? 5)),
        set('lockoutDuration', thirtyMinutes),
        set('lockOutObservationWindow', thirtyMinutes),
      ]);
      const addUser = async (login: string, password: string, displayName: string) => {
        const dn = `CN=${login},${USERS_DN}`;
        const attr = (type: string, values: string[] | Buffer[]) => new Attribute({ type, values });
        await admin!.add(dn, [
          attr('objectClass', ['top', 'person', 'organizationalPerson', 'user']),
          attr('sAMAccountName', [login]),
          attr('userPrincipalName', [`${login}@${REALM}`]),
          attr('displayName', [displayName]),
          attr('mail', [`${login}@${REALM}`]),
          attr('unicodePwd', [unicodePwd(password)]),
          attr('userAccountControl', ['512']),
        ]);
        return dn;
      };
      await addUser('svc-auth', servicePassword, 'Auth service');
      await admin.add(adminGroupDn, { objectClass: ['top', 'group'], sAMAccountName: 'auth-admins' });
      const replace = (dn: string, type: string, values: string[] | Buffer[]) =>
        admin!.modify(dn, new Change({ operation: 'replace', modification: new Attribute({ type, values }) }));
      for (const [key, u] of Object.entries(SAMBA_USERS)) {
        const dn = await addUser(u.login, u.password, u.displayName);
        users[key] = { ...u, dn, upn: `${u.login}@${REALM}`, email: `${u.login}@${REALM}` };
        if (u.state === 'disabled') await replace(dn, 'userAccountControl', ['514']);
        if (u.state === 'account-expired') await replace(dn, 'accountExpires', [fileTime(Date.UTC(2020, 0, 1))]);
        if (u.state === 'must-change') await replace(dn, 'pwdLastSet', ['0']);
        // No hour of the week allowed (21 bytes, one bit per hour).
        if (u.state === 'logon-hours') await replace(dn, 'logonHours', [Buffer.alloc(21)]);
        if (u.state === 'workstation') await replace(dn, 'userWorkstations', ['OTHERPC']);
        if (u.state === 'password-expired') {
          // Set 100 days ago: beyond the default maximum password age (42 days).
          const lastSet = fileTime(Date.now() - 100 * 86_400_000);
          await run(PYTHON, ['-c', BACKDATE_PASSWORD, conf, sam, dn, u.password, lastSet]);
        }
      }
      const member = new Attribute({ type: 'member', values: [users.alice!.dn] });
      await admin.modify(adminGroupDn, new Change({ operation: 'add', modification: member }));
    } finally {
      await admin.unbind().catch(() => {});
    }

    return {
      ldapsUrl,
      caCertPem,
      baseDn: BASE_DN,
      serviceDn,
      servicePassword,
      adminDn,
      adminPassword,
      adminGroupDn,
      users,
      user(key) {
        const u = users[key];
        if (!u) throw new Error(`no Samba fixture user "${key}" (has: ${Object.keys(users).join(', ')})`);
        return u;
      },
      tool: (...args) => run(SAMBA_TOOL, [...args, '-s', conf, '-H', sam]),
      async tryBind(dn, password) {
        const c = new Client({ url: ldapsUrl, tlsOptions: { ca: caCertPem }, timeout: 10_000, connectTimeout: 5_000 });
        try {
          await c.bind(dn, password);
          return null;
        } catch (err) {
          return (err as Error).message;
        } finally {
          await c.unbind().catch(() => {});
        }
      },
      log: () => out,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
