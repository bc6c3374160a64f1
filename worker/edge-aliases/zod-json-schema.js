// The edge build's stand-in for zod's JSON Schema generation (wrangler.toml [alias], docs/performance.md,
// "The edge bundle"): json-schema-processors.js, to-json-schema.js and json-schema-generator.js. Only the
// OpenAPI document needs JSON Schema, and the edge host serves the one written at build time; every
// zod schema type refers to its processor, so the bundler kept all three modules (about 8 KiB gzipped)
// unless they are replaced. Called after all, each throws.
const unused = (name) => () => {
  throw new Error(`zod's ${name} (JSON Schema) is not part of the edge build`);
};
export const aggregateChecks = unused('aggregateChecks');
export const anyProcessor = unused('anyProcessor');
export const arrayProcessor = unused('arrayProcessor');
export const bigintProcessor = unused('bigintProcessor');
export const booleanProcessor = unused('booleanProcessor');
export const catchProcessor = unused('catchProcessor');
export const customProcessor = unused('customProcessor');
export const dateProcessor = unused('dateProcessor');
export const defaultProcessor = unused('defaultProcessor');
export const enumProcessor = unused('enumProcessor');
export const fileProcessor = unused('fileProcessor');
export const functionProcessor = unused('functionProcessor');
export const intersectionProcessor = unused('intersectionProcessor');
export const lazyProcessor = unused('lazyProcessor');
export const literalProcessor = unused('literalProcessor');
export const mapProcessor = unused('mapProcessor');
export const nanProcessor = unused('nanProcessor');
export const neverProcessor = unused('neverProcessor');
export const nonoptionalProcessor = unused('nonoptionalProcessor');
export const nullProcessor = unused('nullProcessor');
export const nullableProcessor = unused('nullableProcessor');
export const numberProcessor = unused('numberProcessor');
export const objectProcessor = unused('objectProcessor');
export const optionalProcessor = unused('optionalProcessor');
export const pipeProcessor = unused('pipeProcessor');
export const prefaultProcessor = unused('prefaultProcessor');
export const promiseProcessor = unused('promiseProcessor');
export const readonlyProcessor = unused('readonlyProcessor');
export const recordProcessor = unused('recordProcessor');
export const setProcessor = unused('setProcessor');
export const stringProcessor = unused('stringProcessor');
export const successProcessor = unused('successProcessor');
export const symbolProcessor = unused('symbolProcessor');
export const templateLiteralProcessor = unused('templateLiteralProcessor');
export const toJSONSchema = unused('toJSONSchema');
export const transformProcessor = unused('transformProcessor');
export const tupleProcessor = unused('tupleProcessor');
export const undefinedProcessor = unused('undefinedProcessor');
export const unionProcessor = unused('unionProcessor');
export const unknownProcessor = unused('unknownProcessor');
export const voidProcessor = unused('voidProcessor');
export const extractDefs = unused('extractDefs');
export const finalize = unused('finalize');
export const handleUnrepresentable = unused('handleUnrepresentable');
export const initializeContext = unused('initializeContext');
export const process = unused('process');
export const processSchema = unused('processSchema');
export const allProcessors = {};
// Made when a schema is built (its toJSONSchema method, its Standard Schema JSON Schema): a function
// that throws when called.
export const createToJSONSchemaMethod = () => unused('toJSONSchema');
export const createStandardJSONSchemaMethod = () => unused('~standard.jsonSchema');
export class JSONSchemaGenerator {
  constructor() {
    unused('JSONSchemaGenerator')();
  }
}
