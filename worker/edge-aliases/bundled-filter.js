// The edge build's stand-in for the bundled password filter's data (wrangler.toml [alias],
// docs/performance.md, "The edge bundle"): its 140 KB of incompressible bits are a static asset
// (STATIC_DIR/blocklist/common-passwords.pwbf, written by scripts/build-console.mjs) that the edge
// host fetches once per isolate (worker/src/index.ts) instead of parsing them with the script.
export const BUNDLED_FILTER_BASE64 = '';
