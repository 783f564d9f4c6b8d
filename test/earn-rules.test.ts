/**
 * Earn's pure rules (src/modules/earn/rules.ts), without a server: daily interest rounded down,
 * the APR as text, the entry kinds, and posting rules that balance and name where interest comes
 * from (the platform's earn_interest account kept for the order's merchant).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  assertEntry,
  earnMaturityLines as maturityLines,
  earnPayoutLines as payoutLines,
  earnRedeemLines as redeemLines,
  earnSubscribeLines as subscribeLines,
  type EntryLine,
  earnEntryKinds,
} from '../src/money/index.js';
import { aprText, dailyInterest, earnReferenceType } from '../src/modules/earn/rules.js';
import { checkedEntry, memberNet } from './support/fixtures.js';

const holder = { memberId: 'mem_1', merchantId: 'mch_1' };
const changes = (lines: EntryLine[], merchantId = holder.merchantId) => {
  const out: Record<string, bigint> = {};
  const entry = {
    environment: 'sandbox' as const,
    merchantId,
    kind: earnEntryKinds.subscribe,
    referenceType: earnReferenceType,
    referenceId: 'ern_1',
    asset: 'USDT',
    lines,
  };
  for (const c of assertEntry(entry).values()) out[`${c.ref.owner}:${c.ref.bucket}`] = c.delta;
  return out;
};

describe('interest', () => {
  it("principal × apr / 365, rounded down (in the service's favour)", () => {
    assert.equal(dailyInterest(365_0000n, 10_000), 1_0000n, '100 % a year on 365.0000: 1.0000 a day');
    assert.equal(dailyInterest(1_000_000n, 365), 100n, '3.65 %');
    assert.equal(dailyInterest(9_999n, 365), 0n, '0.9999 rounds down to 0');
    assert.equal(dailyInterest(10_000n, 365), 1n);
    assert.equal(dailyInterest(0n, 500), 0n);
    assert.equal(dailyInterest(1_000_000n, 0), 0n);
  });
  it('a negative principal is a bug', () => {
    assert.throws(() => dailyInterest(-1n, 100), /negative principal/);
  });
  it('property: never more than the exact value, less by under one unit', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 24n }), fc.integer({ min: 0, max: 100_000 }), (p, bps) => {
        const i = dailyInterest(p, bps);
        const exact = p * BigInt(bps); // × 1 / (10000 × 365)
        assert.ok(i * 3_650_000n <= exact);
        assert.ok((i + 1n) * 3_650_000n > exact);
      }),
      { numRuns: 300 },
    );
  });
  it('aprText: basis points as a decimal fraction', () => {
    assert.equal(aprText(365), '0.0365');
    assert.equal(aprText(0), '0.0000');
    assert.equal(aprText(1), '0.0001');
    assert.equal(aprText(10_000), '1.0000');
    assert.equal(aprText(12_345), '1.2345');
  });
});

describe('posting rules', () => {
  it('kinds: one per step, a flexible payout per day', () => {
    assert.equal(earnReferenceType, 'earn_order');
    assert.equal(earnEntryKinds.subscribe, 'earn.subscribe');
    assert.equal(earnEntryKinds.payout(1), 'earn.payout.d1');
    assert.notEqual(earnEntryKinds.payout(1), earnEntryKinds.payout(2));
  });
  it('subscribe: available → earn; redeem: earn → available', () => {
    assert.deepEqual(changes(subscribeLines('mem_1', 500n)), { 'member:available': -500n, 'member:earn': 500n });
    assert.deepEqual(changes(redeemLines('mem_1', 500n)), { 'member:available': 500n, 'member:earn': -500n });
  });
  it("payout: the merchant's interest account pays the member's available", () => {
    const lines = payoutLines(holder, 7n);
    assert.equal(changes(lines)['member:available'], 7n);
    assert.deepEqual(lines.find((l) => l.side === 'debit')!.account, {
      owner: 'platform',
      bucket: 'earn_interest',
      merchantId: 'mch_1',
    });
    assert.throws(() => changes(lines, 'mch_2'), /kept for mch_1/);
  });
  it('maturity: principal and interest to available; no interest line when there is none', () => {
    const withInterest = maturityLines(holder, 1_000n, 12n);
    assert.equal(withInterest.length, 3);
    const c = changes(withInterest);
    assert.equal(c['member:earn'], -1_000n);
    assert.equal(c['member:available'], 1_012n);
    const none = maturityLines(holder, 1_000n, 0n);
    assert.equal(none.length, 2);
    assert.deepEqual(changes(none), { 'member:available': 1_000n, 'member:earn': -1_000n });
  });
  it('property: every rule balances; subscribe then redeem nets to nothing', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 24n }),
        fc.bigInt({ min: 0n, max: 10n ** 20n }),
        (principal, interest) => {
          changes(subscribeLines('mem_1', principal));
          changes(redeemLines('mem_1', principal));
          if (interest > 0n) changes(payoutLines(holder, interest));
          const m = changes(maturityLines(holder, principal, interest));
          assert.equal(m['member:available'], principal + interest);
          const a = changes(subscribeLines('mem_1', principal));
          const b = changes(redeemLines('mem_1', principal));
          for (const k of Object.keys(a)) assert.equal(a[k]! + b[k]!, 0n);
        },
      ),
      { numRuns: 200 },
    );
  });
});

// Moved from exchange-rules.test.ts (earn has its own file): the same properties, checked by the
// ledger's own entry rules.
const runs = { numRuns: 400 };
const entry = checkedEntry;

describe('earn rules', () => {
  it('daily interest is principal × apr / 365 rounded down; a month at 3.65 % on 1000 USDT is 3.000000', () => {
    assert.equal(dailyInterest(1_000_000_000n, 365), 100_000n);
    assert.equal(dailyInterest(1n, 365), 0n);
    assert.equal(aprText(365), '0.0365');
    assert.equal(aprText(10_000), '1.0000');
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 24n }), fc.integer({ min: 0, max: 10_000 }), (p, apr) => {
        const i = dailyInterest(p, apr);
        assert.ok(i * 10_000n * 365n <= p * BigInt(apr) && (i + 1n) * 10_000n * 365n > p * BigInt(apr));
      }),
      runs,
    );
  });
  it('every earn entry balances; interest always comes from the named platform account', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 20n }), fc.bigInt({ min: 0n, max: 10n ** 12n }), (p, i) => {
        entry('USDT', subscribeLines('mem_1', p));
        entry('USDT', redeemLines('mem_1', p));
        const mature = maturityLines({ memberId: 'mem_1', merchantId: 'mch_1' }, p, i);
        entry('USDT', mature);
        assert.equal(memberNet(mature), i, 'the member gains exactly the interest');
        if (i > 0n) {
          entry('USDT', payoutLines({ memberId: 'mem_1', merchantId: 'mch_1' }, i));
          assert.ok(
            mature.some(
              (l) =>
                l.account.owner === 'platform' &&
                l.account.bucket === 'earn_interest' &&
                l.account.merchantId === 'mch_1' &&
                l.side === 'debit' &&
                l.amount === i,
            ),
          );
        }
      }),
      runs,
    );
  });
});
