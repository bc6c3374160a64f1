/**
 * The shape of the generated OpenAPI 3.1 document that the post-processing steps read and amend
 * (a narrow view: only the members they touch).
 */

/** A response of an operation, inline or a reference to components.responses. */
export type ResponseEntry = { $ref: string } | { description: string; content?: Record<string, MediaTypeEntry> };

/** A media type of a request body or response. */
export interface MediaTypeEntry {
  schema?: unknown;
  example?: unknown;
}

/** The members of an operation that the post-processing reads. */
export interface OperationEntry {
  parameters?: { in: string; name: string }[];
  requestBody?: { content?: Record<string, MediaTypeEntry> };
  security?: Record<string, string[]>[];
  responses?: Record<string, ResponseEntry>;
}

/** The generated document. */
export interface ApiDocument {
  paths?: Record<string, Record<string, OperationEntry>>;
  components?: { responses?: Record<string, ResponseEntry> } & Record<string, unknown>;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** Every operation of the document, with its method (lower case) and path. */
export function listOperations(doc: ApiDocument): { method: string; path: string; op: OperationEntry }[] {
  const out: { method: string; path: string; op: OperationEntry }[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) if (METHODS.has(method)) out.push({ method, path, op });
  }
  return out;
}
