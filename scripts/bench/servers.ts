/**
 * The other servers of the comparison, started like the host under test (`node --import tsx`,
 * pinned to HOST_CORE, loopback, a free port): the bare Hono route (the ceiling) and the reference
 * peer (better-auth). Each prints `LISTENING <port>` when it accepts connections.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../../test/harness/hosts.js';
import { HOST_CORE, ROOT } from './node-host.js';
import { captureOutput, exited, spawnPinned, stopProcess, tail } from './processes.js';

export interface PinnedServer {
  /** e.g. http://127.0.0.1:40123 */
  origin: string;
  child: ChildProcess;
  /** a temporary folder of this server, removed by stop() */
  dir: string;
  output(): string;
  stop(): Promise<void>;
}

/** Starts `script` (a path below the project) pinned to HOST_CORE on BENCH_PORT; resolves once it listens. */
export async function startPinnedServer(
  script: string,
  env: (dir: string) => Record<string, string>,
  timeoutMs = 60_000,
): Promise<PinnedServer> {
  const dir = mkdtempSync(join(tmpdir(), 'auth-bench-server-'));
  const port = await freePort();
  const child = spawnPinned(HOST_CORE, process.execPath, ['--import', 'tsx', resolve(ROOT, script)], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      BENCH_PORT: String(port),
      ...env(dir),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = captureOutput(child);
  const stop = async () => {
    await stopProcess(child);
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const m = /^LISTENING (\d+)$/m.exec(output());
    if (m) return { origin: `http://127.0.0.1:${m[1]}`, child, dir, output, stop };
    if (exited(child)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`${script} did not start within ${timeoutMs} ms:\n${tail(output())}`);
}
