/** The payee id mapping (src/modules/remittance/payees/payee-ids.ts), without a server. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import {
  feistel,
  opaqueBase,
  opaqueSeqLimit,
  payeeIds,
  payeeNumberOf,
} from '../src/modules/remittance/payees/payee-ids.js';

const key = randomBytes(32);
const boundaries = [
  0n,
  1n,
  2n,
  (1n << 26n) - 1n,
  1n << 26n,
  (1n << 26n) + 1n,
  opaqueSeqLimit - 2n,
  opaqueSeqLimit - 1n,
];

describe('payee ids: the keyed permutation', () => {
  const p = feistel(key);

  it("round-trips the domain's boundaries and any value in it, and stays in the domain", () => {
    for (const x of boundaries) {
      const y = p.forward(x);
      assert.ok(y >= 0n && y < opaqueSeqLimit, `${x} → ${y}`);
      assert.equal(p.backward(y), x);
      assert.equal(p.forward(p.backward(x)), x);
    }
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: opaqueSeqLimit - 1n }), (x) => p.backward(p.forward(x)) === x),
      { numRuns: 2000 },
    );
  });

  it('gives distinct values to distinct inputs, and consecutive inputs no visible order', () => {
    const seen = new Set<bigint>();
    let ascending = 0;
    let previous = p.forward(0n);
    for (let x = 1n; x <= 20_000n; x++) {
      const y = p.forward(x);
      assert.ok(!seen.has(y), `collision at ${x}`);
      seen.add(y);
      if (y > previous) ascending++;
      assert.notEqual(y - previous, 1n);
      previous = y;
    }
    // A random permutation ascends half the time (20,000 steps: far inside 45–55 %).
    assert.ok(ascending > 9_000 && ascending < 11_000, `${ascending} of 20000 steps ascend`);
  });

  it('depends on the key, and refuses a key of another size or a value outside the domain', () => {
    const other = feistel(randomBytes(32));
    const differ = [1n, 2n, 3n, 4n, 5n].filter((x) => other.forward(x) !== p.forward(x)).length;
    assert.ok(differ >= 4);
    assert.throws(() => feistel(randomBytes(16)), /32 bytes/);
    assert.throws(() => p.forward(opaqueSeqLimit), RangeError);
    assert.throws(() => p.forward(-1n), RangeError);
    assert.throws(() => p.backward(opaqueSeqLimit), RangeError);
  });
});

describe('payee ids: the public number', () => {
  const cutoff = 1000n;
  const ids = payeeIds({ key, legacySeqMax: cutoff });

  it('keeps the number of a link made before the cutoff; later links get the opaque range, below 2^53', () => {
    assert.equal(ids.idOf(1n), 'pye_1');
    assert.equal(ids.idOf('1000'), 'pye_1000');
    for (const seq of [cutoff + 1n, cutoff + 2n, 123_456_789n, opaqueSeqLimit - 1n]) {
      const n = ids.numberOf(seq);
      assert.ok(n >= opaqueBase && n < opaqueBase + opaqueSeqLimit, `${seq} → ${n}`);
      assert.ok(n <= BigInt(Number.MAX_SAFE_INTEGER), 'a JavaScript number holds it exactly');
      assert.equal(ids.idOf(seq), `pye_${n}`);
      assert.equal(ids.seqOf(`pye_${n}`), seq);
      assert.equal(ids.seqOf(String(n)), seq, 'prefix optional');
    }
    assert.throws(() => ids.numberOf(0n), RangeError);
    assert.throws(() => ids.numberOf(opaqueSeqLimit), RangeError);
  });

  it('round-trips any sequence on either side of the cutoff', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: opaqueSeqLimit - 1n }), (seq) => ids.seqOf(ids.idOf(seq)) === seq),
      { numRuns: 2000 },
    );
    for (let seq = 1n; seq <= cutoff + 50n; seq++) assert.equal(ids.seqOf(ids.idOf(seq)), seq);
  });

  it('an old-form number of a new link and the opaque form of an old link name nothing', () => {
    assert.equal(ids.seqOf(`pye_${cutoff + 1n}`), undefined);
    assert.equal(ids.seqOf(`pye_${opaqueBase - 1n}`), undefined);
    // The opaque number a link of sequence 7 would have had if it were made after the cutoff.
    const asNew = payeeIds({ key, legacySeqMax: 0n }).numberOf(7n);
    assert.equal(ids.seqOfNumber(asNew), undefined);
    assert.equal(ids.seqOfNumber(7n), 7n);
  });

  it('with no link before the cutoff (a new installation) every number is opaque', () => {
    const fresh = payeeIds({ key, legacySeqMax: 0n });
    assert.ok(fresh.numberOf(1n) >= opaqueBase);
    assert.equal(fresh.seqOf('pye_1'), undefined);
    assert.equal(fresh.seqOf(fresh.idOf(1n)), 1n);
  });

  it('reads nothing from malformed, zero, negative, over-long or out-of-range input', () => {
    const garbage = [
      '',
      'pye_',
      'pye',
      '0',
      'pye_0',
      'pye_01',
      '-1',
      'pye_-1',
      '1.5',
      '1e5',
      ' 1',
      '1 ',
      'PYE_1',
      'pye_pye_1',
      'pye_１',
      'rmt_1',
      '9'.repeat(20),
      `pye_${2n ** 63n}`,
      `pye_${2n ** 64n}`,
      `pye_${opaqueBase + opaqueSeqLimit}`,
      'x'.repeat(10_000),
    ];
    for (const id of garbage) assert.equal(ids.seqOf(id), undefined, JSON.stringify(id.slice(0, 40)));
    assert.equal(payeeNumberOf(`pye_${2n ** 63n - 1n}`), 2n ** 63n - 1n);
    assert.equal(payeeNumberOf(`pye_${2n ** 63n}`), undefined);
  });

  it('refuses a cutoff that reaches the opaque range', () => {
    assert.throws(() => payeeIds({ key, legacySeqMax: opaqueBase }), /overlaps/);
    assert.throws(() => payeeIds({ key, legacySeqMax: -1n }), /overlaps/);
  });
});
