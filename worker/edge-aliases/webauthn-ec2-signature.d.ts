/** An ECDSA signature's DER (r, s) as the fixed-length r || s of COSE curve `crv` (1, 2, 3); throws otherwise. */
export function unwrapEC2Signature(signature: Uint8Array, crv: number): Uint8Array;
