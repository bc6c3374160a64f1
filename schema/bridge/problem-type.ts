/**
 * The stable type URI of a problem code (`urn:auth-service:problem:<code>`, lower case, dashes): the
 * one spelling for the worker's problems (worker/src/http/problem.ts) and the bridge's.
 */
export function problemType(code: string): string {
  return `urn:auth-service:problem:${code.toLowerCase().replaceAll('_', '-')}`;
}
