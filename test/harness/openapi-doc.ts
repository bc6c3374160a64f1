/**
 * Reading the served OpenAPI description in tests: its operations, every JSON Schema in it with
 * the examples, defaults and patterns they carry, and a JSON Schema 2020-12 validator (ajv) that
 * resolves the document's `#/components/schemas/...` references.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface Operation {
  method: string;
  path: string;
  op: JsonObject;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Every operation of the document. */
export function operationsOf(doc: JsonObject): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as JsonObject)) {
    for (const [method, op] of Object.entries(item as JsonObject)) {
      if (METHODS.includes(method)) out.push({ method, path, op: op as JsonObject });
    }
  }
  return out;
}

/** An operation's response for a status, with a `$ref` to components.responses resolved. */
export function responseOf(doc: JsonObject, op: JsonObject, status: number): JsonObject | undefined {
  const entry = (op.responses as JsonObject)[String(status)] as JsonObject | undefined;
  if (!entry || typeof entry.$ref !== 'string') return entry;
  const name = entry.$ref.replace('#/components/responses/', '');
  return ((doc.components as JsonObject).responses as JsonObject)[name] as JsonObject;
}

/** A schema somewhere in the document, with a readable location. */
export interface SchemaSite {
  where: string;
  schema: JsonObject;
  /** Inside another schema of the list (compiled with it). */
  nested: boolean;
}

const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'dependentSchemas'];
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SUBSCHEMAS = ['items', 'additionalProperties', 'not', 'contains', 'if', 'then', 'else', 'propertyNames'];

/** The schema and every schema nested in it (by keyword: a property named `example` is no example). */
function nestedSchemas(schema: JsonObject, where: string, out: SchemaSite[], nested = false): void {
  out.push({ where, schema, nested });
  for (const k of SUBSCHEMA_MAPS) {
    for (const [name, sub] of Object.entries((schema[k] as JsonObject | undefined) ?? {}))
      nestedSchemas(sub as JsonObject, `${where}.${k}.${name}`, out, true);
  }
  for (const k of SUBSCHEMA_LISTS)
    for (const [i, sub] of ((schema[k] as JsonObject[] | undefined) ?? []).entries())
      nestedSchemas(sub, `${where}.${k}[${i}]`, out, true);
  for (const k of SUBSCHEMAS) {
    const sub = schema[k];
    if (sub && typeof sub === 'object' && !Array.isArray(sub)) nestedSchemas(sub, `${where}.${k}`, out, true);
  }
}

/** Every schema of the document: components, parameters, request bodies and responses, nested ones included. */
export function schemasOf(doc: JsonObject): SchemaSite[] {
  const out: SchemaSite[] = [];
  const components = doc.components as JsonObject;
  for (const [name, schema] of Object.entries(components.schemas as JsonObject))
    nestedSchemas(schema as JsonObject, name, out);
  for (const { method, path, op } of operationsOf(doc)) {
    const at = `${method.toUpperCase()} ${path}`;
    for (const p of (op.parameters as JsonObject[] | undefined) ?? [])
      nestedSchemas(p.schema as JsonObject, `${at} ${p.in}.${p.name}`, out);
    const body = op.requestBody as JsonObject | undefined;
    for (const [type, media] of Object.entries((body?.content as JsonObject | undefined) ?? {})) {
      nestedSchemas((media as JsonObject).schema as JsonObject, `${at} body ${type}`, out);
    }
    for (const [status, response] of Object.entries(op.responses as JsonObject)) {
      for (const [type, media] of Object.entries(((response as JsonObject).content as JsonObject | undefined) ?? {})) {
        nestedSchemas((media as JsonObject).schema as JsonObject, `${at} ${status} ${type}`, out);
      }
    }
  }
  return out;
}

/** A documented example: the value, the schema it must satisfy, where. */
export interface ExampleSite {
  where: string;
  value: Json;
  schema: JsonObject;
}

/** Every example of the document: of media types and parameters, and `example`, `examples` and `default` of schemas. */
export function examplesOf(doc: JsonObject): ExampleSite[] {
  const out: ExampleSite[] = [];
  for (const { where, schema } of schemasOf(doc)) {
    if (schema.example !== undefined) out.push({ where: `${where} (example)`, value: schema.example, schema });
    for (const [i, value] of ((schema.examples as Json[] | undefined) ?? []).entries()) {
      out.push({ where: `${where} (examples[${i}])`, value, schema });
    }
    if (schema.default !== undefined) out.push({ where: `${where} (default)`, value: schema.default, schema });
  }
  for (const { method, path, op } of operationsOf(doc)) {
    const at = `${method.toUpperCase()} ${path}`;
    for (const p of (op.parameters as JsonObject[] | undefined) ?? []) {
      if (p.example !== undefined)
        out.push({ where: `${at} ${p.in}.${p.name} (example)`, value: p.example, schema: p.schema as JsonObject });
    }
    const media: [string, JsonObject][] = [];
    const body = op.requestBody as JsonObject | undefined;
    for (const [type, m] of Object.entries((body?.content as JsonObject | undefined) ?? {}))
      media.push([`${at} body ${type}`, m as JsonObject]);
    for (const [status, response] of Object.entries(op.responses as JsonObject)) {
      for (const [type, m] of Object.entries(((response as JsonObject).content as JsonObject | undefined) ?? {}))
        media.push([`${at} ${status} ${type}`, m as JsonObject]);
    }
    for (const [where, m] of media) {
      if (m.example !== undefined)
        out.push({ where: `${where} (example)`, value: m.example, schema: m.schema as JsonObject });
      for (const [name, e] of Object.entries((m.examples as JsonObject | undefined) ?? {})) {
        out.push({
          where: `${where} (examples.${name})`,
          value: (e as JsonObject).value ?? null,
          schema: m.schema as JsonObject,
        });
      }
    }
  }
  return out;
}

const BASE = 'https://auth-service.test/schemas/';

/** The schema with its references to components.schemas turned into absolute ids the validator knows. */
function absoluteRefs(node: Json): Json {
  if (Array.isArray(node)) return node.map(absoluteRefs);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] = k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', BASE) : absoluteRefs(v);
  }
  return out;
}

/** A JSON Schema 2020-12 validator (strict, formats, patterns with `u`) over the document's schemas. */
export function createSchemaValidator(doc: JsonObject): (schema: JsonObject) => ValidateFunction {
  const ajv = new Ajv2020({ strict: true, allErrors: true, unicodeRegExp: true });
  addFormats(ajv);
  // OpenAPI's additions to the schema vocabulary, and its formats that JSON Schema lacks.
  ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs']);
  for (const f of ['binary', 'byte', 'int32', 'int64', 'float', 'double', 'password']) ajv.addFormat(f, true);
  const components = (doc.components as JsonObject).schemas as JsonObject;
  for (const [name, schema] of Object.entries(components))
    ajv.addSchema({ ...(absoluteRefs(schema) as JsonObject), $id: `${BASE}${name}` });
  const compiled = new WeakMap<JsonObject, ValidateFunction>();
  return (schema) => {
    let check = compiled.get(schema);
    if (!check) compiled.set(schema, (check = ajv.compile(absoluteRefs(schema) as JsonObject)));
    return check;
  };
}
