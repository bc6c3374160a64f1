/**
 * The comparison servers of `npm run bench`, measured with the same harness as our host (pinned
 * to HOST_CORE, the load from LOAD_CORE, the same connections and durations):
 *   ceiling            GET /ping of a bare Hono route on @hono/node-server (nothing else)
 *   peer-login         POST /api/auth/sign-in/email of better-auth (a password check and a session)
 *   peer-cookie        GET /api/auth/get-session with the session cookie (a database lookup)
 *   peer-bearer        the same with Authorization: Bearer (better-auth's bearer plugin)
 *   peer-cookie-cache  the same with the session cached in a signed cookie (cookieCache: no database)
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { policyPassword, ROOT } from './node-host.js';
import type { ScenarioResult } from './report.js';
import { expectStatus, loadScenario, ScenarioError, type BenchConfig } from './scenarios.js';
import { startPinnedServer, type PinnedServer } from './servers.js';

type Register = (stop: () => Promise<void>) => () => Promise<void>;
type Report = (r: ScenarioResult) => void;

/** Runs the ceiling scenario. */
export async function ceiling(config: BenchConfig, register: Register): Promise<ScenarioResult> {
  const server = await startPinnedServer('scripts/bench/bare-server.ts', () => ({}));
  const stop = register(server.stop);
  try {
    await expectStatus(`${server.origin}/ping`, {}, 200, 'bare Hono GET /ping');
    return await loadScenario(config, server.child.pid!, 'ceiling', { url: `${server.origin}/ping` });
  } finally {
    await stop();
  }
}

const EMAIL = 'bench@example.com';

const PEER_DIR = 'scripts/bench/peer';

/**
 * Installs the peer's packages (scripts/bench/peer/package.json, its lockfile) on first use: they stay
 * out of the service's install, as better-sqlite3 compiles for minutes where no prebuilt binary can be
 * downloaded (docs/performance.md).
 */
function installPeer(): void {
  if (existsSync(join(ROOT, PEER_DIR, 'node_modules', 'better-auth', 'package.json'))) return;
  console.log(`Installing the reference peer's packages (npm ci --prefix ${PEER_DIR}; a few minutes the first time)`);
  execFileSync('npm', ['ci', '--prefix', PEER_DIR, '--no-audit', '--no-fund'], { cwd: ROOT, stdio: 'inherit' });
}

async function startPeer(cookieCache: boolean, password: string): Promise<PinnedServer> {
  installPeer();
  return startPinnedServer(`${PEER_DIR}/server.ts`, (dir) => ({
    BENCH_PEER_DB: join(dir, 'peer.db'),
    BENCH_PEER_EMAIL: EMAIL,
    BENCH_PEER_PASSWORD: password,
    BENCH_PEER_SECRET: randomBytes(32).toString('base64url'),
    BENCH_PEER_COOKIE_CACHE: cookieCache ? '1' : '0',
  }));
}

/** Signs in; returns the cookie header (every cookie set) and the bearer token. */
async function signIn(origin: string, password: string): Promise<{ cookie: string; bearer: string }> {
  const res = await expectStatus(
    `${origin}/api/auth/sign-in/email`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify({ email: EMAIL, password }),
    },
    200,
    'peer POST /api/auth/sign-in/email',
  );
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .join('; ');
  const bearer = res.headers.get('set-auth-token');
  if (!cookie.includes('session_token=') || !bearer)
    throw new ScenarioError('peer sign-in: no session cookie or set-auth-token in the answer');
  return { cookie, bearer };
}

/** get-session must answer a session, not `null` (an unauthenticated 200). */
async function expectSession(origin: string, headers: Record<string, string>, what: string): Promise<void> {
  const res = await expectStatus(`${origin}/api/auth/get-session`, { headers }, 200, what);
  const body = (await res.json()) as { session?: unknown } | null;
  if (!body?.session) throw new ScenarioError(`${what}: answered without a session`);
}

/** Runs the selected peer scenarios (two peer processes: without and with the cookie cache). */
export async function peerScenarios(
  config: BenchConfig,
  names: readonly string[],
  register: Register,
  report: Report,
): Promise<void> {
  const password = policyPassword();
  if (names.some((n) => n !== 'peer-cookie-cache')) {
    const peer = await startPeer(false, password);
    const stop = register(peer.stop);
    try {
      const pid = peer.child.pid!;
      const { cookie, bearer } = await signIn(peer.origin, password);
      const sessionUrl = `${peer.origin}/api/auth/get-session`;
      for (const name of names.filter((n) => n !== 'peer-cookie-cache')) {
        console.log(`> ${name}`);
        if (name === 'peer-login') {
          const body = JSON.stringify({ email: EMAIL, password });
          report(
            await loadScenario(config, pid, name, {
              url: `${peer.origin}/api/auth/sign-in/email`,
              method: 'POST',
              headers: { 'content-type': 'application/json', origin: peer.origin },
              body,
            }),
          );
        } else if (name === 'peer-cookie') {
          const only = cookie
            .split('; ')
            .filter((c) => c.includes('session_token='))
            .join('; ');
          await expectSession(peer.origin, { cookie: only }, 'peer get-session (cookie)');
          report(await loadScenario(config, pid, name, { url: sessionUrl, headers: { cookie: only } }));
        } else if (name === 'peer-bearer') {
          await expectSession(peer.origin, { authorization: `Bearer ${bearer}` }, 'peer get-session (Bearer)');
          report(
            await loadScenario(config, pid, name, { url: sessionUrl, headers: { authorization: `Bearer ${bearer}` } }),
          );
        }
      }
    } finally {
      await stop();
    }
  }
  if (names.includes('peer-cookie-cache')) {
    console.log('> peer-cookie-cache');
    const peer = await startPeer(true, password);
    const stop = register(peer.stop);
    try {
      const { cookie } = await signIn(peer.origin, password);
      if (!cookie.includes('session_data='))
        throw new ScenarioError('peer sign-in with cookieCache: no session_data cookie');
      await expectSession(peer.origin, { cookie }, 'peer get-session (cookie cache)');
      report(
        await loadScenario(config, peer.child.pid!, 'peer-cookie-cache', {
          url: `${peer.origin}/api/auth/get-session`,
          headers: { cookie },
        }),
      );
    } finally {
      await stop();
    }
  }
}
