/**
 * The sealing key of the quick start (docs/operations.md, "Keys the Node host keeps"): without
 * AUTH_SECRETS_ENCRYPTION_KEY and SESSION_SECRET_KEY, the Node host generates the key that seals
 * stored secrets (TOTP secrets, LDAP bind passwords, OIDC client secrets, the mail password) once
 * and keeps it in `secrets.key` in the data folder, beside the database, so what was sealed at one
 * start opens at the next. A key generated for each start would leave every sealed value unreadable
 * after a restart.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { ConfigSnapshot } from '../src/config/index.js';
import { dataFolder, inMemoryDatabase } from './data-folder.js';

/** The name of the kept key's file in the data folder. */
export const SEALING_KEY_FILE = 'secrets.key';

/** A kept key, its file and whether this start wrote it. */
export interface KeptSealingKey {
  key: string;
  file: string;
  created: boolean;
}

/** What a kept key looks like: 32 random bytes as base64url (43 characters). */
const KEY_FORM = /^[A-Za-z0-9_-]{43}$/;

/** Thrown when the key file exists but cannot be used; the message says what to do. */
export class SealingKeyError extends Error {
  override name = 'SealingKeyError';
}

/** The path to show a person: relative to the working directory when inside it. */
export function shownPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel !== '' && !rel.startsWith('..') ? rel : file;
}

function readKept(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new SealingKeyError(
      `cannot read the sealing key ${shownPath(file)} (${code}): the stored secrets cannot be opened without it. ` +
        "Give the service's user read access to it, or set AUTH_SECRETS_ENCRYPTION_KEY to its content",
    );
  }
  const key = text.trim();
  if (!KEY_FORM.test(key))
    throw new SealingKeyError(
      `the sealing key ${shownPath(file)} is malformed (expected 43 base64url characters, as the service writes it): ` +
        'restore it from the backup of the data folder; removing it makes the stored secrets unreadable',
    );
  return key;
}

/**
 * The kept sealing key when one is needed: AUTH_SECRETS_ENCRYPTION_KEY unset and either a kept file
 * exists or SESSION_SECRET_KEY is unset too (with SESSION_SECRET_KEY set, secrets are sealed with it,
 * as before). Created atomically with mode 0600 (a second process starting at once reads the first's
 * file); undefined for an in-memory database, whose secrets end with the process anyway.
 */
export function keepSealingKey(config: ConfigSnapshot): KeptSealingKey | undefined {
  if (config.get('SECRETS_ENCRYPTION_KEY') !== '' || inMemoryDatabase(config)) return undefined;
  const folder = dataFolder(config);
  const file = join(folder, SEALING_KEY_FILE);
  const exists = (() => {
    try {
      statSync(file);
      return true;
    } catch {
      return false;
    }
  })();
  if (exists) return { key: readKept(file), file, created: false };
  if (config.get('SESSION_SECRET_KEY') !== '') return undefined;
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const key = randomBytes(32).toString('base64url');
  // Written whole under another name, then linked into place: a reader never sees half a key, and
  // the link fails rather than replace a key another process kept meanwhile.
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, `${key}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(partial, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return { key: readKept(file), file, created: false };
  } finally {
    rmSync(partial, { force: true });
  }
  return { key, file, created: true };
}
