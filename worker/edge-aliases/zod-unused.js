// The edge build's stand-in for two parts of zod the service never calls (wrangler.toml [alias],
// docs/performance.md, "The edge bundle"): z.compile (a code-generating fast path, which workerd's ban on
// eval would turn off anyway) and z.fromJSONSchema. zod re-exports both from its index, and their modules
// run code at the top level, so the bundler keeps them (about 43 KB) unless they are replaced. Called
// after all, they throw.
const unused = (name) => () => {
  throw new Error(`zod's ${name} is not part of the edge build`);
};
export const INVALID = Symbol.for('zod.compile.invalid');
export class ZodCompileAsyncError extends Error {}
export class ZodCompileUnsupportedError extends Error {}
export const compile = unused('compile');
export const withParser = unused('withParser');
export const compileFn = unused('compileFn');
export const fromJSONSchema = unused('fromJSONSchema');
