import { createHash } from 'node:crypto';

/**
 * The checksum an address carries, for the networks whose address format is known here (the
 * reference: an address that is "malformed or wrong chain" is `address_not_allowed`). A network's
 * pattern (the catalogue's `address_pattern`) checks the shape only; one wrong character of a
 * TRON or Bitcoin address still has the shape but fails its checksum, and a payout to it is lost
 * or refused on chain. Pure functions; other networks answer true (their pattern decides).
 *
 * - TRON: base58check, 25 bytes, version byte 0x41.
 * - BITCOIN: base58check (version 0x00 P2PKH or 0x05 P2SH, 25 bytes), or a segwit address of
 *   human-readable part `bc`: BIP-173 bech32 for version 0, BIP-350 bech32m for versions 1 to 16.
 * - ETHEREUM: not checked here (EIP-55 needs Keccak-256, which node:crypto lacks).
 */
export function addressChecksumValid(network: string, address: string): boolean {
  switch (network) {
    case 'TRON':
      return base58checkPayload(address, 25)?.[0] === 0x41;
    case 'BITCOIN': {
      if (/^bc1/i.test(address)) return segwitValid('bc', address);
      const version = base58checkPayload(address, 25)?.[0];
      return version === 0x00 || version === 0x05;
    }
    default:
      return true;
  }
}

const base58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function sha256(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

/** The decoded bytes (version, payload, checksum) when the length and the checksum are right. */
function base58checkPayload(address: string, length: number): Buffer | undefined {
  if (address.length === 0 || address.length > 64) return undefined;
  let n = 0n;
  for (const c of address) {
    const digit = base58.indexOf(c);
    if (digit < 0) return undefined;
    n = n * 58n + BigInt(digit);
  }
  const body: number[] = [];
  while (n > 0n) {
    body.unshift(Number(n & 0xffn));
    n >>= 8n;
  }
  let zeros = 0;
  while (zeros < address.length && address[zeros] === '1') zeros++;
  const bytes = Buffer.from([...new Array<number>(zeros).fill(0), ...body]);
  if (bytes.length !== length) return undefined;
  const check = sha256(sha256(bytes.subarray(0, length - 4))).subarray(0, 4);
  return check.equals(bytes.subarray(length - 4)) ? bytes : undefined;
}

const bech32Chars = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const bech32Const = 1;
const bech32mConst = 0x2bc830a3;

function polymod(values: number[]): number {
  const gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = (((chk & 0x1ffffff) << 5) ^ v) >>> 0;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk = (chk ^ gen[i]!) >>> 0;
  }
  return chk;
}

function hrpExpand(hrp: string): number[] {
  const out: number[] = [];
  for (const c of hrp) out.push(c.charCodeAt(0) >> 5);
  out.push(0);
  for (const c of hrp) out.push(c.charCodeAt(0) & 31);
  return out;
}

/** A BIP-173 / BIP-350 segwit address of `hrp`: one case, checksum of its version's kind, a valid program. */
function segwitValid(hrp: string, address: string): boolean {
  if (address.length > 90) return false;
  if (address !== address.toLowerCase() && address !== address.toUpperCase()) return false;
  const text = address.toLowerCase();
  const sep = text.lastIndexOf('1');
  if (text.slice(0, sep) !== hrp || text.length - sep - 1 < 7) return false;
  const data: number[] = [];
  for (const c of text.slice(sep + 1)) {
    const v = bech32Chars.indexOf(c);
    if (v < 0) return false;
    data.push(v);
  }
  const version = data[0]!;
  if (version > 16) return false;
  const expected = version === 0 ? bech32Const : bech32mConst;
  if (polymod([...hrpExpand(hrp), ...data]) !== expected) return false;
  // The program: 5-bit groups to bytes, at most 4 padding bits, all zero.
  let acc = 0;
  let bits = 0;
  const program: number[] = [];
  for (const v of data.slice(1, -6)) {
    acc = (acc << 5) | v;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      program.push((acc >> bits) & 0xff);
    }
  }
  if (bits >= 5 || ((acc << (8 - bits)) & 0xff) !== 0) return false;
  if (program.length < 2 || program.length > 40) return false;
  return version !== 0 || program.length === 20 || program.length === 32;
}
