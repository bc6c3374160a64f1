/**
 * The documentation's examples, run as written: every ```sh block marked `<!-- example:NAME -->` in
 * README.md and in the pages of docs/ runs with bash, in order (README first, then docs/ by name),
 * against a host started with the quick start's administrator (read from the README too), only the
 * address changed to the test host's. So the examples a newcomer pastes cannot drift from what the
 * service does.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestHost, type RunningHost } from '../harness/hosts.js';

const ROOT = resolve(import.meta.dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const README_ORIGIN = 'http://127.0.0.1:8001';
/** README.md, then every page of docs/: wherever an example moves, it is still found. */
const PAGES = [
  { file: 'README.md', text: README },
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => ({ file: `docs/${f}`, text: readFileSync(join(ROOT, 'docs', f), 'utf8') })),
];

/** The marked examples, in the order of PAGES. */
const MARKED = /<!-- example:([\w-]+) -->\n```sh\n([\s\S]*?)\n```/g;
const examples = PAGES.flatMap((p) =>
  [...p.text.matchAll(MARKED)].map((m) => ({ name: m[1]!, script: m[2]!, file: p.file })),
);

/** The quick start's first administrator, as its command sets it. */
const quickStart = README.match(/AUTH_BOOTSTRAP_ADMIN_LOGIN=(\S+) AUTH_BOOTSTRAP_ADMIN_PASSWORD='([^']+)' npm start/);

type Check = (out: string) => void;
const json = (out: string) => JSON.parse(out) as Record<string, unknown>;

/** What each example must show (a new example needs its check here). */
const CHECKS: Record<string, Check> = {
  'first-login': (out) => expect(json(out)).toMatchObject({ login: 'admin', role: 'admin' }),
  'cookie-session': (out) => {
    // The login's answer, then the account read with the cookie.
    const [login, me] = out.split(/(?<=\})(?=\{)/);
    expect(json(login!)).toMatchObject({ user: { login: 'admin' } });
    expect(json(me!)).toMatchObject({ login: 'admin', role: 'admin' });
  },
  'create-user': (out) => {
    expect(json(out)).toMatchObject({ login: 'j.doe', displayName: 'John Doe', role: 'user', status: 'active' });
  },
  'patch-settings': (out) => {
    const items = json(out).items as { name: string; value: unknown; source: string }[];
    expect(items.find((i) => i.name === 'AUTH_FAILED_COUNT')).toMatchObject({ value: 5, source: 'ui' });
    expect(items.find((i) => i.name === 'USER_PASSWORD_EXPIRATION_DAY')).toMatchObject({ value: 90, source: 'ui' });
  },
  'api-token': (out) => expect(json(out)).toMatchObject({ login: 'admin' }),
  groups: (out) =>
    expect(json(out)).toMatchObject({ login: 'admin', groups: [{ name: 'developers', source: 'local' }] }),
  'ops-unlock': (out) => {
    expect(out).toMatch(/^admin \[admin, local\]: active, not locked/m);
    expect(out).toContain('unlocked: admin [admin, local]: active, not locked');
  },
};

let host: RunningHost;
let cwd: string;

beforeAll(async () => {
  expect(quickStart, 'the quick start sets AUTH_BOOTSTRAP_ADMIN_LOGIN and _PASSWORD').not.toBeNull();
  const [, login, password] = quickStart!;
  const admin = { AUTH_BOOTSTRAP_ADMIN_LOGIN: login!, AUTH_BOOTSTRAP_ADMIN_PASSWORD: password! };
  host = await startTestHost(inject('hostKind'), admin);
  cwd = mkdtempSync(join(tmpdir(), 'auth-readme-'));
});
afterAll(async () => {
  await host?.stop();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

/** Runs a block with bash: curl examples in a scratch directory, `npm run` ones in the repository. */
function bash(script: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((res) => {
    const child = spawn('bash', ['-c', script.replaceAll(README_ORIGIN, host.origin)], {
      cwd: script.includes('npm run') ? ROOT : cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LIBSQL_URL: host.libsqlUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.on('close', (code) => res({ code, out, err }));
  });
}

describe('documentation examples', () => {
  it('are marked, and each has a check', () => {
    expect(examples.map((e) => e.name).sort()).toEqual(Object.keys(CHECKS).sort());
    // curl examples name the quick start's address (which the test replaces by its host's).
    for (const e of examples.filter((x) => x.script.includes('curl'))) {
      expect(e.script, e.name).toContain(`${README_ORIGIN}/api/auth/`);
    }
  });

  it('quote credentials so that a shell passes them unchanged', () => {
    // -u "admin:Chang3$me" would send admin:Chang3 (and lock the account): credentials in single quotes.
    for (const e of examples) expect(e.script, e.name).not.toMatch(/-u\s+"/);
  });

  it.each(examples.map((e) => [e.name, e.script] as const))(
    '%s runs as written',
    async (name, script) => {
      const { code, out, err } = await bash(script);
      expect(code, err).toBe(0);
      // npm prints its own header lines; the examples' output is what follows.
      CHECKS[name]!(script.includes('npm run') ? out : out.trim());
    },
    120_000,
  );
});
