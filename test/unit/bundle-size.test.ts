/**
 * The edge script's size (docs/performance.md, "The edge bundle"): the dry-run build that `wrangler deploy`
 * would upload (script and WASM module), gzipped as wrangler reports it, stays under a ceiling, so that a new
 * dependency or bundled data that would slow every isolate's start is seen when it lands. The ceiling is the
 * size reached so far with a small margin; the target (250 KiB) is not met yet, and the ceiling is lowered
 * as the bundle shrinks.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/** KiB, gzipped, of the whole upload. */
const CEILING_KIB = 470;

describe('the edge bundle', () => {
  it(`gzipped, stays at most ${CEILING_KIB} KiB, without zod's other locales or the password filter's ` +
    `data`, async () => {
    const out = mkdtempSync(join(tmpdir(), 'edge-bundle-'));
    try {
      const { stdout } = await promisify(execFile)(
        'npx',
        ['wrangler', 'deploy', '--dry-run', '--outdir', out, '--metafile', join(out, 'meta.json')],
        { env: { ...process.env, WRANGLER_SEND_METRICS: 'false' }, maxBuffer: 16 << 20 },
      );
      const m = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(stdout);
      expect(m, stdout).not.toBeNull();
      expect(Number(m![2])).toBeLessThanOrEqual(CEILING_KIB);
      const { readFileSync } = await import('node:fs');
      const inputs = Object.keys(
        (JSON.parse(readFileSync(join(out, 'meta.json'), 'utf8')) as { inputs: object }).inputs,
      );
      expect(inputs.filter((f) => /zod\/v4\/locales\/(?!en\.js)/.test(f))).toEqual([]);
      expect(inputs.filter((f) => f.endsWith('blocklist/bundled-filter.ts'))).toEqual([]);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 300_000);
});
