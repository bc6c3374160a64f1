// The edge build's stand-in for @libsql/client's WebSocket client (wrangler.toml [alias], docs/performance.md,
// "The edge bundle"): the edge speaks libSQL over HTTP (its client expands `libsql:` URLs to `https:`), so
// the WebSocket transport and the hrana WebSocket protocol (about 12 KB) would only be carried. A `wss:` or
// `ws:` LIBSQL_URL is refused with a message saying what to use instead.
export function _createClient() {
  throw new Error(
    'LIBSQL_URL: the edge reaches libSQL over HTTP; use a libsql://, https:// or http:// URL, not ws:// or wss://',
  );
}
