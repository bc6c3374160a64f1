// Run by `npm test` before the suites: the tests use real servers from Debian's packages (Chromium
// for the browser tests, OpenLDAP's slapd and ldap-utils for LDAP, a Samba AD DC for Active
// Directory, openssl for test certificates, nginx and Caddy for the gate).
// When one is missing and we are root with apt-get, install it; otherwise stop at once with one line
// naming the exact command to run. TEST_PREREQS=skip skips the check (e.g. a machine without apt).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Debian package → a file that proves it is installed. */
const PACKAGES = {
  chromium: '/usr/bin/chromium',
  openssl: '/usr/bin/openssl',
  slapd: '/usr/sbin/slapd',
  'ldap-utils': '/usr/bin/ldapsearch',
  'samba-ad-dc': '/usr/sbin/samba',
  // Only a Recommends of samba-ad-dc, but it holds the schema that provisioning needs.
  'samba-ad-provision': '/usr/share/samba/setup/ad-schema',
  // TOTP codes computed by an independent implementation (test/http/mfa-*.test.ts).
  oathtool: '/usr/bin/oathtool',
  // The gate behind real proxies (test/http/gate-proxies.test.ts, docs/integration.md).
  'nginx-light': '/usr/sbin/nginx',
  caddy: '/usr/bin/caddy',
};

if (process.env.TEST_PREREQS === 'skip') process.exit(0);

const missing = Object.entries(PACKAGES)
  .filter(([, file]) => !existsSync(file))
  .map(([name]) => name);
if (missing.length === 0) process.exit(0);

const command = `apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')}`;
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const hasApt = spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
if (!isRoot || !hasApt) {
  console.error(
    `The tests need Debian packages that are missing (${missing.join(', ')}): run  sudo sh -c '${command}'`,
  );
  process.exit(1);
}

console.error(`Installing the Debian packages the tests need: ${missing.join(', ')}`);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
// slapd's package scripts would configure a system directory: preseed it away (the tests run their
// own slapd, with their own configuration, on loopback).
if (missing.includes('slapd')) {
  execFileSync('debconf-set-selections', { input: 'slapd slapd/no_configuration boolean true\n', env });
}
execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { stdio: 'inherit', env });
// Services the packages may start are not needed (the tests run their own; a system Samba or slapd
// would hold ports 389 and 636).
for (const service of ['slapd', 'samba-ad-dc', 'smbd', 'nmbd', 'winbind', 'nginx', 'caddy']) {
  spawnSync('sh', ['-c', `service ${service} stop`], { stdio: 'ignore' });
}
