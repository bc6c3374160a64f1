/** The Node host's environment: the real environment over the values of a `.env` file. */
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';

/** Reads `.env` (if present) under `process.env`: a real environment variable wins over the file. */
export function loadNodeEnv(path = '.env', env: NodeJS.ProcessEnv = process.env): Record<string, string | undefined> {
  const fromFile = existsSync(path) ? parseEnv(readFileSync(path, 'utf8')) : {};
  return { ...fromFile, ...env };
}
