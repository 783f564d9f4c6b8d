/**
 * Remittance orders' pure rules (src/modules/remittance/orders/rules.ts), without a server: the
 * price (fee on top, FX through the rate service, every rounding in the service's favour), the
 * corridor's limits, and the posting rules of an order (src/money/posting-rules/remittance.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { CorridorLimits } from '../src/modules/remittance/corridors/rules.js';
import {
  limitBreach,
  priceOrder,
  remitReferenceType,
  type Price,
  type PriceInput,
} from '../src/modules/remittance/orders/rules.js';
import { ratioOf } from '../src/money/conversion.js';
import {
  remitCompleteLines,
  remitFailLines,
  remitFreezeLines,
  remitEntryKinds,
  remitReturnLines,
  type EntryLine,
} from '../src/money/index.js';
import { checkedEntry } from './support/fixtures.js';

const runs = { numRuns: 200 };

describe('entry kinds', () => {
  it('one kind per move, under the order as reference', () => {
    assert.equal(remitReferenceType, 'remittance_order');
    assert.deepEqual(Object.values(remitEntryKinds).sort(), [
      'remittance.complete',
      'remittance.fail',
      'remittance.freeze',
      'remittance.return',
    ]);
  });
  it('a return gives back the amount and keeps the fee; a failure gives back both', () => {
    const p = { memberId: 'mem_1', merchantId: 'mch_1', amount: 1_000n, fee: 15n };
    const credited = (lines: EntryLine[]) =>
      lines
        .filter((l) => l.side === 'credit' && l.account.owner === 'member' && l.account.bucket === 'available')
        .reduce((sum, l) => sum + l.amount, 0n);
    assert.equal(credited(remitReturnLines(p)), 1_000n);
    assert.equal(credited(remitFailLines(p)), 1_015n);
    assert.equal(credited(remitFreezeLines(p)), 0n);
  });
});

describe('price, limits and posting rules', () => {
  // Same currency: no FX, rate 1.
  const sameCurrency = { sourceScale: 2, payoutScale: 2, midRate: '1', fxSpreadBps: 0 };
  const workedPrices: { title: string; order: PriceInput; price: Price }[] = [
    {
      title: 'a fixed fee of zero adds nothing; a price with no fee at all charges nothing',
      order: { ...sameCurrency, sourceAmount: 1n, feeBps: 0, feeFixedPayout: 0n },
      price: { rate: '1.0000000000', payoutAmount: 1n, fee: 0n },
    },
    {
      title: 'prices a same-currency order: rate 1, fee on top',
      order: { ...sameCurrency, sourceAmount: 100_00n, feeBps: 50, feeFixedPayout: 1_00n },
      price: { rate: '1.0000000000', payoutAmount: 100_00n, fee: 50n + 100n },
    },
    {
      title: 'prices a conversion: payout rounded down, fee rounded up, spread lowers the rate',
      // 100 USDT (scale 6) to EUR at mid 0.925925925925 less 30 bps.
      order: {
        sourceAmount: 100_000_000n,
        sourceScale: 6,
        payoutScale: 2,
        midRate: '0.925925925925',
        fxSpreadBps: 30,
        feeBps: 50,
        feeFixedPayout: 100n,
      },
      // 0.5 % of 100 USDT = 0.5 USDT; 1.00 EUR / 0.9231481481 = 1.083250… USDT, rounded up.
      price: { rate: '0.9231481481', payoutAmount: 9231n, fee: 500_000n + 1_083_250n },
    },
  ];
  for (const { title, order, price } of workedPrices) it(title, () => assert.deepEqual(priceOrder(order), price));
  it('property: never pays out more, never charges less, than exact arithmetic', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 15n }),
        fc.integer({ min: 1, max: 99_999_999 }),
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 0, max: 300 }),
        fc.bigInt({ min: 0n, max: 10_000n }),
        (source, rateMicros, spread, feeBps, fixed) => {
          const mid = `${Math.floor(rateMicros / 1_000_000)}.${String(rateMicros % 1_000_000).padStart(6, '0')}`;
          const p = priceOrder({
            sourceAmount: source,
            sourceScale: 6,
            payoutScale: 2,
            midRate: mid,
            fxSpreadBps: spread,
            feeBps,
            feeFixedPayout: fixed,
          });
          const r = ratioOf(p.rate);
          const m = ratioOf(mid);
          assert.ok(
            r.num * m.den * 10_000n <=
              m.num * r.den * BigInt(10_000 - spread) + (m.den * r.den * 10_000n) / 10n ** 10n + 1n,
            'rate at most mid less spread',
          );
          // payout * 10^6 * den <= source * num * 10^2
          assert.ok(p.payoutAmount * 10n ** 6n * r.den <= source * r.num * 10n ** 2n);
          assert.ok((p.payoutAmount + 1n) * 10n ** 6n * r.den > source * r.num * 10n ** 2n);
          assert.ok(p.fee * 10_000n >= source * BigInt(feeBps));
        },
      ),
      runs,
    );
  });
  const limits: CorridorLimits = {
    payoutMin: 100n,
    memberSingleMax: 1_000_00n,
    memberDailyMax: 2_000_00n,
    merchantSingleMax: 5_000_00n,
    merchantDailyMax: 3_000_00n,
  };
  it('limits: minimum, single and daily, member before merchant', () => {
    const none = { member: 0n, merchant: 0n };
    assert.deepEqual(limitBreach(99n, limits, none), { kind: 'amount_out_of_range' });
    assert.equal(limitBreach(100n, limits, none), undefined);
    assert.deepEqual(limitBreach(1_000_01n, limits, none), {
      kind: 'limit_exceeded',
      limit_type: 'single',
      limit_scope: 'member',
    });
    assert.deepEqual(limitBreach(900_00n, { ...limits, merchantSingleMax: 800_00n }, none), {
      kind: 'limit_exceeded',
      limit_type: 'single',
      limit_scope: 'merchant',
    });
    assert.deepEqual(limitBreach(600_00n, limits, { member: 1_500_00n, merchant: 0n }), {
      kind: 'limit_exceeded',
      limit_type: 'daily',
      limit_scope: 'member',
    });
    assert.equal(
      limitBreach(500_00n, limits, { member: 1_500_00n, merchant: 0n }),
      undefined,
      'exactly at the daily limit',
    );
    assert.deepEqual(limitBreach(600_00n, limits, { member: 0n, merchant: 2_500_00n }), {
      kind: 'limit_exceeded',
      limit_type: 'daily',
      limit_scope: 'merchant',
    });
    assert.equal(
      limitBreach(
        10n ** 12n,
        { payoutMin: 1n, memberSingleMax: null, memberDailyMax: null, merchantSingleMax: null, merchantDailyMax: null },
        none,
      ),
      undefined,
    );
  });
  it('property: every posting rule balances, whatever the amounts', () => {
    const money = fc.record({
      amount: fc.bigInt({ min: 1n, max: 10n ** 30n }),
      fee: fc.bigInt({ min: 0n, max: 10n ** 20n }),
    });
    fc.assert(
      fc.property(money, ({ amount, fee }) => {
        const p = { memberId: 'mem_1', merchantId: 'mch_1', amount, fee };
        for (const lines of [
          remitFreezeLines(p),
          remitCompleteLines(p),
          remitFailLines(p),
          remitReturnLines(p),
        ] as EntryLine[][]) {
          checkedEntry('USDT', lines);
        }
        assert.equal(remitCompleteLines(p).length, fee > 0n ? 4 : 2);
      }),
      runs,
    );
  });
});
