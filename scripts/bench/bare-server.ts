/**
 * The ceiling of `npm run bench`: one Hono route on @hono/node-server and nothing else (no
 * middleware, no database), started pinned like the host under test. Prints `LISTENING <port>`.
 *
 *   BENCH_PORT=0 node --import tsx scripts/bench/bare-server.ts
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const app = new Hono();
// About the size of our liveness answer.
app.get('/ping', (c) => c.json({ status: 'ok' }));

const server = serve({ fetch: app.fetch, port: Number(process.env.BENCH_PORT ?? 0), hostname: '127.0.0.1' }, (info) => {
  process.stdout.write(`LISTENING ${info.port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
