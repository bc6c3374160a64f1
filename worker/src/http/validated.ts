/**
 * Typed access to input that the route's validator has already checked. @hono/zod-openapi loses the
 * input types of some routes that declare middleware (they come out as `never`); this reads the
 * same validated value with the schema's output type.
 */
import type { z } from '@hono/zod-openapi';
import type { Context } from 'hono';

type Target = 'json' | 'param' | 'query' | 'form';

/** The validated `target` of the request, typed by `schema`. */
export function validated<S extends z.ZodType>(c: Context, target: Target, _schema: S): z.output<S> {
  return (c.req as unknown as { valid(t: Target): unknown }).valid(target) as z.output<S>;
}
