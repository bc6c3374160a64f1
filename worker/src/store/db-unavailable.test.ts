import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DatabaseUnreachableError, databaseFetch, databaseUnreachable } from './db-unavailable.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A server answering every request with `status`; its URL. */
async function answering(status: number): Promise<string> {
  server = createServer((_req, res) => res.writeHead(status, { 'content-type': 'application/json' }).end('{}'));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/v2/pipeline`;
}

describe('databaseFetch (the libSQL client over HTTP)', () => {
  it('a connection refused is DatabaseUnreachableError, found through a wrapping error', async () => {
    const url = await answering(200);
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    const err = await databaseFetch(new Request(url, { method: 'POST', body: '{}' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUnreachableError);
    expect(databaseUnreachable(new Error('Failed query', { cause: err }))).toBe(err);
  });

  it("a gateway's 502, 503 or 504 is DatabaseUnreachableError", async () => {
    for (const status of [502, 503, 504]) {
      const url = await answering(status);
      await expect(databaseFetch(new Request(url, { method: 'POST', body: '{}' }))).rejects.toThrow(
        `its gateway answered HTTP ${status}`,
      );
      await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = undefined;
    }
  });

  it("the database's own answers pass as they are (a 400, a 500 of the server)", async () => {
    for (const status of [200, 400, 500]) {
      const url = await answering(status);
      expect((await databaseFetch(new Request(url, { method: 'POST', body: '{}' }))).status).toBe(status);
      await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = undefined;
    }
    expect(databaseUnreachable(new Error('SQLITE_CONSTRAINT'))).toBeUndefined();
  });
});
