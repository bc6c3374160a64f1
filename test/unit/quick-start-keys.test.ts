/**
 * The quick start keeps what it seals (docs/operations.md, "Keys the Node host keeps"): without
 * AUTH_SECRETS_ENCRYPTION_KEY and SESSION_SECRET_KEY the Node host generates the sealing key once,
 * keeps it beside the database (mode 0600) and reads it again at the next start, so a TOTP factor
 * enrolled before a restart still opens the second step after it.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN } from '../harness/client.js';
import { Browser, loggedInBrowser } from '../harness/browser.js';
import { startNodeTestHost, type RunningHost } from '../harness/hosts.js';
import { enrolTotp, totpCode } from '../harness/totp.js';

/** The quick start's environment: no key of any kind (the harness sets SESSION_SECRET_KEY otherwise). */
const QUICK_START = { SESSION_SECRET_KEY: '', AUTH_SECRETS_ENCRYPTION_KEY: '' };

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function dataFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'auth-quick-start-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function start(database: string): Promise<RunningHost> {
  const host = await startNodeTestHost(QUICK_START, { database });
  cleanup.push(() => host.stop());
  return host;
}

describe('the quick start keeps its sealing key', () => {
  it('a TOTP factor enrolled before a restart opens the second step after it; the key file is 0600', async () => {
    const dir = dataFolder();
    const database = join(dir, 'auth.db');
    const first = await start(database);
    expect(first.output()).toContain('secrets key: ');
    expect(first.output()).toContain('generated at this start');
    const admin = await loggedInBrowser(first.url, ADMIN.login, ADMIN.password);
    const secret = await enrolTotp(admin, first.url);
    await first.stop();

    const keyFile = join(dir, 'secrets.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);

    const second = await start(database);
    expect(second.output()).toContain(keyFile);
    expect(second.output()).toContain('kept from an earlier start');
    const b = new Browser(second.origin);
    const step1 = await b.postJson(`${second.url}/v3/login`, ADMIN);
    expect(step1.status).toBe(401);
    expect(((await step1.json()) as { code: string }).code).toBe('SECOND_FACTOR_REQUIRED');
    // The next step's code: the enrolment used the current one.
    const step2 = await b.postJson(`${second.url}/v3/login/second-factor`, { code: totpCode(secret, Date.now(), 1) });
    expect(step2.status, await step2.clone().text()).toBe(200);
    expect((await b.fetch(`${second.url}/v4/users/me`)).status).toBe(200);
  });

  it('a key file that is not a key stops the start, naming the file and what to do', async () => {
    const dir = dataFolder();
    writeFileSync(join(dir, 'secrets.key'), 'not a key\n', { mode: 0o600 });
    const failed = await startNodeTestHost(QUICK_START, { database: join(dir, 'auth.db') }).then(
      () => '',
      (err: unknown) => String(err),
    );
    expect(failed).toContain('host exited with 1');
    expect(failed).toContain('secrets.key is malformed');
    expect(failed).toContain('restore it from the backup');
  });

  it('a key file that cannot be read stops the start, naming the file and the system error', async () => {
    const dir = dataFolder();
    // A folder where the file should be: unreadable as a file whoever runs the test (root reads any 0000 file).
    mkdirSync(join(dir, 'secrets.key'));
    const failed = await startNodeTestHost(QUICK_START, { database: join(dir, 'auth.db') }).then(
      () => '',
      (err: unknown) => String(err),
    );
    expect(failed).toContain('host exited with 1');
    expect(failed).toMatch(/cannot read the sealing key \S*secrets\.key \(EISDIR\)/);
  });
});
