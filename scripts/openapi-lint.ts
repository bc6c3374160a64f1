/**
 * Lints the OpenAPI description with Redocly CLI's recommended ruleset (redocly.yaml; run by
 * `npm run lint`). The document is built from the app as `GET /openapi.json` serves it, on the
 * default configuration, without a server, a database or the network: the dependencies below are
 * never called while the document is built.
 *
 *   npx tsx scripts/openapi-lint.ts [--keep]   (--keep: print where the document was written)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildApp } from '../worker/src/app.js';
import type { PasswordVerifier } from '../worker/src/auth/password-verifier.js';
import { ConfigService, parseEnvironment } from '../worker/src/config/index.js';
import type { Db } from '../worker/src/store/index.js';

const unused = (what: string) => () => {
  throw new Error(`building the OpenAPI document used ${what}`);
};

/** The served document of the default configuration (ROOT_PATH /api/auth and the rest). */
export function servedDocument(): unknown {
  const env = parseEnvironment({});
  const { apiDocument } = buildApp({
    db: unused('the database') as () => Db,
    config: new ConfigService({ env, load: unused('saved settings') }),
    clock: Date.now,
    hostName: 'openapi-lint',
    staticFiles: unused('static files'),
    verifier: {} as PasswordVerifier,
  });
  return apiDocument();
}

const repo = resolve(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
try {
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(servedDocument(), null, 2));
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
