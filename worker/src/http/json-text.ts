/** Answers of JSON serialised ahead of the request (architecture.md §6, "The request's own overhead"). */
import type { Context, TypedResponse } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { JSONParsed } from 'hono/utils/types';

declare const serialised: unique symbol;

/** `JSON.stringify` of a `T`: the type says what the text holds, so an answer made of it keeps the route's schema. */
export type JsonText<T> = string & { readonly [serialised]: T };

export const toJsonText = <T>(value: T): JsonText<T> => JSON.stringify(value) as JsonText<T>;

/** What `c.json(value, status)` answers (the same body and Content-Type), from the value's text kept earlier. */
export function jsonText<T, S extends ContentfulStatusCode>(
  c: Context,
  text: JsonText<T>,
  status: S,
): Response & TypedResponse<JSONParsed<T>, S, 'json'> {
  // A new headers object per answer: @hono/node-server keeps it and adds Content-Length to it. The
  // text's type is what it holds; Hono types a body's answer as its text.
  return c.body(text, status, { 'Content-Type': 'application/json' }) as unknown as Response &
    TypedResponse<JSONParsed<T>, S, 'json'>;
}
