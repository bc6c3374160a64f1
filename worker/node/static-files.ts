/** STATIC_DIR served from the file system (the edge host serves the same directory as Workers assets). */
import { readFile } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import type { StaticFiles } from '../src/http/context.js';

/** Serves files below `dir`; anything resolving outside it, or missing, is null. */
export function nodeStaticFiles(dir: string): StaticFiles {
  const base = resolve(dir);
  return async (rel) => {
    const full = resolve(base, rel);
    if (!full.startsWith(base + sep)) return null;
    try {
      return new Response(await readFile(full));
    } catch {
      return null;
    }
  };
}
