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

let table: Map<number, string> | undefined;

/** The confusables table, decoded once per process (isolate) on first use. */
function prototypes(): Map<number, string> {
  if (table) return table;
  const map = new Map<number, string>();
  for (const entry of CONFUSABLES.split(' ')) {
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
