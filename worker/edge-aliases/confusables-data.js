// The edge build's stand-in for the confusables table (wrangler.toml [alias], docs/performance.md,
// "The edge bundle"): its 70 KB are a static asset (STATIC_DIR/unicode/confusables.txt, written by
// scripts/build-console.mjs from the generated module the Node host imports) that the edge host fetches
// once per isolate (worker/src/index.ts) instead of parsing them with the script.
export const CONFUSABLES_VERSION = '';
export const CONFUSABLES = '';
