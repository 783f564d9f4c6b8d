/**
 * QR payments' posting rules (src/modules/qrpay/rules.ts), without a server or a database: each
 * entry balances (the ledger's own check, assertEntry), moves exactly the accounts it names in the
 * right direction, and the order's possible paths (freeze → complete [→ refund], freeze → fail)
 * leave the member and the platform where they should be.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  assertEntry,
  qrpayCompleteLines,
  qrpayFailLines,
  qrpayFreezeLines,
  qrpayRefundLines,
  type EntryLine,
  qrpayEntryKinds,
} from '../src/money/index.js';
import { qrpayReferenceType } from '../src/modules/qrpay/rules.js';

const merchantId = 'mch_1';
const memberId = 'mem_1';

/** The balance change of each account an entry touches (`owner:bucket` → change), checked by the ledger's own rules. */
function changes(lines: EntryLine[], merchant = merchantId): Map<string, bigint> {
  const out = new Map<string, bigint>();
  const entry = {
    environment: 'sandbox' as const,
    merchantId: merchant,
    kind: qrpayEntryKinds.freeze,
    referenceType: qrpayReferenceType,
    referenceId: 'qro_1',
    asset: 'USDT',
    lines,
  };
  for (const change of assertEntry(entry).values()) out.set(`${change.ref.owner}:${change.ref.bucket}`, change.delta);
  return out;
}

/** Sum of several entries' changes per account, accounts left at zero dropped. */
function net(...entries: EntryLine[][]): Record<string, bigint> {
  const total: Record<string, bigint> = {};
  for (const lines of entries) for (const [k, d] of changes(lines)) total[k] = (total[k] ?? 0n) + d;
  return Object.fromEntries(Object.entries(total).filter(([, d]) => d !== 0n));
}

describe('QR payment posting rules', () => {
  const amount = 12_345n;

  it('names its reference type and one kind per step', () => {
    assert.equal(qrpayReferenceType, 'qrpay_order');
    assert.deepEqual(qrpayEntryKinds, {
      freeze: 'qrpay.freeze',
      complete: 'qrpay.complete',
      fail: 'qrpay.fail',
      refund: 'qrpay.refund',
    });
  });

  it('freeze: the member available → frozen, nothing else', () => {
    assert.deepEqual(Object.fromEntries(changes(qrpayFreezeLines({ memberId, amount }))), {
      'member:available': -amount,
      'member:frozen': amount,
    });
  });

  it('complete: frozen cleared to the platform settlement clearing kept for the merchant', () => {
    const lines = qrpayCompleteLines({ memberId, merchantId, amount });
    const c = changes(lines);
    assert.equal(c.get('member:frozen'), -amount);
    assert.equal(c.size, 2);
    assert.ok(c.has('platform:settlement_clearing'));
    const platform = lines.find((l) => l.account.owner === 'platform')!;
    assert.deepEqual(platform.account, { owner: 'platform', bucket: 'settlement_clearing', merchantId });
    assert.equal(platform.side, 'credit');
  });

  it('fail: the freeze released in full (frozen → available)', () => {
    assert.deepEqual(Object.fromEntries(changes(qrpayFailLines({ memberId, amount }))), {
      'member:available': amount,
      'member:frozen': -amount,
    });
  });

  it('refund: settlement clearing → the member available', () => {
    const lines = qrpayRefundLines({ memberId, merchantId, amount });
    const c = changes(lines);
    assert.equal(c.get('member:available'), amount);
    assert.equal(c.size, 2);
    assert.equal(lines.find((l) => l.account.owner === 'platform')!.side, 'debit');
  });

  it("the platform account is the order merchant's: another merchant's entry is refused by the ledger", () => {
    assert.throws(
      () => changes(qrpayCompleteLines({ memberId, merchantId, amount }), 'mch_2'),
      /touches the platform settlement_clearing kept for mch_1/,
    );
    assert.throws(() => changes(qrpayRefundLines({ memberId, merchantId, amount }), 'mch_2'), /kept for mch_1/);
  });

  it('a zero or negative amount is refused by the ledger', () => {
    assert.throws(() => changes(qrpayFreezeLines({ memberId, amount: 0n })), /bigint > 0n/);
    assert.throws(() => changes(qrpayCompleteLines({ memberId, merchantId, amount: -1n })), /bigint > 0n/);
  });

  it('property: each rule balances; paths net out as the order ends', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 30n }), (amt) => {
        const p = { memberId, merchantId, amount: amt };
        const freeze = qrpayFreezeLines(p);
        const complete = qrpayCompleteLines(p);
        const fail = qrpayFailLines(p);
        const refund = qrpayRefundLines(p);
        for (const lines of [freeze, complete, fail, refund]) {
          const debits = lines.filter((l) => l.side === 'debit').reduce((s, l) => s + l.amount, 0n);
          const credits = lines.filter((l) => l.side === 'credit').reduce((s, l) => s + l.amount, 0n);
          assert.equal(debits, credits);
          assert.ok(lines.every((l) => l.amount === amt));
        }
        // Failed: nothing moved in the end.
        assert.deepEqual(net(freeze, fail), {});
        // Completed: the member paid, nothing left frozen; the money sits with settlement clearing.
        const paid = net(freeze, complete);
        assert.equal(paid['member:available'], -amt);
        assert.equal(paid['member:frozen'], undefined);
        assert.equal(Object.keys(paid).length, 2);
        // Refunded after completion: back where it started.
        assert.deepEqual(net(freeze, complete, refund), {});
      }),
      { numRuns: 200 },
    );
  });
});
