// The edge build's stand-in for worker/src/settings/settings-api-words.ts (wrangler.toml [alias], docs/performance.md,
// "The edge bundle"): the words of the API description, which the edge never generates (it serves the document
// written at build time). Every summary and description is empty here.
export const W = new Proxy({}, { get: () => '' });
