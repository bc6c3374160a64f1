/**
 * A password hashing backend. Every backend produces and accepts the same
 * argon2id PHC strings, so a hash written by one host (Node) verifies on the
 * other (Workers) and backends can be swapped without a migration.
 */
export interface PasswordHasher {
  readonly name: string;
  /** Hashes the UTF-8 bytes of `password` (see `encodePassword`) into a PHC string. */
  hash(password: string): Promise<string>;
  /**
   * True iff `password` matches `phc`. A malformed/unsupported PHC (corrupted
   * row) yields false rather than an exception; only backend failures
   * (e.g. out of memory) reject.
   */
  verify(phc: string, password: string): Promise<boolean>;
}

/** argon2id cost and size parameters (the PHC `m`, `t`, `p` plus byte lengths). */
export interface Argon2Params {
  /** Memory cost in KiB (PHC `m`). */
  readonly memoryCost: number;
  /** Number of passes (PHC `t`). */
  readonly timeCost: number;
  /** Lanes (PHC `p`). */
  readonly parallelism: number;
  /** Length of the derived hash in bytes. */
  readonly hashLength: number;
  /** Length of the random salt in bytes. */
  readonly saltLength: number;
}

/** The inputs of one raw argon2id (v=0x13) derivation. */
export interface Argon2DeriveInput {
  readonly password: Uint8Array;
  readonly salt: Uint8Array;
  readonly memoryCost: number;
  readonly timeCost: number;
  readonly parallelism: number;
  readonly hashLength: number;
}

/**
 * The only thing a backend implements: raw argon2id. Encoding, parsing and
 * the constant-time comparison are shared (see `createArgon2idHasher`), so
 * backends cannot diverge on those security-relevant details.
 */
export type Argon2idDerive = (input: Argon2DeriveInput) => Promise<Uint8Array>;

/** Options accepted by every backend factory. */
export interface HasherOptions {
  /** Parameters for new hashes; verification always uses the PHC's own. Defaults to `DEFAULT_ARGON2_PARAMS`. */
  readonly params?: Argon2Params;
}
