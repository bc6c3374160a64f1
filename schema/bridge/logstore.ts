/**
 * The bridge's log-store capability (architecture.md §1): the worker ships audit events with
 * `_bulk` and runs the logs endpoints' queries through the bridge, which speaks the store's REST API
 * (OpenSearch or Elasticsearch) with its own credentials and CA. The worker sends the effective
 * LOGSTORE_URLS, LOGSTORE_TIMEOUT and LOGSTORE_VERIFY_CERTS with every call (they are UI-editable);
 * the store's credentials and CA never leave the bridge's environment.
 *
 * Failures to reach the store are not outcomes: the bridge answers them as problem+json, 502
 * (STORE_UNAVAILABLE: every node refused or failed; STORE_TLS: certificate not verified) or 504
 * (STORE_TIMEOUT). Any HTTP answer of the store, 2xx or not, is an outcome.
 */
import { z } from 'zod';

/**
 * Every index the service reads or writes starts with this prefix (docs/audit-logs.md): the
 * AUDIT_*_PATTERN values are refused without it when saved, and the bridge refuses any other index,
 * so a changed setting can never make the bridge's store credentials read or write another index.
 */
export const AUDIT_INDEX_PREFIX = 'svc-sec-';

/** A concrete index name of the service (the prefix, then lower case, no wildcard, no separator). */
export const IndexNameSchema = /* @__PURE__ */ (() =>
  z
    .string()
    .max(255)
    .regex(
      /^svc-sec-[a-z0-9][a-z0-9._+-]*$/,
      'a concrete index name: svc-sec- then lower case letters, digits, . _ + -',
    ))();

/**
 * An index pattern of one stream (AUDIT_*_PATTERN): the prefix, then a name with `*` wildcards; no
 * commas, no `_all`, no wildcard in the prefix (`*`, `s*` or `svc*` would reach other indices).
 */
export const IndexPatternSchema = z
  .string()
  .max(255)
  .regex(
    /^svc-sec-[a-z0-9*][a-z0-9._+*-]*$/,
    'an index pattern: svc-sec- then lower case letters, digits, . _ + - and *',
  );

/** Where and how the store is reached: the worker's effective LOGSTORE_* values. */
export const LogstoreTargetSchema = /* @__PURE__ */ (() =>
  z.object({
    /** LOGSTORE_URLS, split at `;`: every node, tried with failover. */
    urls: z
      .array(
        z
          .string()
          .max(2048)
          .regex(/^https?:\/\/[^\s/?#]+\/?$/i, 'an http(s):// origin'),
      )
      .min(1)
      .max(32),
    /** LOGSTORE_TIMEOUT, in milliseconds, per request to a node. */
    timeoutMs: z.number().int().min(100).max(300_000),
    /** LOGSTORE_VERIFY_CERTS: false accepts any certificate of the store (the specification's default). */
    verifyCerts: z.boolean(),
  }))();
export type LogstoreTarget = z.infer<typeof LogstoreTargetSchema>;

/** Largest batch the bridge takes in one call (OUTBOX_BATCH_SIZE is bounded below it). */
export const LOGSTORE_BULK_MAX_ITEMS = 5000;

/** POST /v1/logstore/bulk: `create` actions with the event id as `_id`, so a retry never duplicates. */
export const LogstoreBulkRequestSchema = /* @__PURE__ */ (() =>
  LogstoreTargetSchema.extend({
    items: z
      .array(
        z.object({
          index: IndexNameSchema,
          id: z.string().min(1).max(512),
          document: z.record(z.string(), z.unknown()),
        }),
      )
      .min(1)
      .max(LOGSTORE_BULK_MAX_ITEMS),
  }))();
export type LogstoreBulkRequest = z.infer<typeof LogstoreBulkRequestSchema>;

/** The store's verdict on each item, in the request's order (201 created, 409 already there, ...). */
export const LogstoreBulkResponseSchema = z.object({
  items: z.array(
    z.object({
      id: z.string(),
      status: z.number().int().min(100).max(599),
      error: z.object({ type: z.string(), reason: z.string() }).nullable(),
    }),
  ),
});
export type LogstoreBulkResponse = z.infer<typeof LogstoreBulkResponseSchema>;

/** POST /v1/logstore/query: one `_search` or `_field_caps` on one stream's pattern. */
export const LogstoreQueryRequestSchema = /* @__PURE__ */ (() =>
  LogstoreTargetSchema.extend({
    operation: z.enum(['search', 'field_caps']),
    index: IndexPatternSchema,
    /** The query DSL body, already checked against the worker's allow-list. */
    body: z.record(z.string(), z.unknown()),
    /** field_caps only: the fields to describe (comma-separated, wildcards). */
    fields: z.string().max(4096).optional(),
    /** OpenSearch Security proxy authentication: the caller's login and role values. */
    proxyUser: z.string().max(512).nullable(),
    proxyRoles: z.array(z.string().max(256)).max(64),
  }))();
export type LogstoreQueryRequest = z.infer<typeof LogstoreQueryRequestSchema>;

/** The store's answer, passed back as it is: its status and its JSON body. */
export const LogstoreQueryResponseSchema = z.object({
  status: z.number().int().min(100).max(599),
  body: z.unknown(),
});
export type LogstoreQueryResponse = z.infer<typeof LogstoreQueryResponseSchema>;
