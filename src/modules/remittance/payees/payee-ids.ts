/**
 * Payee ids, `pye_<number>` (docs/remittance.md, "Payee ids"). Pure.
 *
 * The number is not the link's sequence: two ids a day apart would tell any merchant how many
 * links all merchants made in between. Links made before migration 041 keep the number they were
 * given, their sequence (at most the scheme's `legacySeqMax`); every later link's number is
 * `opaqueBase` plus its sequence through a keyed permutation of [0, 2^52). The two ranges cannot
 * meet (`legacySeqMax` < `opaqueBase`), the permutation is a bijection, so no two links share a
 * number; a number decodes only to a sequence of its own range (an old-form number of a new link
 * names nothing, nor the reverse).
 *
 * The permutation is a balanced Feistel network over two 26-bit halves, 8 rounds, each round
 * SHA-256 of (key ‖ round ‖ half) cut to 26 bits: the input always has the same length, so the
 * keyed hash is a PRF (length extension needs a longer message). 2^52 covers any sequence this
 * service will reach, and the largest number (~5.5 × 10^15) stays below 2^53: a client that reads
 * the number into a JavaScript number loses nothing.
 */
import { hash } from 'node:crypto';

/** The installation's secret and the last sequence handed out before ids became opaque (table remit_payee_id_scheme).
 * */
export interface PayeeIdScheme {
  key: Uint8Array;
  legacySeqMax: bigint;
}

export const payeeIdKeyBytes = 32;
export const opaqueBase = 10n ** 15n;
const halfBits = 26;
const halfMask = 2 ** halfBits - 1;
/** Sequences the permutation covers: [0, 2^52). */
export const opaqueSeqLimit = 1n << BigInt(2 * halfBits);
const rounds = 8;
/** The largest number the `pye_` grammar reads: the bigint column's maximum. */
const numberMax = 2n ** 63n - 1n;

/** A keyed permutation of [0, 2^52) and its inverse. */
export function feistel(key: Uint8Array): { forward(x: bigint): bigint; backward(y: bigint): bigint } {
  if (key.length !== payeeIdKeyBytes)
    throw new Error(`the payee id key must be ${payeeIdKeyBytes} bytes, got ${key.length}`);
  // key ‖ round ‖ half, rewritten in place per call (synchronous: no interleaving).
  const input = Buffer.alloc(payeeIdKeyBytes + 5);
  input.set(key, 0);
  const f = (round: number, half: number): number => {
    input[payeeIdKeyBytes] = round;
    input.writeUInt32BE(half, payeeIdKeyBytes + 1);
    return hash('sha256', input, 'buffer').readUInt32BE(0) & halfMask;
  };
  const split = (x: bigint): [number, number] => {
    if (x < 0n || x >= opaqueSeqLimit) throw new RangeError(`${x} is outside the payee id permutation's domain`);
    return [Number(x >> BigInt(halfBits)), Number(x & BigInt(halfMask))];
  };
  const join = (hi: number, lo: number) => (BigInt(hi) << BigInt(halfBits)) | BigInt(lo);
  return {
    forward(x) {
      let [hi, lo] = split(x);
      for (let r = 0; r < rounds; r++) [hi, lo] = [lo, (hi ^ f(r, lo)) >>> 0];
      return join(hi, lo);
    },
    backward(y) {
      let [hi, lo] = split(y);
      for (let r = rounds - 1; r >= 0; r--) [hi, lo] = [(lo ^ f(r, hi)) >>> 0, hi];
      return join(hi, lo);
    },
  };
}

/** The number of `pye_<number>` or `<number>`; undefined for anything else (over-long included). */
export function payeeNumberOf(id: string): bigint | undefined {
  const m = /^(?:pye_)?([1-9][0-9]{0,18})$/.exec(id);
  if (!m) return undefined;
  const n = BigInt(m[1]!);
  return n <= numberMax ? n : undefined;
}

export interface PayeeIds {
  /** The public number of a link's sequence. */
  numberOf(seq: bigint | string): bigint;
  /** The sequence a public number names, or undefined (no link can have it). */
  seqOfNumber(n: bigint): bigint | undefined;
  /** `pye_<number>` of a link's sequence. */
  idOf(seq: bigint | string): string;
  /** The sequence an id from a request names (prefix optional), or undefined. */
  seqOf(id: string): bigint | undefined;
}

export function payeeIds(scheme: PayeeIdScheme): PayeeIds {
  const { legacySeqMax } = scheme;
  if (legacySeqMax < 0n || legacySeqMax >= opaqueBase)
    throw new Error(`the payee id cutoff ${legacySeqMax} overlaps the opaque range`);
  const permutation = feistel(scheme.key);
  const numberOf = (seq: bigint | string): bigint => {
    const s = BigInt(seq);
    if (s < 1n) throw new RangeError(`payee link sequence ${s} is not positive`);
    return s <= legacySeqMax ? s : opaqueBase + permutation.forward(s);
  };
  const seqOfNumber = (n: bigint): bigint | undefined => {
    if (n >= 1n && n <= legacySeqMax) return n;
    if (n < opaqueBase || n >= opaqueBase + opaqueSeqLimit) return undefined;
    const seq = permutation.backward(n - opaqueBase);
    return seq > legacySeqMax ? seq : undefined;
  };
  return {
    numberOf,
    seqOfNumber,
    idOf: (seq) => `pye_${numberOf(seq)}`,
    seqOf: (id) => {
      const n = payeeNumberOf(id);
      return n === undefined ? undefined : seqOfNumber(n);
    },
  };
}
