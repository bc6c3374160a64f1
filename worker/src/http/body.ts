/** Request bodies that come as JSON or as an HTML form (the session logins). */
import type { Context } from 'hono';
import type { z } from '@hono/zod-openapi';
import type { AppEnv } from './context.js';
import { ProblemError } from './problem.js';
import { requestHeader } from './node-messages.js';

/** Whether the request is a browser form post (answered with redirects rather than JSON). */
export function isFormPost(c: Context<AppEnv>): boolean {
  const type = requestHeader(c, 'Content-Type') ?? '';
  return type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/form-data');
}

/**
 * Reads a JSON or form body and validates it with `schema` (422 naming each bad field); `rename`
 * maps form field names to the schema's (e.g. ldap_server to ldapServer).
 */
export async function readBody<S extends z.ZodType>(
  c: Context<AppEnv>,
  schema: S,
  rename: Record<string, string> = {},
): Promise<z.output<S>> {
  let raw: unknown;
  if (isFormPost(c)) {
    const form = await c.req.parseBody();
    const fields = Object.entries(form).filter(([, v]) => typeof v === 'string');
    raw = Object.fromEntries(fields.map(([k, v]) => [rename[k] ?? k, v]));
  } else if ((requestHeader(c, 'Content-Type') ?? '').startsWith('application/json')) {
    raw = await c.req.json().catch(() => {
      throw new ProblemError('MALFORMED_REQUEST', { detail: 'malformed JSON in the request body' });
    });
  } else {
    const detail = 'send application/json or an HTML form (application/x-www-form-urlencoded)';
    throw new ProblemError('UNSUPPORTED_MEDIA_TYPE', { detail });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const errors = parsed.error.issues.map((i) => ({
      location: isFormPost(c) ? 'form' : 'json',
      path: i.path.map(String).join('.'),
      message: i.message,
    }));
    const detail = errors.map((e) => `${e.path}: ${e.message}`).join('; ');
    throw new ProblemError('VALIDATION', { detail, extensions: { errors } });
  }
  return parsed.data;
}
