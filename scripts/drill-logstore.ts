/**
 * `npm run drill:logstore`: the log-store drill of docs/operations-bridge.md §7, runnable without an
 * OpenSearch cluster. Starts the suite's test log store (test/harness/logstore/server.ts: a
 * protocol-level stand-in, HTTPS with its own CA, Basic credentials) on loopback, prints the bridge's
 * and the service's variables, then reads commands on stdin to break it and mend it:
 *
 *   down          refuse connections (the store is down: audit events accumulate in the outbox)
 *   status N      answer every request with status N (e.g. 503, 429)
 *   slow          answer after 30 s (past LOGSTORE_TIMEOUT)
 *   up            answer again (the outbox drains)
 *   count         how many audit documents the store holds
 *   quit          stop
 *
 * Options: --port-file PATH writes the URL there (for scripts); LOGSTORE_DRILL_USER / _PASSWORD set the
 * credentials (default drill / drill-password).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestLogStore } from '../test/harness/logstore/server.js';

const username = process.env.LOGSTORE_DRILL_USER ?? 'drill';
const password = process.env.LOGSTORE_DRILL_PASSWORD ?? 'drill-password';
const store = await startTestLogStore({ basic: { username, password } });
const node = store.nodes[0]!;
const caFile = join(tmpdir(), `drill-logstore-ca-${process.pid}.pem`);
writeFileSync(caFile, store.caPem);
const portFile = process.argv.indexOf('--port-file');
if (portFile > 0 && process.argv[portFile + 1]) writeFileSync(process.argv[portFile + 1]!, node.url);

console.log(`test log store at ${node.url} (a stand-in for OpenSearch, for drills only)

The bridge's environment:
  LOGSTORE_ALLOWED_URLS=${node.url}
  LOGSTORE_CA_FILE=${caFile}
  LOGSTORE_USERNAME=${username}
  LOGSTORE_PASSWORD=<LOGSTORE_DRILL_PASSWORD, default drill-password>
The service (environment, or PATCH /v3/settings as an administrator):
  LOGSTORE_URLS=${node.url}
  LOGSTORE_VERIFY_CERTS=True

Commands: down | status N | slow | up | count | quit`);

const input = createInterface({ input: process.stdin });
for await (const line of input) {
  const [cmd, arg] = line.trim().split(/\s+/);
  if (cmd === 'down') await node.set('refuse');
  else if (cmd === 'status') await node.set('status', { status: Number(arg) || 503 });
  else if (cmd === 'slow') await node.set('slow');
  else if (cmd === 'up') await node.set('up');
  else if (cmd === 'count') console.log(`${store.documents('svc-sec-*').length} audit documents`);
  else if (cmd === 'quit') break;
  else {
    if (cmd) console.log('commands: down | status N | slow | up | count | quit');
    continue;
  }
  if (cmd !== 'count') console.log(`store: ${node.mode}`);
}
// A client's kept-alive connection must not hold the exit.
await Promise.race([store.stop(), new Promise((r) => setTimeout(r, 2000))]);
rmSync(caFile, { force: true });
process.exit(0);
