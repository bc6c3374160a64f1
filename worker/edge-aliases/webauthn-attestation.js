// The edge build's stand-in for @simplewebauthn/server's attestation-statement verifiers and its FIDO
// metadata service (wrangler.toml [alias], docs/performance.md, "The edge bundle"). The service asks for
// no attestation and hands the library only "none" statements (worker/src/passkeys/attestation.ts), so
// these are never called; they would carry the X.509 and ASN.1 code (@peculiar/x509, tsyringe, ...), about
// a sixth of the script. Called after all, they refuse rather than pass: the registration fails.
const unused = (name) => () => {
  throw new Error(`${name} is not part of the edge build: the service verifies "none" attestation only`);
};
export const verifyAttestationFIDOU2F = unused('verifyAttestationFIDOU2F');
export const verifyAttestationPacked = unused('verifyAttestationPacked');
export const verifyAttestationAndroidSafetyNet = unused('verifyAttestationAndroidSafetyNet');
export const verifyAttestationTPM = unused('verifyAttestationTPM');
export const verifyAttestationAndroidKey = unused('verifyAttestationAndroidKey');
export const verifyAttestationApple = unused('verifyAttestationApple');
export const convertX509PublicKeyToCOSE = unused('convertX509PublicKeyToCOSE');
export class BaseMetadataService {
  initialize = unused('MetadataService');
  getStatement = unused('MetadataService');
}
export const MetadataService = new BaseMetadataService();
export const isCertRevoked = unused('isCertRevoked');
export const validateCertificatePath = unused('validateCertificatePath');
export const getCertificateInfo = unused('getCertificateInfo');
export const verifyMDSBlob = unused('verifyMDSBlob');
// The root certificates of the attestation formats (services/defaultRootCerts/), which only the verifiers
// above would read: the library's settings service registers them at import, empty here.
export const Google_Hardware_Attestation_Root_1 = '';
export const Google_Hardware_Attestation_Root_2 = '';
export const Google_Hardware_Attestation_Root_3 = '';
export const Google_Hardware_Attestation_Root_4 = '';
export const GlobalSign_Root_CA = '';
export const Apple_WebAuthn_Root_CA = '';
export const GlobalSign_Root_CA_R3 = '';
export const GlobalSign_Root_R46 = '';
