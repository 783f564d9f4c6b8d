/**
 * Address checksums (src/modules/withdrawals/address-rules.ts), without a server: published
 * addresses and test vectors pass, and one changed character, a wrong version byte or the wrong
 * checksum kind fails, for TRON (base58check 0x41), Bitcoin (base58check 0x00 / 0x05, BIP-173
 * bech32 v0, BIP-350 bech32m v1+) and Ethereum (EIP-55). Other networks are left to their pattern.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { base58check as base58checkWith, bech32, bech32m } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { addressChecksumValid } from '../src/modules/withdrawals/address-rules.js';

const b58 = base58checkWith(sha256);
const b58Alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const payload = (version: number, body: Uint8Array) => Uint8Array.from([version, ...body]);
const segwit = (version: number, program: Uint8Array, kind = version === 0 ? bech32 : bech32m, hrp = 'bc') =>
  kind.encode(hrp, [version, ...kind.toWords(program)], 90);
const bytes = (n: number) => fc.uint8Array({ minLength: n, maxLength: n });
/** The address with the character at `i` replaced by another of `alphabet`. */
const changeAt = (address: string, i: number, alphabet: string) => {
  const next = alphabet[(alphabet.indexOf(address[i]!) + 1) % alphabet.length]!;
  return address.slice(0, i) + next + address.slice(i + 1);
};

describe('TRON', () => {
  it('a published address passes (USDT TRC-20 contract)', () => {
    assert.equal(addressChecksumValid('TRON', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'), true);
  });
  it('one changed character, a Bitcoin version byte, a wrong length or not base58 fails', () => {
    assert.equal(addressChecksumValid('TRON', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u'), false);
    assert.equal(addressChecksumValid('TRON', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa'), false);
    assert.equal(addressChecksumValid('TRON', b58.encode(payload(0x41, new Uint8Array(19)))), false);
    assert.equal(addressChecksumValid('TRON', 'T0000000000000000000000000000000O'), false);
    assert.equal(addressChecksumValid('TRON', ''), false);
  });
  it('property: any 20-byte body with version 0x41 passes; a changed character fails', () => {
    fc.assert(
      fc.property(bytes(20), fc.nat(), (body, n) => {
        const address = b58.encode(payload(0x41, body));
        assert.equal(addressChecksumValid('TRON', address), true);
        assert.equal(
          addressChecksumValid('TRON', changeAt(address, 1 + (n % (address.length - 1)), b58Alphabet)),
          false,
        );
      }),
      { numRuns: 200 },
    );
  });
  it('property: another version byte fails', () => {
    fc.assert(
      fc.property(
        bytes(20),
        fc.integer({ min: 0, max: 255 }).filter((v) => v !== 0x41),
        (body, v) => {
          assert.equal(addressChecksumValid('TRON', b58.encode(payload(v, body))), false);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('BITCOIN', () => {
  it('published addresses and BIP test vectors pass', () => {
    assert.equal(addressChecksumValid('BITCOIN', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa'), true); // P2PKH (genesis)
    assert.equal(addressChecksumValid('BITCOIN', '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy'), true); // P2SH
    // BIP-173, upper case
    assert.equal(addressChecksumValid('BITCOIN', 'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4'), true);
    assert.equal(addressChecksumValid('BITCOIN', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4'), true);
  });
  it('one changed character, mixed case, a TRON address or a testnet prefix fails', () => {
    assert.equal(addressChecksumValid('BITCOIN', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb'), false);
    assert.equal(addressChecksumValid('BITCOIN', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5'), false);
    assert.equal(addressChecksumValid('BITCOIN', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kV8f3t4'), false);
    assert.equal(addressChecksumValid('BITCOIN', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'), false);
    assert.equal(addressChecksumValid('BITCOIN', segwit(0, new Uint8Array(20), bech32, 'tb')), false);
  });
  it('segwit v0: bech32 with a 20- or 32-byte program; bech32m or another length fails', () => {
    assert.equal(addressChecksumValid('BITCOIN', segwit(0, new Uint8Array(20).fill(7))), true);
    assert.equal(addressChecksumValid('BITCOIN', segwit(0, new Uint8Array(32).fill(7))), true);
    assert.equal(addressChecksumValid('BITCOIN', segwit(0, new Uint8Array(20).fill(7), bech32m)), false);
    assert.equal(addressChecksumValid('BITCOIN', segwit(0, new Uint8Array(21).fill(7))), false);
  });
  it('segwit v1-16: bech32m with a program of 2 to 40 bytes; bech32 fails (BIP-350)', () => {
    assert.equal(addressChecksumValid('BITCOIN', segwit(1, new Uint8Array(32).fill(9))), true);
    assert.equal(addressChecksumValid('BITCOIN', segwit(16, new Uint8Array(2).fill(9))), true);
    assert.equal(addressChecksumValid('BITCOIN', segwit(1, new Uint8Array(40).fill(9))), true);
    assert.equal(addressChecksumValid('BITCOIN', segwit(1, new Uint8Array(32).fill(9), bech32)), false);
    assert.equal(addressChecksumValid('BITCOIN', segwit(1, new Uint8Array(1).fill(9))), false);
    assert.equal(addressChecksumValid('BITCOIN', segwit(1, new Uint8Array(41).fill(9))), false);
    assert.equal(addressChecksumValid('BITCOIN', segwit(17, new Uint8Array(32).fill(9))), false);
  });
  it('property: base58check 0x00 and 0x05 pass, other versions fail', () => {
    fc.assert(
      fc.property(bytes(20), fc.integer({ min: 0, max: 255 }), (body, v) => {
        assert.equal(addressChecksumValid('BITCOIN', b58.encode(payload(v, body))), v === 0x00 || v === 0x05);
      }),
      { numRuns: 200 },
    );
  });
  it('property: a changed character of a segwit address fails', () => {
    const charset = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
    fc.assert(
      fc.property(bytes(32), fc.constantFrom(0, 1), fc.nat(), (program, version, n) => {
        const address = segwit(version, program);
        assert.equal(addressChecksumValid('BITCOIN', address), true);
        const i = 4 + (n % (address.length - 4)); // past `bc1` and the version
        assert.equal(addressChecksumValid('BITCOIN', changeAt(address, i, charset)), false);
      }),
      { numRuns: 200 },
    );
  });
});

describe('ETHEREUM (EIP-55)', () => {
  const checksummed = [
    '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
    '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
  ];
  it("the EIP's examples pass; all lower or all upper case carries no checksum and passes", () => {
    for (const a of checksummed) assert.equal(addressChecksumValid('ETHEREUM', a), true, a);
    assert.equal(addressChecksumValid('ETHEREUM', checksummed[0]!.toLowerCase()), true);
    assert.equal(addressChecksumValid('ETHEREUM', `0x${checksummed[0]!.slice(2).toUpperCase()}`), true);
  });
  it('one letter in the wrong case fails', () => {
    for (const a of checksummed) {
      const i = [...a].findIndex((c, k) => k > 1 && /[a-f]/i.test(c));
      const c = a[i]!;
      const flipped = a.slice(0, i) + (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) + a.slice(i + 1);
      assert.equal(addressChecksumValid('ETHEREUM', flipped), false, flipped);
    }
  });
  it('a shape the pattern refuses is left to the pattern', () => {
    assert.equal(addressChecksumValid('ETHEREUM', '0x123'), true);
  });
});

describe('other networks', () => {
  it('have no checksum here: their pattern decides', () => {
    assert.equal(addressChecksumValid('SOLANA', 'anything'), true);
    assert.equal(addressChecksumValid('tron', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u'), true, 'network names are exact');
  });
});
