/**
 * The app's router: Hono's TrieRouter, with its matches remembered.
 *
 * Hono's fastest router (RegExpRouter) refuses our routes: a literal segment and a parameter at the
 * same place (`/v4/users/me/tokens/:tokenId` beside `/v4/users/:userId/...`, both fixed by the
 * specification) make its single regular expression ambiguous, so Hono falls back to the
 * TrieRouter, which splits the path and walks the trie on every request: about 3 % of an
 * authenticated request's CPU (architecture.md §6). A match depends on nothing but the method and the path
 * once the routes are added, so it is kept here, keyed by both, and handed out again (as Hono's
 * RegExpRouter hands out its static matches; Hono only reads them).
 *
 * Bounded: past MAX_REMEMBERED paths (ids in paths, or a client asking for many unknown paths) the
 * memory starts again empty, so it never grows and the paths in use come back at once; paths
 * longer than MAX_PATH (none of ours) are not kept.
 */
import type { Result, Router } from 'hono/router';
import { TrieRouter } from 'hono/router/trie-router';

const MAX_REMEMBERED = 1_000;
const MAX_PATH = 256;

export class RememberingRouter<T> implements Router<T> {
  readonly name = 'RememberingRouter (TrieRouter)';
  readonly #trie = new TrieRouter<T>();
  #remembered = new Map<string, Result<T>>();

  add(method: string, path: string, handler: T): void {
    // Routes are added before the first request; a late one would make remembered matches stale.
    this.#remembered.clear();
    this.#trie.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    const key = `${method} ${path}`;
    const known = this.#remembered.get(key);
    if (known) return known;
    const result = this.#trie.match(method, path);
    if (path.length > MAX_PATH) return result;
    if (this.#remembered.size >= MAX_REMEMBERED) this.#remembered = new Map();
    this.#remembered.set(key, result);
    return result;
  }
}
