/**
 * `npm run ops -- <command>`: the operator command. Works on the database of LIBSQL_URL (and
 * LIBSQL_AUTH_TOKEN) directly, from the environment or `.env` as the Node host reads them: the
 * Node host's file, or a remote libSQL (sqld, Turso) such as the edge host's. Every use is audited
 * (audit_outbox, actor "operator"). Passwords are read from a prompt (a terminal, without echo) or
 * from the first line of stdin, never from the command line.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createNodeNativeHasher } from '../worker/node/native-hasher.js';
import { ConfigError, ConfigService, parseEnvironment } from '../worker/src/config/index.js';
import { ProblemError } from '../worker/src/http/problem.js';
import { scopeWithoutRequest } from '../worker/src/http/scope.js';
import { createPasswordVerifier } from '../worker/src/passwords/verifier.js';
import {
  createAdministrator,
  listAdministrators,
  removeFactorsOf,
  resetPasswordOf,
  unblockLogin,
  unlockLogin,
  type AccountState,
  type OperatorScope,
} from '../worker/src/ops/commands.js';
import { loadSavedSettings, readMeta, SCHEMA_STAMP_KEY } from '../worker/src/store/index.js';
import { loadNodeEnv } from '../worker/node/env.js';
import { loadOperatorBlocklist } from '../worker/node/blocklist.js';
import { openDatabase, prepareEmbedded } from '../worker/node/host.js';
import { readPassword } from './ops-password.js';

const USAGE = `usage: npm run ops -- <command> [login]

  list-admins                  the administrators: status, lock, must-change-password, last login
  unlock <login>               end a failed-login lock (AUTH_FAILED_COUNT failures)
  unblock <login>              unblock an account blocked by an administrator or by inactivity
  reset-password <login>       set a new password (policy-checked); it must be changed at the next login
  create-admin <login> [--must-change]
                               create another administrator (local account)
  remove-factors <login>       remove every second factor and recovery code of an account (a lost
                               authenticator; docs/security-mfa.md); its sessions end, the user is mailed

The database is LIBSQL_URL (default file:data/auth.db) with LIBSQL_AUTH_TOKEN, from the environment
or .env. New passwords are typed at a prompt, or read from the first line of stdin
(e.g. printf '%s\\n' 'N3w@pass' | npm run ops -- reset-password admin); never from the command line.
Every use is written to the audit log (actor "operator").`;

class UsageError extends Error {}

const iso = (ms: number | null) => (ms === null ? 'never' : new Date(ms).toISOString());

/** One line per account, for a person. */
function describe(a: AccountState): string {
  const status = a.status === 'active' ? 'active' : `blocked (${a.blockedReason ?? 'admin'})`;
  const lock = a.lockedUntil === null ? 'not locked' : `locked until ${iso(a.lockedUntil)}`;
  const change = a.mustChangePassword ? ', must change the password at the next login' : '';
  return `${a.login} [${a.role}, ${a.source}]: ${status}, ${lock}${change}; last login ${iso(a.lastLoginAt)}`;
}

/** What else the account needs before its owner can log in. */
function hints(a: AccountState): string[] {
  const out: string[] = [];
  if (a.lockedUntil !== null) out.push(`still locked: npm run ops -- unlock ${a.login}`);
  if (a.status === 'blocked') out.push(`still blocked: npm run ops -- unblock ${a.login}`);
  return out;
}

function parseArgs(argv: string[]): { command: string; login?: string; mustChange: boolean } {
  const flags = argv.filter((a) => a.startsWith('-'));
  const words = argv.filter((a) => !a.startsWith('-'));
  const unknown = flags.filter((f) => f !== '--must-change');
  if (flags.some((f) => /^--?p(ass(word)?)?(=|$)/i.test(f)) || words.length > 2) {
    throw new UsageError(
      'the password is never taken from the command line (it would stay in the shell history and the process list): ' +
        'type it at the prompt, or pipe it on stdin',
    );
  }
  if (unknown.length > 0) throw new UsageError(`unknown option ${unknown[0]}`);
  const [command, login] = words;
  if (!command) throw new UsageError('name a command');
  return { command, login, mustChange: flags.includes('--must-change') };
}

function needLogin(login: string | undefined, command: string): string {
  if (!login) throw new UsageError(`${command} needs a login`);
  return login;
}

/** A file: database must exist: the command never creates an empty one. */
function assertDatabaseExists(url: string): void {
  if (!url.startsWith('file:')) return;
  const path = url.startsWith('file://') ? fileURLToPath(url) : url.slice('file:'.length).split('?')[0]!;
  if (!existsSync(path)) {
    throw new Error(`no database at ${path} (LIBSQL_URL=${url}): run it beside the service's database, or set it`);
  }
}

async function run(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  if (args.command === 'help' || args.command === '--help') {
    console.log(USAGE);
    return;
  }
  const env = parseEnvironment(loadNodeEnv());
  loadOperatorBlocklist(env);
  assertDatabaseExists(env.get('LIBSQL_URL'));
  const database = openDatabase(env);
  try {
    if (database.embedded) await prepareEmbedded(database.db);
    const stamp = await readMeta(database.db, SCHEMA_STAMP_KEY).catch(() => undefined);
    const schema = env.get('DB_SCHEMA');
    if (stamp === undefined) throw new Error('the database is not migrated: start the service, or npm run db:migrate');
    if (stamp !== schema) throw new Error(`the database is DB_SCHEMA "${stamp}"'s, not "${schema}"'s (AUTH_DB_SCHEMA)`);
    // The effective configuration (saved settings included), so the password policy is the service's.
    const config = await new ConfigService({ env, load: () => loadSavedSettings(database.db), ttlMs: 0 }).current();
    const verifier = createPasswordVerifier(createNodeNativeHasher());
    const scope: OperatorScope = { ...scopeWithoutRequest({ db: database.db, config, now: Date.now }), verifier };
    const print = (verb: string, a: AccountState) => {
      console.log(`${verb}: ${describe(a)}`);
      for (const h of hints(a)) console.log(`  ${h}`);
    };
    switch (args.command) {
      case 'list-admins': {
        const admins = await listAdministrators(scope);
        if (admins.length === 0) console.log('no administrator: npm run ops -- create-admin <login>');
        for (const a of admins) console.log(describe(a));
        return;
      }
      case 'unlock':
        return print('unlocked', await unlockLogin(scope, needLogin(args.login, args.command)));
      case 'unblock':
        return print('unblocked', await unblockLogin(scope, needLogin(args.login, args.command)));
      case 'remove-factors': {
        const login = needLogin(args.login, args.command);
        const removed = await removeFactorsOf(scope, login);
        console.log(`${login}: ${removed} second-factor record(s) removed; the password alone logs in now`);
        return;
      }
      case 'reset-password': {
        const login = needLogin(args.login, args.command);
        const password = await readPassword(`new password for ${login}`);
        return print('password reset', await resetPasswordOf(scope, login, password));
      }
      case 'create-admin': {
        const login = needLogin(args.login, args.command);
        const password = await readPassword(`password of the new administrator ${login}`);
        const o = { mustChange: args.mustChange };
        const created = await createAdministrator(scope, login, password, o);
        return print('created administrator', created);
      }
      default:
        throw new UsageError(`unknown command "${args.command}"`);
    }
  } finally {
    database.close();
  }
}

try {
  await run(process.argv.slice(2));
} catch (err) {
  if (err instanceof UsageError) {
    console.error(`ops: ${err.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (err instanceof ProblemError) {
    const violations = (err.extensions.violations ?? []) as { message: string }[];
    const why = violations.length > 0 ? 'the password is refused by the password policy' : (err.detail ?? err.title);
    console.error(`ops: ${why}`);
    for (const v of violations) console.error(`  - ${v.message}`);
  } else if (err instanceof ConfigError) {
    console.error(
      `ops: invalid configuration:\n${err.message
        .split('\n')
        .map((l) => `  ${l}`)
        .join('\n')}`,
    );
  } else {
    console.error(`ops: ${err instanceof Error ? err.message : String(err)}`);
  }
  process.exit(1);
}
