import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import { tokenHash } from './tokens.js';

describe('tokenHash', () => {
  it("is the hex SHA-256 of the token's UTF-8 bytes, whichever implementation the runtime gets", () => {
    const tokens = ['ast_Sjrjc9U8yWrmMQ-BNm2pdCWDzxiy_L9ix7U6TWYJ5pY', '', 'é€😀 binding', 'x'.repeat(1000)];
    for (const t of tokens) expect(tokenHash(t)).toBe(bytesToHex(sha256(utf8ToBytes(t))));
    expect(tokenHash('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
