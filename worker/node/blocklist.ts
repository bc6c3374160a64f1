/**
 * The Node side of the operator's password blocklist (docs/security.md, "Password blocklist"): the filter file
 * named by AUTH_PASSWORD_BLOCKLIST_FILE, read once at start (the host, `npm run ops`, the bootstrap script).
 * A file that cannot be read or is not a filter stops the start: a blocklist silently missing would let
 * through what the operator meant to refuse.
 */
import { readFileSync } from 'node:fs';
import { type BloomFilter, useOperatorBlocklist } from '../src/passwords/blocklist/index.js';
import type { ConfigSnapshot } from '../src/config/index.js';

/** Installs the operator's filter of `config` (or none); returns it. Throws naming the variable. */
export function loadOperatorBlocklist(config: ConfigSnapshot): BloomFilter | undefined {
  const path = config.get('PASSWORD_BLOCKLIST_FILE');
  if (path === '') return useOperatorBlocklist(undefined);
  try {
    return useOperatorBlocklist(new Uint8Array(readFileSync(path)));
  } catch (err) {
    throw new Error(`AUTH_PASSWORD_BLOCKLIST_FILE (${path}): ${err instanceof Error ? err.message : String(err)}`);
  }
}
