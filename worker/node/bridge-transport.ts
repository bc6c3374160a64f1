/** The Node host's bridge transport: undici with the client certificate (mutual TLS). */
import { readFileSync } from 'node:fs';
import { Agent, fetch } from 'undici';
import type { BridgeFetch } from '../src/bridge/client.js';
import type { ConfigSnapshot } from '../src/config/index.js';

/** The transport, or undefined while BRIDGE_URL is unset. Throws naming an unreadable file. */
export function nodeBridgeTransport(config: ConfigSnapshot): BridgeFetch | undefined {
  const base = config.get('BRIDGE_URL');
  if (base === '') return undefined;
  if (!base.startsWith('https://'))
    throw new Error(
      `BRIDGE_URL ${base}: the Node host reaches the bridge over mutual TLS, so it needs an https:// URL`,
    );
  const read = (name: 'BRIDGE_TLS_CERT' | 'BRIDGE_TLS_KEY' | 'BRIDGE_TLS_CA') => {
    try {
      return readFileSync(config.get(name));
    } catch {
      throw new Error(
        `cannot read ${name} (${config.get(name)}): the bridge needs the client certificate, its key and the CA`,
      );
    }
  };
  const dispatcher = new Agent({
    connect: { cert: read('BRIDGE_TLS_CERT'), key: read('BRIDGE_TLS_KEY'), ca: read('BRIDGE_TLS_CA') },
  });
  return async (path, { timeoutMs, ...init }) =>
    (await fetch(`${base}${path}`, {
      ...(init as Parameters<typeof fetch>[1]),
      dispatcher,
      signal: AbortSignal.timeout(timeoutMs),
    })) as unknown as Response;
}
