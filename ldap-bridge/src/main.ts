/**
 * `npm run bridge`: starts the bridge on BRIDGE_HOST:BRIDGE_PORT (default 127.0.0.1:8443).
 * Skeleton: plain HTTP on loopback until the mutual-TLS listener lands (DESIGN.md §1).
 */
import { buildBridge } from './app.js';

const host = process.env.BRIDGE_HOST ?? '127.0.0.1';
const port = Number(process.env.BRIDGE_PORT ?? 8443);
const app = buildBridge({ server: { logger: true } });
await app.listen({ host, port });
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void app.close().then(() => process.exit(0)));
