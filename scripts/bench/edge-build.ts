/** The edge script as `wrangler deploy` would upload it (far-db's bundle size, edge-start's modules). */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT } from './node-host.js';
import { ScenarioError } from './scenarios.js';

/**
 * Builds the edge script into `out` (`wrangler deploy --dry-run --outdir`, as test/unit/bundle-size.test.ts
 * does): the script, its WebAssembly module and their source maps. Returns the upload's size as wrangler
 * reports it (KiB, and KiB gzipped).
 */
export async function buildEdgeScript(out: string): Promise<{ totalKiB: number; gzipKiB: number }> {
  const { stdout } = await promisify(execFile)('npx', ['wrangler', 'deploy', '--dry-run', '--outdir', out], {
    cwd: ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
    maxBuffer: 16 << 20,
  });
  const m = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(stdout);
  if (!m) throw new ScenarioError(`wrangler deploy --dry-run: no "Total Upload" line in\n${stdout.slice(-500)}`);
  return { totalKiB: Number(m[1]), gzipKiB: Number(m[2]) };
}
