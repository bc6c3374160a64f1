/**
 * The nesting bound of JSON request bodies (docs/api.md, "Request bodies"). A body within the size limit
 * can still nest 30,000 arrays deep; code that walks a parsed value recursively (validation, the
 * serialisation of a call to the bridge) would then overflow the stack. Every JSON body is therefore
 * measured once, on its text and without recursion, before any handler parses it: deeper than
 * MAX_JSON_DEPTH is a 422 naming the limit, and nothing runs.
 */
import { ProblemError } from './problem.js';

/** The deepest nesting of arrays and objects a JSON request body may have. */
export const MAX_JSON_DEPTH = 64;

/** JSON media types, as Hono's validator reads them (application/json, application/problem+json, ...). */
const JSON_TYPE = /^application\/([\w.-]+\+)?json$/i;

/** Whether a Content-Type header names JSON. */
export function isJsonType(contentType: string | undefined): boolean {
  return contentType !== undefined && JSON_TYPE.test(contentType.split(';')[0]!.trim());
}

/**
 * Whether `text` nests arrays and objects deeper than `max` (one pass, brackets inside strings
 * ignored; malformed JSON is measured alike and left to the parser).
 */
export function jsonNestsDeeper(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c)
        i++; // a backslash escapes the next character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b || ch === 0x7b) {
      if (++depth > max) return true;
    } else if (ch === 0x5d || ch === 0x7d) depth--;
  }
  return false;
}

/** The 422 of a body nested deeper than MAX_JSON_DEPTH. */
export function jsonTooDeep(): ProblemError {
  const message = `JSON nests arrays and objects at most ${MAX_JSON_DEPTH} levels deep`;
  return new ProblemError('VALIDATION', {
    detail: `body: ${message}`,
    extensions: { errors: [{ location: 'json', path: '', message }], maxDepth: MAX_JSON_DEPTH },
  });
}

/** Refuses `text` when it nests deeper than MAX_JSON_DEPTH. */
export function checkJsonDepth(text: string): void {
  if (jsonNestsDeeper(text, MAX_JSON_DEPTH)) throw jsonTooDeep();
}
