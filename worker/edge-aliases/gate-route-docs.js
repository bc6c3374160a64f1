// The edge build's stand-in for worker/src/gate/gate-route-docs.ts (wrangler.toml [alias], docs/performance.md,
// "The edge bundle"): the edge host serves the OpenAPI document written at build time, so the gate's route
// summaries and descriptions are never read there; every one is the empty string.
export const GATE_DOCS = new Proxy({}, { get: () => '' });
