/**
 * Lints the OpenAPI description with Redocly CLI's recommended ruleset (redocly.yaml; run by
 * `npm run lint`). The document is generated as the build writes it for `GET /openapi.json`, on the
 * default configuration, without a server (scripts/openapi-document.ts).
 *
 *   npx tsx scripts/openapi-lint.ts [--keep]   (--keep: print where the document was written)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { generatedDocument } from './openapi-document.js';

const repo = resolve(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
try {
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(generatedDocument(), null, 2));
  if (process.argv.includes('--keep')) console.log(`document: ${file}`);
  // The CLI's own entry point, run by this Node: no npx lookup, no shell; no telemetry or update check.
  const cli = join(repo, 'node_modules/@redocly/cli/bin/cli.js');
  const run = spawnSync(process.execPath, [cli, 'lint', file, '--config', join(repo, 'redocly.yaml')], {
    cwd: repo,
    stdio: 'inherit',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  process.exitCode = run.status ?? 1;
} finally {
  if (!process.argv.includes('--keep')) rmSync(dir, { recursive: true, force: true });
}
