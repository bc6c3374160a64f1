/**
 * The edge host's bridge transport. On Cloudflare the client certificate is presented by the
 * `mtls_certificates` binding BRIDGE_MTLS (a Fetcher); workerd has no such binding locally, so local
 * runs (`npm run dev:edge`, the edge tests) reach the bridge through the mTLS binding emulator
 * (`scripts/mtls-binding-emulator.ts`): a Node process on loopback that presents the certificate,
 * named by a plain `http://127.0.0.1` BRIDGE_URL. Any other URL without the binding is refused.
 */
import type { BridgeFetch } from './client.js';

export class BridgeBindingMissingError extends Error {
  override name = 'BridgeBindingMissingError';
}

const LOOPBACK_HTTP = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/;

/** The transport, or undefined while BRIDGE_URL is unset. */
export function edgeBridgeTransport(baseUrl: string, binding: Fetcher | undefined): BridgeFetch | undefined {
  if (baseUrl === '') return undefined;
  const base = baseUrl.replace(/\/+$/, '');
  const send = binding ? binding.fetch.bind(binding) : LOOPBACK_HTTP.test(base) ? fetch : undefined;
  return async (path, { timeoutMs, ...init }) => {
    if (!send)
      throw new BridgeBindingMissingError(
        `BRIDGE_URL ${base} needs the mtls_certificates binding BRIDGE_MTLS (docs/operations-bridge.md §5)`,
      );
    return send(`${base}${path}`, { ...init, signal: AbortSignal.timeout(timeoutMs) } as RequestInit);
  };
}
