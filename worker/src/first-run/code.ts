/**
 * The first-run page's one-time code (docs/security.md, "First administrator"): a loopback client is not proof enough
 * that the person is on this machine (a reverse proxy there that adds no forwarding header makes
 * every client look local), so the form also asks for a code that only the service's terminal or
 * log shows, as Jupyter's token and Grafana's first run do. `npm start` issues a new one at each
 * start while no administrator exists, `npm run dev:edge` before it starts wrangler.
 *
 * Kept in service_meta (so every instance and isolate on the database sees the same code): the
 * SHA-256 of the code, never the code, and the number of tries. After FIRST_RUN_CODE_TRIES wrong
 * codes the code is used up: only a new start issues another. 100 random bits and 10 tries make a
 * guess hopeless; the count is taken before the comparison, so parallel guesses count too.
 */
import { eq, inArray, sql } from 'drizzle-orm';
import { constantTimeEqual } from '../passwords/hash/phc.js';
import type { Db } from '../store/index.js';
import { serviceMeta } from '../../../schema/index.js';

/** Wrong codes accepted before the code is used up. */
export const FIRST_RUN_CODE_TRIES = 10;

const CODE_KEY = 'first_run_code';
const TRIES_KEY = 'first_run_code_tries';
/** Crockford's base32: no I, L, O, U (nothing to misread); 20 characters are 100 bits. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const LENGTH = 20;

async function digest(code: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(code)));
}

const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');

/** What a person may type: case, spaces and dashes do not matter. */
function normalise(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '');
}

/**
 * Issues a new code (the previous one is void) with no try used, and returns it for the start
 * message, in groups of four.
 */
export async function issueFirstRunCode(db: Db): Promise<string> {
  const bytes = crypto.getRandomValues(new Uint8Array(LENGTH));
  // 256 is a multiple of 32: every character is equally likely.
  const code = [...bytes].map((b) => ALPHABET[b % ALPHABET.length]).join('');
  const hash = hex(await digest(code));
  const upsert = (key: string, value: string) =>
    db.insert(serviceMeta).values({ key, value }).onConflictDoUpdate({ target: serviceMeta.key, set: { value } });
  await db.batch([upsert(CODE_KEY, hash), upsert(TRIES_KEY, '0')]);
  return code.match(/.{4}/g)!.join('-');
}

/** The statements that remove the code (with the first administrator's creation). */
export function dropFirstRunCode(db: Db) {
  return db.delete(serviceMeta).where(inArray(serviceMeta.key, [CODE_KEY, TRIES_KEY]));
}

export type CodeCheck = 'right' | 'wrong' | 'used-up' | 'none';

/**
 * Checks a code typed into the form: 'none' when no code was issued, 'used-up' after too many
 * wrong ones, else whether it is the issued one (compared as hashes, in constant time). A try is
 * counted first; a right code clears the count.
 */
export async function checkFirstRunCode(db: Db, given: string): Promise<CodeCheck> {
  const [stored] = await db.select().from(serviceMeta).where(eq(serviceMeta.key, CODE_KEY));
  if (!stored) return 'none';
  const [counted] = await db
    .update(serviceMeta)
    .set({ value: sql`cast(cast(${serviceMeta.value} as integer) + 1 as text)` })
    .where(eq(serviceMeta.key, TRIES_KEY))
    .returning({ value: serviceMeta.value });
  if (!counted || Number(counted.value) > FIRST_RUN_CODE_TRIES) return 'used-up';
  const expected = new Uint8Array(stored.value.match(/../g)?.map((h) => Number.parseInt(h, 16)) ?? []);
  if (!constantTimeEqual(await digest(normalise(given)), expected)) return 'wrong';
  await db.update(serviceMeta).set({ value: '0' }).where(eq(serviceMeta.key, TRIES_KEY));
  return 'right';
}
