/**
 * Offset paging of admin lists (GET /v4/users, GET /v4/notifications): one page size bound, one
 * pair of query parameters and one page shape, so every list reads and answers alike.
 */
import { z } from '@hono/zod-openapi';

/** The largest page a list answers. */
export const MAX_PAGE = 100;

/** The `limit` and `offset` query parameters of a list. */
export const pageQuery = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE)
    .default(20)
    .openapi({ description: `page size, at most ${MAX_PAGE}` }),
  offset: z.coerce.number().int().min(0).default(0),
};

/** A page of `item`: the items, the total matching and the page's limit and offset (named `name`). */
export function pageOf<T extends z.ZodType>(item: T, name: string) {
  return z
    .object({ items: z.array(item), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
    .openapi(name);
}
