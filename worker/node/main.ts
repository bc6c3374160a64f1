/**
 * `npm start`: the Node host. Reads the environment (and `.env`), refuses a bad configuration with
 * a message and exit code 1, honours RELOAD (tsx watch) and WORKERS (node:cluster), and stops
 * cleanly on SIGTERM/SIGINT.
 */
import cluster from 'node:cluster';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ConfigError, parseEnvironment } from '../src/config/index.js';
import { loadNodeEnv } from './env.js';
import { startEmbeddedBridge, type EmbeddedBridge } from './embedded-bridge.js';
import { assertPortFree, say } from './console.js';
import { bindAddress, openDatabase, prepareEmbedded, startNodeHost } from './host.js';
import { migrateDatabase } from './migrate.js';
import { keepSealingKey, type KeptSealingKey } from './sealing-key.js';

function fail(message: string): never {
  say('CRITICAL', message);
  process.exit(1);
}

async function main(): Promise<void> {
  const env = loadNodeEnv();
  let config: ReturnType<typeof parseEnvironment>;
  try {
    config = parseEnvironment(env);
  } catch (err) {
    if (err instanceof ConfigError) fail(`invalid configuration:\n${err.message}`);
    throw err;
  }

  if (config.get('RELOAD')) {
    // RELOAD: run this same entry under `tsx watch`, which restarts it when a source file changes.
    // The TypeScript entry also from the compiled host (dist/node/main.js, two folders deep as well).
    const tsxCli = createRequire(import.meta.url).resolve('tsx/cli');
    const entry = fileURLToPath(new URL('../../worker/node/main.ts', import.meta.url));
    const child = spawn(process.execPath, [tsxCli, 'watch', '--clear-screen=false', entry], {
      stdio: 'inherit',
      env: { ...process.env, AUTH_RELOAD: 'False' },
    });
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
    child.on('exit', (code) => process.exit(code ?? 0));
    return;
  }

  const workers = config.get('WORKERS');
  // The key that seals stored secrets, kept beside the database when none is configured (sealing-key.ts);
  // every process of a cluster reads the same file.
  let sealingKey: KeptSealingKey | undefined;
  try {
    sealingKey = keepSealingKey(config);
  } catch (err) {
    fail(`cannot start: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (sealingKey) env.AUTH_SECRETS_ENCRYPTION_KEY = sealingKey.key;
  if (!config.get('SESSION_SECRET_KEY') && (cluster.isPrimary || workers === 1)) {
    // Specification: generated at every start when unset; sessions may not survive a restart.
    env.SESSION_SECRET_KEY = randomBytes(32).toString('base64url');
    process.env.SESSION_SECRET_KEY = env.SESSION_SECRET_KEY;
    const why = 'SESSION_SECRET_KEY is not set: generated a key for this start; sessions will not survive a restart.';
    say('WARNING', `${why} Set SESSION_SECRET_KEY.`);
  }

  // The development bridge runs once (in the primary), and the workers reach it by its URL. The
  // service's port is checked first, so a second `npm start` stops with a plain message at once.
  let bridge: EmbeddedBridge | undefined;
  if (cluster.isPrimary) {
    try {
      await assertPortFree(config.get('BIND_PORT'), bindAddress(config), 'AUTH_BIND_PORT', 'the service');
    } catch (err) {
      fail(`cannot start: ${err instanceof Error ? err.message : String(err)}`);
    }
    try {
      bridge = await startEmbeddedBridge(config);
    } catch (err) {
      // The service runs without it (LDAP logins then answer 503); say why and how to fix it.
      const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
      const fix = 'Install openssl, or set AUTH_BRIDGE_URL, or AUTH_BRIDGE_EMBEDDED=False';
      say('WARNING', `no development bridge (LDAP logins will answer 503): ${why}. ${fix}`);
    }
    if (bridge) {
      env.AUTH_BRIDGE_URL = bridge.url;
      process.env.AUTH_BRIDGE_URL = bridge.url;
      const certs = config.get('BRIDGE_TLS_CERT');
      say('INFO', `development bridge on ${bridge.url} (mutual TLS, certificates beside ${certs})`);
    }
  }

  if (workers > 1 && cluster.isPrimary) {
    // The primary migrates once, then forks WORKERS processes that share the listening port.
    const database = openDatabase(config);
    if (database.embedded) {
      await prepareEmbedded(database.db);
      await migrateDatabase(database.db, config.get('DB_SCHEMA'));
    }
    database.close();
    for (let i = 0; i < workers; i++) cluster.fork();
    let stopping = false;
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      process.on(sig, () => {
        stopping = true;
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
      });
    }
    cluster.on('exit', () => {
      if (stopping && Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
    });
    return;
  }

  let host: Awaited<ReturnType<typeof startNodeHost>>;
  try {
    // With WORKERS > 1 every worker starts a host; one says what became of the first administrator.
    const announce = (cluster.worker?.id ?? 1) === 1;
    const migrate = workers > 1 ? false : undefined;
    const keptKey = sealingKey && { file: sealingKey.file, created: sealingKey.created };
    host = await startNodeHost({ env, migrate, announce, ...(keptKey ? { sealingKey: keptKey } : {}) });
  } catch (err) {
    fail(`cannot start: ${err instanceof Error ? err.message : String(err)}`);
  }
  const stop = () => {
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    void host
      .close()
      .then(() => bridge?.close())
      .then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

await main();
