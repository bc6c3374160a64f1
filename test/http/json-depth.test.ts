/**
 * A JSON body nested deeper than the bound (64 levels, http/json-depth.ts) is measured before any route
 * runs, whatever the operation (docs/architecture.md §10, "Statuses from one place"): so an operation that
 * takes no request body answers such a body with a status it documents too. Every operation of the served
 * description without a request body gets a 65-deep JSON body, anonymous (the bound is checked before the
 * credentials), and its answer's status must be one the operation documents.
 */
import { request } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { baseUrl } from '../harness/client.js';
import { operationsOf, type JsonObject } from '../harness/openapi-doc.js';

const DEEP = `${'['.repeat(65)}${']'.repeat(65)}`;

/** Sends `method` with `body` as JSON through node:http (fetch refuses a body on GET). */
function send(method: string, url: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method,
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('a too deep JSON body to an operation without a request body', () => {
  let doc: JsonObject;
  beforeAll(async () => {
    doc = (await (await fetch(`${baseUrl()}/openapi.json`)).json()) as JsonObject;
  });

  it('is answered with a status the operation documents, on every such operation', async () => {
    const without = operationsOf(doc).filter((o) => !o.op.requestBody);
    expect(without.map((o) => o.path)).toEqual(
      expect.arrayContaining(['/v3/login_without_session', '/v4/users/me/totp', '/v4/users/me/recovery-codes']),
    );
    const undocumented: string[] = [];
    for (const o of without) {
      const concrete = o.path
        .replace('{audit_log_type}', 'user_activity')
        .replace('{passkeyId}', '00000000-0000-4000-8000-000000000000')
        .replace(/\{[^}]+\}/g, 'x1');
      const answer = await send(o.method.toUpperCase(), `${baseUrl()}${concrete}`, DEEP);
      const documented = Object.keys(o.op.responses as JsonObject);
      if (!documented.includes(String(answer.status)))
        undocumented.push(`${o.method.toUpperCase()} ${o.path}: ${answer.status} ${answer.text.slice(0, 120)}`);
    }
    expect(undocumented).toEqual([]);
  });
});
