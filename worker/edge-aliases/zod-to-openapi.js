// The edge build's stand-in for @asteasolutions/zod-to-openapi (wrangler.toml [alias], docs/performance.md,
// "The edge bundle"). The edge host serves the OpenAPI document written at build time
// (STATIC_DIR/openapi/openapi.json, worker/src/docs/served-document.ts) instead of generating it, so the
// script needs neither the generator nor the metadata each `.openapi()` call would attach: here
// `.openapi()` returns the schema itself (validation is zod's and unchanged), the registry keeps
// nothing, and generating a document throws.
export function extendZodWithOpenApi(zod) {
  if (typeof zod.ZodType.prototype.openapi !== 'undefined') return;
  zod.ZodType.prototype.openapi = function openapi() {
    return this;
  };
}

export class OpenAPIRegistry {
  definitions = [];
  register(_refId, schema) {
    return schema;
  }
  registerParameter(_refId, schema) {
    return schema;
  }
  registerPath() {}
  registerWebhook() {}
  registerComponent(_type, name, component) {
    return { name, ref: { $ref: `#/components/${_type}/${name}` }, component };
  }
}

class NoGenerator {
  generateDocument() {
    throw new Error('the edge build does not generate the OpenAPI document; it serves the one written at build time');
  }
}
export class OpenApiGeneratorV3 extends NoGenerator {}
export class OpenApiGeneratorV31 extends NoGenerator {}
export class OpenApiGeneratorV32 extends NoGenerator {}
export const getOpenApiMetadata = () => ({});
export const getRefId = () => undefined;
export const zodToOpenAPIRegistry = undefined;
