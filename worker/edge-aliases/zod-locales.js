// The edge build's stand-in for zod's locale index (wrangler.toml [alias], docs/performance.md, "The
// edge bundle"): the service answers in its own words and uses zod's English messages only, so the
// other 60-odd locales (about a quarter of zod's bytes in the script) are not bundled.
export { default as en } from 'zod/v4/locales/en.js';
