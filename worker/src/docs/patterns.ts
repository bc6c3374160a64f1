/**
 * Regular expressions in the OpenAPI document. JSON Schema's `pattern` is an ECMA-262 regular
 * expression without flags, which validators compile with `u` (Unicode). The generator copies a
 * zod regex as its literal minus the slashes, so a flag ends up inside the pattern (`^[\p{L}]+$/u`):
 * such a pattern matches nothing and generated clients reject every request.
 */

/** A pattern that ends with the flags of a regex literal: the last `/` unescaped (RegExp#source escapes `/`). */
const FLAGS_SUFFIX = /(?<!\\)((?:\\\\)*)\/([dgimsuvy]+)$/;

/** Flags with no effect on what a JSON Schema pattern matches (validators already apply `u`; `v` differs). */
const HARMLESS_FLAGS = new Set(['u', 'g', 'd']);

/** The pattern without a regex literal's flags; throws for flags a pattern cannot express. */
export function normalizePattern(pattern: string): string {
  const m = FLAGS_SUFFIX.exec(pattern);
  if (!m) return pattern;
  const lost = [...m[2]!].filter((f) => !HARMLESS_FLAGS.has(f));
  if (lost.length > 0) {
    // i, s, m, y and v change what matches: the route's regex must be written without them.
    throw new Error(
      `the regex /${pattern.slice(0, m.index)}${m[1]}/${m[2]} uses the flag(s) ${lost.join('')}, ` +
        'which an OpenAPI pattern cannot express: write it without them',
    );
  }
  return pattern.slice(0, m.index) + m[1];
}

/** Normalizes every `pattern` of the document in place (see normalizePattern). */
export function normalizePatterns<D>(doc: D): D {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node !== null && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      for (const [key, value] of Object.entries(record)) {
        if (key === 'pattern' && typeof value === 'string') record[key] = normalizePattern(value);
        else visit(value);
      }
    }
  };
  visit(doc);
  return doc;
}
