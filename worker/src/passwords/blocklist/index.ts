/**
 * The password blocklist a host checks new passwords against (docs/security.md, "Password blocklist"): the bundled
 * filter of common passwords, plus the operator's filter when the host loaded one at start
 * (AUTH_PASSWORD_BLOCKLIST_FILE). One per process (Node) or isolate (edge), like the bundled code itself.
 */
import { BUNDLED_FILTER_BASE64 } from './bundled-filter.js';
import { BloomFilter, fromBase64, type PasswordSet } from './filter.js';

export { BloomFilter, type PasswordSet } from './filter.js';

let bundled: BloomFilter | undefined;
let operator: BloomFilter | undefined;

/**
 * The bundled filter, decoded at its first use (about 0.1 ms per lookup after that). The edge's script
 * carries no data (wrangler.toml [alias]): there the host installs the static asset first
 * (`useBundledBlocklist`); without either, every check throws rather than let a common password through.
 */
export function bundledBlocklist(): BloomFilter {
  if (!bundled && BUNDLED_FILTER_BASE64.length === 0)
    throw new Error('the bundled password blocklist is not loaded (edge: STATIC_DIR/' + BUNDLED_ASSET + ')');
  bundled ??= new BloomFilter(fromBase64(BUNDLED_FILTER_BASE64));
  return bundled;
}

/** Where the edge finds the bundled filter in the static assets (scripts/build-console.mjs writes it). */
export const BUNDLED_ASSET = 'blocklist/common-passwords.pwbf';

/** Installs the bundled filter from its bytes (the edge, from the static asset); they are checked. */
export function useBundledBlocklist(bytes: Uint8Array): BloomFilter {
  bundled = new BloomFilter(bytes);
  return bundled;
}

/** Whether the bundled filter still has to be installed (the edge's script carries no data). */
export const bundledBlocklistMissing = (): boolean => !bundled && BUNDLED_FILTER_BASE64.length === 0;

/** Installs the operator's filter (the host, at start; `undefined` removes it); its bytes are checked. */
export function useOperatorBlocklist(bytes: Uint8Array | undefined): BloomFilter | undefined {
  operator = bytes === undefined ? undefined : new BloomFilter(bytes);
  return operator;
}

/** The bundled list and the operator's, as one set. */
export const passwordBlocklist: PasswordSet = {
  has: (password) => bundledBlocklist().has(password) || (operator?.has(password) ?? false),
};

/** What a host says at start about the operator's filter. */
export function describeBlocklist(filter: BloomFilter | undefined, path: string): string | undefined {
  if (!filter) return undefined;
  const rate = filter.falsePositiveRate.toExponential(1);
  return `password blocklist ${path}: ${filter.n} passwords, ${filter.bytes.length} bytes, false-positive rate ${rate}`;
}

/**
 * The file extension of a compiled filter; the static-file route never serves one (docs/security.md, "Password
 * blocklist").
 */
export const FILTER_EXTENSION = '.pwbf';

/**
 * The edge's view of AUTH_PASSWORD_BLOCKLIST_FILE: the path of the filter inside the static assets
 * (STATIC_DIR, deployed with the worker), so that one value serves both hosts; an error when it lies outside.
 */
export function assetPathOf(file: string, staticDir: string): string {
  const strip = (p: string) => p.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
  const dir = `${strip(staticDir)}/`;
  const path = strip(file);
  if (!path.startsWith(dir) || path.length === dir.length)
    throw new Error(`the edge reads it from the static assets: it must lie in STATIC_DIR (${staticDir})`);
  return path.slice(dir.length);
}
