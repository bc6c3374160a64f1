/**
 * fast-check arbitraries from the JSON Schemas of the served OpenAPI description: values valid per
 * a schema (for the valid requests of the fuzz), and the mutations that make a value invalid.
 */
import fc from 'fast-check';
import type { Json, JsonObject } from './openapi-doc.js';

/** Longest string or array a valid value gets (the schema's own bound when smaller). */
const MAX_LENGTH = 24;
const MAX_DEPTH = 5;

/** A schema with a `$ref` to components.schemas replaced by the referenced schema. */
export function resolveSchema(doc: JsonObject, schema: JsonObject): JsonObject {
  let s = schema;
  while (typeof s.$ref === 'string') {
    const name = s.$ref.replace('#/components/schemas/', '');
    s = ((doc.components as JsonObject).schemas as JsonObject)[name] as JsonObject;
  }
  return s;
}

/** Strings: ASCII most of the time, any Unicode code point (astral planes included) otherwise. */
function stringArb(min: number, max: number): fc.Arbitrary<string> {
  const bounds = { minLength: min, maxLength: Math.max(min, max) };
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ ...bounds, unit: 'grapheme-ascii' }) },
    { weight: 1, arbitrary: fc.string({ ...bounds, unit: 'binary' }) },
  );
}

function stringOf(s: JsonObject): fc.Arbitrary<string> {
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = Math.min(typeof s.maxLength === 'number' ? s.maxLength : MAX_LENGTH, Math.max(min, MAX_LENGTH));
  const withinLength = (a: fc.Arbitrary<string>) =>
    a.filter((v) => [...v].length >= min && [...v].length <= ((s.maxLength as number) ?? Infinity));
  switch (s.format) {
    case 'uuid':
      return fc.uuid();
    case 'email':
      return withinLength(fc.emailAddress());
    case 'uri':
      return withinLength(fc.webUrl());
    case 'date-time':
      return fc
        .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
        .map((d) => d.toISOString());
  }
  if (typeof s.pattern === 'string') {
    const re = new RegExp(s.pattern, 'u');
    const examples = [s.example, ...((s.examples as Json[] | undefined) ?? [])].filter((e) => typeof e === 'string');
    let matching: fc.Arbitrary<string>;
    try {
      matching = withinLength(fc.stringMatching(new RegExp(s.pattern)));
    } catch {
      matching = stringArb(min, max).filter((v) => re.test(v));
    }
    return examples.length > 0 ? fc.oneof(fc.constantFrom(...(examples as string[])), matching) : matching;
  }
  return stringArb(min, max);
}

function numberOf(s: JsonObject, integer: boolean): fc.Arbitrary<number> {
  const min =
    typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : -1e6;
  const max =
    typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - 1 : 1e6;
  if (integer) return fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

function objectOf(doc: JsonObject, s: JsonObject, depth: number): fc.Arbitrary<Json> {
  const props = (s.properties as JsonObject | undefined) ?? {};
  const required = new Set((s.required as string[] | undefined) ?? []);
  const record: Record<string, fc.Arbitrary<Json>> = {};
  for (const [k, sub] of Object.entries(props)) record[k] = arbitraryOf(doc, sub as JsonObject, depth + 1);
  const known = fc.record(record, { requiredKeys: [...required].filter((k) => k in props) });
  const extra = s.additionalProperties;
  if (extra && typeof extra === 'object' && !Array.isArray(extra) && depth < MAX_DEPTH) {
    const more = fc.dictionary(stringArb(1, 12), arbitraryOf(doc, extra as JsonObject, depth + 1), { maxKeys: 3 });
    return fc.tuple(known, more).map(([a, b]) => ({ ...b, ...a }) as Json);
  }
  return known as fc.Arbitrary<Json>;
}

/** Any JSON value (for schemas that say nothing), shallow. */
export const anyJson: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>;

/** Values valid per `schema` (most of the time: a caller checks with the validator when it matters). */
export function arbitraryOf(doc: JsonObject, schema: JsonObject, depth = 0): fc.Arbitrary<Json> {
  const s = resolveSchema(doc, schema);
  if ('const' in s) return fc.constant(s.const as Json);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as Json[]));
  for (const k of ['anyOf', 'oneOf']) {
    if (Array.isArray(s[k])) return fc.oneof(...(s[k] as JsonObject[]).map((sub) => arbitraryOf(doc, sub, depth)));
  }
  if (Array.isArray(s.allOf)) {
    const parts = (s.allOf as JsonObject[]).map((sub) => resolveSchema(doc, sub));
    const merged: JsonObject = { type: 'object', properties: {}, required: [] };
    for (const p of parts) {
      Object.assign(merged.properties as JsonObject, p.properties ?? {});
      (merged.required as Json[]).push(...((p.required as Json[] | undefined) ?? []));
    }
    return objectOf(doc, merged, depth);
  }
  const types = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((type) => arbitraryOf(doc, { ...s, type }, depth)));
  switch (types[0]) {
    case 'string':
      return stringOf(s);
    case 'integer':
      return numberOf(s, true);
    case 'number':
      return numberOf(s, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const items = s.items && depth < MAX_DEPTH ? arbitraryOf(doc, s.items as JsonObject, depth + 1) : anyJson;
      const minLength = typeof s.minItems === 'number' ? s.minItems : 0;
      const maxLength = Math.min(typeof s.maxItems === 'number' ? s.maxItems : 4, Math.max(minLength, 4));
      return fc.array(items, { minLength, maxLength });
    }
    case 'object':
      return objectOf(doc, s, depth);
  }
  if (s.properties) return objectOf(doc, s, depth);
  return anyJson;
}

/** Huge, odd and out-of-range numbers, as JSON text (some are not representable as a double). */
export const ODD_NUMBERS = [
  '1e400',
  '-1e400',
  '1e308',
  '-0',
  '0.5',
  '9007199254740993',
  '-9007199254740993',
  `1${'0'.repeat(400)}`,
  '1e-400',
  '2147483648',
  '-1',
];

/** A value of another JSON type than `v`. */
export const otherType = (v: Json): fc.Arbitrary<Json> =>
  fc
    .constantFrom<Json>(true, 0, -1, 1.5, 'x', '', null, [], {}, [1, 'a'], { a: 1 })
    .filter((o) => typeof o !== typeof v || Array.isArray(o) !== Array.isArray(v));
