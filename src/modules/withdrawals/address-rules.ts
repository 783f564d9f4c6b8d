import { base58check as base58checkWith, bech32, bech32m } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';

/**
 * The checksum an address carries, for the networks whose address format is known here (the
 * reference: an address that is "malformed or wrong chain" is `address_not_allowed`). A network's
 * pattern (the catalogue's `address_pattern`) checks the shape only; one wrong character of a
 * TRON or Bitcoin address still has the shape but fails its checksum, and a payout to it is lost
 * or refused on chain. Pure functions; other networks answer true (their pattern decides). The
 * codecs and hashes are @scure/base and @noble/hashes (audited, no dependencies), not our own.
 *
 * - TRON: base58check, a 21-byte payload whose version byte is 0x41.
 * - BITCOIN: base58check (version 0x00 P2PKH or 0x05 P2SH, 21-byte payload), or a segwit address
 *   of human-readable part `bc`: BIP-173 bech32 for version 0 (a 20- or 32-byte program), BIP-350
 *   bech32m for versions 1 to 16 (2 to 40 bytes).
 * - ETHEREUM: a mixed-case address must carry its EIP-55 checksum (Keccak-256 of the lower-case
 *   hex); all lower or all upper case carries none and passes.
 */
export function addressChecksumValid(network: string, address: string): boolean {
  switch (network) {
    case 'TRON':
      return base58checkPayload(address)?.[0] === 0x41;
    case 'BITCOIN': {
      if (/^bc1/i.test(address)) return segwitValid('bc', address);
      const version = base58checkPayload(address)?.[0];
      return version === 0x00 || version === 0x05;
    }
    case 'ETHEREUM':
      return eip55Valid(address);
    default:
      return true;
  }
}

const base58check = base58checkWith(sha256);

/** The payload (version byte first) of a base58check address of 21 bytes, when its checksum is right. */
function base58checkPayload(address: string): Uint8Array | undefined {
  if (address.length === 0 || address.length > 64) return undefined;
  try {
    const payload = base58check.decode(address);
    return payload.length === 21 ? payload : undefined;
  } catch {
    return undefined;
  }
}

/** A BIP-173 / BIP-350 segwit address of `hrp`: one case, the checksum of its version's kind, a valid program. */
function segwitValid(hrp: string, address: string): boolean {
  if (address.length > 90) return false;
  const text = address.toLowerCase();
  if (address !== text && address !== address.toUpperCase()) return false;
  const decoded = bech32.decodeUnsafe(text, 90) ?? bech32m.decodeUnsafe(text, 90);
  if (!decoded || decoded.prefix !== hrp || decoded.words.length === 0) return false;
  const version = decoded.words[0]!;
  if (version > 16) return false;
  // Version 0 is bech32 only, the others bech32m only (BIP-350).
  const kind = version === 0 ? bech32 : bech32m;
  if (!kind.decodeUnsafe(text, 90)) return false;
  const program = kind.fromWordsUnsafe(decoded.words.slice(1));
  if (!program || program.length < 2 || program.length > 40) return false;
  return version !== 0 || program.length === 20 || program.length === 32;
}

/** EIP-55: unchecked when the hex has one case; mixed, each letter is upper case exactly where the hash's nibble is 8
 * or more. */
function eip55Valid(address: string): boolean {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return true; // the pattern decides the shape
  const hex = address.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return true;
  const hash = Buffer.from(keccak_256(Buffer.from(hex.toLowerCase(), 'ascii'))).toString('hex');
  for (let i = 0; i < 40; i++) {
    const c = hex[i]!;
    if (c >= '0' && c <= '9') continue;
    const upper = parseInt(hash[i]!, 16) >= 8;
    if ((c === c.toUpperCase()) !== upper) return false;
  }
  return true;
}
