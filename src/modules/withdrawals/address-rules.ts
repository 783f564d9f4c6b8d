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
 * - ETHEREUM: a mixed-case address must carry its EIP-55 checksum (Keccak-256 of the lower-case
 *   hex, below: node:crypto has SHA3 but not Keccak's padding); all lower or all upper case carries
 *   none and passes.
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
    case 'ETHEREUM':
      return eip55Valid(address);
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

/** EIP-55: unchecked when the hex has one case; mixed, each letter is upper case exactly where the hash's nibble is 8 or more. */
function eip55Valid(address: string): boolean {
  const hex = address.slice(2);
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return true; // the pattern decides the shape
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return true;
  const hash = keccak256(Buffer.from(hex.toLowerCase(), 'ascii')).toString('hex');
  for (let i = 0; i < 40; i++) {
    const c = hex[i]!;
    if (/[0-9]/.test(c)) continue;
    const upper = parseInt(hash[i]!, 16) >= 8;
    if ((c === c.toUpperCase()) !== upper) return false;
  }
  return true;
}

const mask64 = (1n << 64n) - 1n;
const roundConstants = [
  0x0000000000000001n, 0x0000000000008082n, 0x800000000000808an, 0x8000000080008000n, 0x000000000000808bn, 0x0000000080000001n,
  0x8000000080008081n, 0x8000000000008009n, 0x000000000000008an, 0x0000000000000088n, 0x0000000080008009n, 0x000000008000000an,
  0x000000008000808bn, 0x800000000000008bn, 0x8000000000008089n, 0x8000000000008003n, 0x8000000000008002n, 0x8000000000000080n,
  0x000000000000800an, 0x800000008000000an, 0x8000000080008081n, 0x8000000000008080n, 0x0000000080000001n, 0x8000000080008008n,
];
/** Rotation of lane x + 5y. */
const rotations = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14];

const rotl = (v: bigint, n: number): bigint => (n === 0 ? v : ((v << BigInt(n)) | (v >> BigInt(64 - n))) & mask64);

function keccakF(a: bigint[]): void {
  for (const rc of roundConstants) {
    const c = [0, 1, 2, 3, 4].map((x) => a[x]! ^ a[x + 5]! ^ a[x + 10]! ^ a[x + 15]! ^ a[x + 20]!);
    for (let x = 0; x < 5; x++) {
      const d = c[(x + 4) % 5]! ^ rotl(c[(x + 1) % 5]!, 1);
      for (let y = 0; y < 25; y += 5) a[x + y] = a[x + y]! ^ d;
    }
    const b = new Array<bigint>(25).fill(0n);
    for (let x = 0; x < 5; x++) {
      for (let y = 0; y < 5; y++) b[y + 5 * ((2 * x + 3 * y) % 5)] = rotl(a[x + 5 * y]!, rotations[x + 5 * y]!);
    }
    for (let y = 0; y < 25; y += 5) {
      for (let x = 0; x < 5; x++) a[x + y] = b[x + y]! ^ (~b[((x + 1) % 5) + y]! & mask64 & b[((x + 2) % 5) + y]!);
    }
    a[0] = a[0]! ^ rc;
  }
}

/** Keccak-256 (the original padding, as Ethereum uses it; not FIPS 202 SHA3-256). */
export function keccak256(data: Buffer): Buffer {
  const rate = 136;
  const padded = Buffer.alloc((Math.floor(data.length / rate) + 1) * rate);
  data.copy(padded);
  padded[data.length] = padded[data.length]! ^ 0x01;
  padded[padded.length - 1] = padded[padded.length - 1]! ^ 0x80;
  const state = new Array<bigint>(25).fill(0n);
  for (let off = 0; off < padded.length; off += rate) {
    for (let i = 0; i < rate / 8; i++) state[i] = state[i]! ^ padded.readBigUInt64LE(off + i * 8);
    keccakF(state);
  }
  const out = Buffer.alloc(32);
  for (let i = 0; i < 4; i++) out.writeBigUInt64LE(state[i]!, i * 8);
  return out;
}
