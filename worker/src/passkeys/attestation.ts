/**
 * The attestation statement of a registration, set aside (docs/security-passkeys.md, "Attestation"). The
 * service asks for none and judges no authenticator by its maker, so a statement a browser passes on all the
 * same (WebAuthn lets the client replace it with "none", and does not make it) is replaced by "none" before
 * the library verifies the rest: the authenticator data (relying party, flags, credential id and public key,
 * counter) is kept byte for byte, and the client data is untouched. The library then never reaches its
 * statement verifiers (X.509 chains, ASN.1), which the edge build leaves out (docs/performance.md, "The edge
 * bundle").
 */
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { decodeAttestationObject, isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';

/** `response` with a "none" attestation statement; throws on an attestation object that is not CBOR. */
export function withoutAttestationStatement(response: RegistrationResponseJSON): RegistrationResponseJSON {
  const attestation = decodeAttestationObject(isoBase64URL.toBuffer(response.response.attestationObject));
  if (attestation.get('fmt') === 'none') return response;
  const none: Parameters<typeof isoCBOR.encode>[0] = new Map<string, Parameters<typeof isoCBOR.encode>[0]>([
    ['fmt', 'none'],
    ['attStmt', new Map()],
    ['authData', attestation.get('authData')],
  ]);
  const attestationObject = isoBase64URL.fromBuffer(isoCBOR.encode(none));
  return { ...response, response: { ...response.response, attestationObject } };
}
