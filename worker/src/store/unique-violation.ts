/** Recognising a UNIQUE constraint violation of libSQL (the engine and the HTTP client report it differently). */
/** Whether a libSQL error is a UNIQUE constraint violation. */
export function isUniqueViolation(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code.includes('CONSTRAINT')) return /UNIQUE/i.test(`${code} ${e.message}`);
    if (/UNIQUE constraint failed/i.test(e.message)) return true;
  }
  return false;
}
