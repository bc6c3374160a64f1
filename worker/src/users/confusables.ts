/**
 * The confusable skeleton of a login (docs/security.md, "Look-alike logins"): two logins with the same
 * skeleton look alike (`admin`, `аdmin` with a Cyrillic а), whatever their keys. Unicode TR #39's
 * skeleton (NFD, each character mapped to its prototype by confusables.txt, NFD) of the login key,
 * case-folded again with the key's folding since confusables.txt's prototypes keep their case
 * (`ᴢ` maps to `z` but `0` to `O`), and mapped again until it no longer changes. Computed when an
 * account is created and for the reservation of deleted logins, never on a login: logins still
 * match by their key.
 */
import { CONFUSABLES } from './confusables-data.js';
import { loginKey } from '../accounts/login-name.js';

let source = CONFUSABLES;
let table: Map<number, string> | undefined;

/**
 * Where the edge finds the table in the static assets (scripts/build-console.mjs writes it): the edge's
 * script carries no data (wrangler.toml [alias]; docs/performance.md, "The edge bundle").
 */
export const CONFUSABLES_ASSET = 'unicode/confusables.txt';

/** Whether the table still has to be installed (the edge's script carries none). */
export const confusablesMissing = (): boolean => source.length === 0;

/** Installs the table from the static asset's text (entries `source:prototype`, as in confusables-data.ts). */
export function useConfusables(text: string): void {
  if (!/^[0-9a-f]+:[0-9a-f.]+ /.test(text)) throw new Error('not a confusables table');
  source = text;
  table = undefined;
}

/**
 * The confusables table, decoded once per process (isolate) on first use; without it (an edge isolate
 * that could not fetch its asset) a skeleton throws rather than let a look-alike login through.
 */
function prototypes(): Map<number, string> {
  if (table) return table;
  if (source.length === 0)
    throw new Error(`the confusables table is not loaded (edge: STATIC_DIR/${CONFUSABLES_ASSET})`);
  const map = new Map<number, string>();
  for (const entry of source.split(' ')) {
    if (!entry) continue;
    const [from, to] = entry.split(':') as [string, string];
    const text = String.fromCodePoint(...to.split('.').map((h) => Number.parseInt(h, 16)));
    map.set(Number.parseInt(from, 16), text);
  }
  table = map;
  return map;
}

/** UTS #39 skeleton(X): NFD, every code point replaced by its prototype, NFD again. */
export function skeleton(text: string): string {
  const map = prototypes();
  let out = '';
  for (const ch of text.normalize('NFD')) out += map.get(ch.codePointAt(0)!) ?? ch;
  return out.normalize('NFD');
}

/** The skeleton that makes logins unique among live accounts and the reservations of deleted ones. */
export function loginSkeleton(login: string): string {
  let current = loginKey(login);
  for (let round = 0; round < 4; round += 1) {
    const next = loginKey(skeleton(current));
    if (next === current) break;
    current = next;
  }
  return current;
}
