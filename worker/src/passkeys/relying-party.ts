/**
 * The relying party of passkeys (docs/security-passkeys.md, "Relying party"): its id and the origins
 * whose pages may use it, from AUTH_WEBAUTHN_RP_ID and AUTH_WEBAUTHN_ORIGINS, else derived from the
 * service's public origin as the request reached it (behind a TLS-terminating proxy: https).
 */
import type { ConfigSnapshot } from '../config/index.js';

export interface RelyingParty {
  /** The RP id: the host name passkeys are bound to. */
  id: string;
  /** Shown by the browser while registering. */
  name: string;
  /** Origins whose responses are accepted. */
  origins: string[];
}

/** The relying party for a request that reached the service at `publicOrigin`. */
export function relyingParty(config: ConfigSnapshot, publicOrigin: string): RelyingParty {
  const configured = config.get('WEBAUTHN_RP_ID');
  const origins = config.get('WEBAUTHN_ORIGINS');
  return {
    id: configured || new URL(publicOrigin).hostname,
    name: config.get('PROJECT_DESCRIPTION') || 'auth-service',
    origins: origins.length > 0 ? [...origins] : [publicOrigin],
  };
}
