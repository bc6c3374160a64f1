/**
 * The password blocklist a host checks new passwords against (README, "Password blocklist"): the bundled
 * filter of common passwords, plus the operator's filter when the host loaded one at start
 * (AUTH_PASSWORD_BLOCKLIST_FILE). One per process (Node) or isolate (edge), like the bundled code itself.
 */
import { BUNDLED_FILTER_BASE64 } from './bundled-filter.js';
import { BloomFilter, fromBase64, type PasswordSet } from './filter.js';

export { BloomFilter, type PasswordSet } from './filter.js';

let bundled: BloomFilter | undefined;
let operator: BloomFilter | undefined;

/** The bundled filter, decoded at its first use (about 0.1 ms per lookup after that). */
export function bundledBlocklist(): BloomFilter {
  bundled ??= new BloomFilter(fromBase64(BUNDLED_FILTER_BASE64));
  return bundled;
}

/** Installs the operator's filter (the host, at start; `undefined` removes it); its bytes are checked. */
export function useOperatorBlocklist(bytes: Uint8Array | undefined): BloomFilter | undefined {
  operator = bytes === undefined ? undefined : new BloomFilter(bytes);
  return operator;
}

/** The bundled list and the operator's, as one set. */
export const passwordBlocklist: PasswordSet = {
  has: (password) => bundledBlocklist().has(password) || (operator?.has(password) ?? false),
};
