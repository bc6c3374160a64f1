/**
 * Request headers read, and the frame's response headers written, on the Node host's own
 * messages instead of through Fetch `Headers` (architecture.md §6).
 *
 * @hono/node-server hands the app the Node request and response (AppDeps.nodeMessages). Reading one
 * header through `c.req.header` first builds a Fetch `Headers` of every request header (each name
 * and value validated and copied), and setting the nine headers of every answer on `c.res.headers`
 * builds another, which @hono/node-server then turns back into a plain object for Node: together
 * about 5 µs of the 13 µs a bare Hono route costs. Here a header is found in the request's raw
 * header list, and the answer's headers are set on the Node response, which merges them with the
 * route's own when it writes the head. Elsewhere (the edge, in-process tests) the Fetch objects are
 * the only ones, and are used.
 */
import type { Context } from 'hono';
import type { AppEnv } from './context.js';

/**
 * A request header, as `c.req.header(name)` gives it: repeated fields joined with ", " (Cookie with
 * "; ", as Fetch does), surrounding spaces and tabs removed; undefined when absent.
 */
export function requestHeader(c: Context<AppEnv>, name: string): string | undefined {
  const node = c.var.deps?.nodeMessages?.(c);
  return node ? rawHeader(node.incoming.rawHeaders, name) : c.req.header(name);
}

/** `name`'s value in Node's raw header list (names in any case, values as received). */
export function rawHeader(raw: readonly string[], name: string): string | undefined {
  const wanted = name.toLowerCase();
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i]!;
    if (key.length !== wanted.length || key.toLowerCase() !== wanted) continue;
    const v = trimHttpWhitespace(raw[i + 1]!);
    value = value === undefined ? v : `${value}${wanted === 'cookie' ? '; ' : ', '}${v}`;
  }
  return value;
}

/** Removes leading and trailing spaces and tabs (HTTP's optional whitespace), as Fetch does. */
function trimHttpWhitespace(v: string): string {
  let start = 0;
  let end = v.length;
  while (start < end && (v.charCodeAt(start) === 32 || v.charCodeAt(start) === 9)) start++;
  while (end > start && (v.charCodeAt(end - 1) === 32 || v.charCodeAt(end - 1) === 9)) end--;
  return start === 0 && end === v.length ? v : v.slice(start, end);
}
