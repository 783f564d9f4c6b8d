/**
 * Exchange's pure rules: pricing, fees, rounding, limits, posting rules (property tests:
 * every execution's entries balance per asset, rounding is in the service's favour, no path
 * creates money), the simulated market's movement and staleness, and the catalogue defaults.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { conversionBuyLines, conversionSellLines, exchangeBuyLines, exchangeSellLines } from '../src/money/index.js';
import { convert, rateAfterSpread, ratioOf } from '../src/money/conversion.js';
import { isStale } from '../src/upstreams/rates/port.js';
import { SimulatedMarket, driftBps } from '../src/upstreams/rates/simulator.js';
import {
  bpsUp,
  limitBreach,
  needsStepUp,
  priceExchange,
  quoteRequestIdentity,
  type PriceInput,
} from '../src/modules/exchange/rules.js';
import { defaultDirections, defaultEarnProducts } from '../src/db/migrations/017_exchange_earn.js';
import { checkedEntry, memberNet, simulatedMarketOn } from './support/fixtures.js';

const runs = { numRuns: 400 };
const entry = checkedEntry;

const rateArb = fc
  .tuple(fc.integer({ min: 1, max: 10_000_000 }), fc.integer({ min: 0, max: 12 }))
  .map(([n, p]) => {
    const s = n.toString().padStart(p + 1, '0');
    return p === 0 ? s : `${s.slice(0, -p)}.${s.slice(-p)}`.replace(/\.?0+$/, '') || '0';
  })
  .filter((r) => ratioOf(r).num > 0n);

const priceArb: fc.Arbitrary<PriceInput> = fc.record({
  fromAmount: fc.bigInt({ min: 1n, max: 10n ** 20n }),
  fromScale: fc.constantFrom(2, 6, 8, 18),
  toScale: fc.constantFrom(2, 6, 8, 18),
  midRate: rateArb,
  spreadBps: fc.integer({ min: 0, max: 5000 }),
  feeSide: fc.constantFrom('from' as const, 'to' as const),
  feeBps: fc.integer({ min: 0, max: 1000 }),
  feeFixed: fc.bigInt({ min: 0n, max: 10n ** 6n }),
});

describe('exchange pricing', () => {
  /** Selling USDT (scale 6) at a fee of 0.1 % and no fixed part: what changes between the worked examples. */
  const sellingUsdt = (input: Pick<PriceInput, 'fromAmount' | 'toScale' | 'midRate' | 'spreadBps' | 'feeSide'>) =>
    priceExchange({ ...input, fromScale: 6, feeBps: 10, feeFixed: 0n });
  const workedExamples: { title: string; sold: Parameters<typeof sellingUsdt>[0]; price: object; why: string }[] = [
    {
      title: 'a worked example: 100 USDT to EUR, fee 0.1 % on the from side, spread 30 bps',
      sold: { fromAmount: 100_000_000n, toScale: 2, midRate: '0.925925925925', spreadBps: 30, feeSide: 'from' },
      price: { rate: '0.9231481481', fee: 100_000n, toAmount: 9222n },
      why: 'fee 0.1 USDT; (100 - 0.1) × 0.9231481481 = 92.2225 → 92.22',
    },
    {
      title: 'a worked example: 1000 USDT to BTC, fee on the to side',
      sold: { fromAmount: 1_000_000_000n, toScale: 8, midRate: '0.000015384615', spreadBps: 50, feeSide: 'to' },
      price: { rate: '0.0000153076', fee: 1531n, toAmount: 1_530_760n - 1531n },
      why: 'the fee is 0.1 % of 0.01530760 BTC, rounded up',
    },
  ];
  for (const { title, sold, price, why } of workedExamples)
    it(title, () => {
      const p = sellingUsdt(sold);
      assert.ok(!('refusal' in p));
      assert.deepEqual({ rate: p.rate, fee: p.fee, toAmount: p.toAmount }, price, why);
    });

  it(
    "the member never gets more than the exact value at the mid rate (rounding and fees in the service's " + 'favour)',
    () => {
      fc.assert(
        fc.property(priceArb, (input) => {
          const p = priceExchange(input);
          if ('refusal' in p) return;
          // exact: toAmount / 10^toScale <= fromAmount / 10^fromScale × mid
          const mid = ratioOf(input.midRate);
          const lhs = p.toAmount * mid.den * 10n ** BigInt(input.fromScale);
          const rhs = input.fromAmount * mid.num * 10n ** BigInt(input.toScale);
          assert.ok(lhs <= rhs);
          assert.ok(ratioOf(p.rate).num * mid.den <= mid.num * ratioOf(p.rate).den, 'rate ≤ mid');
          assert.ok(p.toAmount > 0n && p.fee >= 0n);
        }),
        runs,
      );
    },
  );

  it('the fee is at least fee_bps of its side (rounded up) plus the fixed part, and never the whole of it', () => {
    fc.assert(
      fc.property(priceArb, (input) => {
        const p = priceExchange(input);
        if ('refusal' in p) return;
        if (p.feeSide === 'from') {
          assert.equal(p.fee, bpsUp(input.fromAmount, input.feeBps) + input.feeFixed);
          assert.ok(p.fee < input.fromAmount);
          assert.equal(p.toAmount, convert(input.fromAmount - p.fee, input.fromScale, input.toScale, p.rate, 'down'));
        } else {
          const gross = convert(input.fromAmount, input.fromScale, input.toScale, p.rate, 'down');
          assert.equal(p.fee, bpsUp(gross, input.feeBps) + input.feeFixed);
          assert.equal(p.toAmount + p.fee, gross);
        }
      }),
      runs,
    );
  });

  it('a fee that consumes the amount, and an amount that converts to nothing, are refusals', () => {
    // At rate 1 with no spread and no percentage fee: only the amounts and the fixed fee decide.
    const atPar = { midRate: '1', spreadBps: 0, feeBps: 0, toScale: 2 } as const;
    const refused: [PriceInput, string][] = [
      [{ ...atPar, fromAmount: 5n, fromScale: 6, feeSide: 'from', feeFixed: 5n }, 'fee_consumes_principal'],
      [{ ...atPar, fromAmount: 1n, fromScale: 6, feeSide: 'from', feeFixed: 0n }, 'converts_to_nothing'],
      [{ ...atPar, fromAmount: 100n, fromScale: 2, feeSide: 'to', feeFixed: 100n }, 'fee_consumes_principal'],
    ];
    for (const [input, refusal] of refused) assert.deepEqual(priceExchange(input), { refusal });
  });

  it('is monotonic: more sold never buys less', () => {
    fc.assert(
      fc.property(priceArb, fc.bigInt({ min: 1n, max: 10n ** 12n }), (input, extra) => {
        const a = priceExchange(input);
        const b = priceExchange({ ...input, fromAmount: input.fromAmount + extra });
        if ('refusal' in a || 'refusal' in b) return;
        assert.ok(b.toAmount >= a.toAmount);
      }),
      runs,
    );
  });

  it('the spread rounds the rate down', () => {
    fc.assert(
      fc.property(rateArb, fc.integer({ min: 0, max: 5000 }), (mid, bps) => {
        const r = ratioOf(rateAfterSpread(mid, bps));
        const m = ratioOf(mid);
        assert.ok(r.num * m.den * 10_000n <= m.num * r.den * BigInt(10_000 - bps));
      }),
      runs,
    );
  });
});

describe('exchange limits', () => {
  const limits = { minAmount: 100n, maxAmount: 1000n, memberDailyAmount: 1500n, memberDailyCount: 3 };
  it(
    "below the minimum and above the single cap are amount_out_of_range; the day's amount and count are " +
      'limit_exceeded daily/member',
    () => {
      assert.deepEqual(limitBreach(99n, limits, { amount: 0n, count: 0 }), {
        kind: 'amount_out_of_range',
        which: 'below_minimum',
      });
      assert.deepEqual(limitBreach(1001n, limits, { amount: 0n, count: 0 }), {
        kind: 'amount_out_of_range',
        which: 'above_single_cap',
      });
      assert.equal(limitBreach(1000n, limits, { amount: 500n, count: 0 }), undefined);
      assert.deepEqual(limitBreach(1000n, limits, { amount: 501n, count: 0 }), {
        kind: 'limit_exceeded',
        limit_type: 'daily',
        limit_scope: 'member',
      });
      assert.deepEqual(limitBreach(100n, limits, { amount: 0n, count: 3 }), {
        kind: 'limit_exceeded',
        limit_type: 'daily',
        limit_scope: 'member',
      });
      assert.equal(
        limitBreach(
          10n ** 30n,
          { minAmount: 1n, maxAmount: null, memberDailyAmount: null, memberDailyCount: null },
          { amount: 10n ** 30n, count: 10 ** 6 },
        ),
        undefined,
      );
    },
  );
  it('property: an accepted execution keeps the day within its limits', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 3000n }),
        fc.bigInt({ min: 0n, max: 3000n }),
        fc.integer({ min: 0, max: 5 }),
        (amount, used, count) => {
          if (limitBreach(amount, limits, { amount: used, count }) === undefined) {
            assert.ok(
              amount >= limits.minAmount &&
                amount <= limits.maxAmount &&
                used + amount <= limits.memberDailyAmount &&
                count + 1 <= limits.memberDailyCount,
            );
          }
        },
      ),
      runs,
    );
  });
  it('step-up at or above the threshold; none without one', () => {
    assert.equal(needsStepUp(99n, 100n), false);
    assert.equal(needsStepUp(100n, 100n), true);
    assert.equal(needsStepUp(10n ** 20n, null), false);
  });
});

describe('exchange posting rules', () => {
  const moneyArb = fc
    .record({
      memberId: fc.constant('mem_1'),
      merchantId: fc.constant('mch_1'),
      fromAmount: fc.bigInt({ min: 2n, max: 10n ** 20n }),
      toAmount: fc.bigInt({ min: 1n, max: 10n ** 20n }),
      fee: fc.bigInt({ min: 0n, max: 10n ** 6n }),
      feeSide: fc.constantFrom('from' as const, 'to' as const),
    })
    .filter((m) => m.feeSide === 'to' || m.fee < m.fromAmount);

  /** `check` holds for every execution the generator makes. */
  const forAnyExecution = (check: (m: Parameters<typeof exchangeSellLines>[0]) => void) =>
    fc.assert(fc.property(moneyArb, check), runs);

  it(
    'both entries of every execution balance, and the member spends exactly from_amount and receives exactly ' +
      'to_amount',
    () => {
      forAnyExecution((m) => {
        const sell = exchangeSellLines(m);
        const buy = exchangeBuyLines(m);
        entry('USDT', sell);
        entry('BTC', buy);
        assert.equal(memberNet(sell), -m.fromAmount);
        assert.equal(memberNet(buy), m.toAmount);
      });
    },
  );

  it("no path creates money: custody = members + settlement holds per asset (the ledger's custody equation)", () => {
    forAnyExecution((m) => {
      for (const lines of [exchangeSellLines(m), exchangeBuyLines(m)]) {
        const members = memberNet(lines);
        const custody = lines
          .filter((l) => l.account.owner === 'merchant' && l.account.bucket === 'custody')
          .reduce((s, l) => s + (l.side === 'debit' ? l.amount : -l.amount), 0n);
        const settlement = -lines
          .filter((l) => l.account.owner === 'platform' && l.account.bucket === 'settlement_clearing')
          .reduce((s, l) => s + (l.side === 'debit' ? l.amount : -l.amount), 0n);
        assert.equal(custody, members + settlement);
      }
    });
  });

  it('merchant conversions balance and touch only prepaid and platform accounts', () => {
    forAnyExecution((m) => {
      const sell = conversionSellLines(m);
      const buy = conversionBuyLines(m);
      entry('USDT', sell);
      entry('EUR', buy);
      for (const l of [...sell, ...buy])
        assert.ok(l.account.owner === 'platform' || (l.account.owner === 'merchant' && l.account.bucket === 'prepaid'));
    });
  });
});

describe('the simulated market', () => {
  const call = { merchantId: 'm', environment: 'sandbox' as const };
  it("moves volatile codes with the caller's clock, deterministically, within ±2 %", async () => {
    let now = new Date('2026-01-01T00:00:00Z');
    const market = simulatedMarketOn(() => now);
    const a = await market.mid(call, 'USDT', 'BTC');
    const again = await market.mid(call, 'USDT', 'BTC');
    assert.deepEqual(a, again);
    now = new Date('2026-01-01T05:00:00Z');
    const b = await market.mid(call, 'USDT', 'BTC');
    assert.ok(a.kind === 'rate' && b.kind === 'rate');
    assert.notEqual(a.rate, b.rate);
    assert.equal(
      ((await market.mid(call, 'USDT', 'EUR')) as { rate: string }).rate,
      '0.925925925925',
      'stable and fiat codes do not move',
    );
    for (let h = 0; h < 500; h++) assert.ok(Math.abs(driftBps('BTC', h)) <= 200);
  });
  it('a halted feed keeps its time, and the service treats it as stale after the maximum age', async () => {
    let now = new Date('2026-01-01T00:00:00Z');
    const market = simulatedMarketOn(() => now);
    market.halt('BTC', now);
    now = new Date('2026-01-01T00:02:00Z');
    const r = await market.mid(call, 'USDT', 'BTC');
    assert.ok(r.kind === 'rate');
    assert.equal(r.asOf, '2026-01-01T00:00:00.000Z');
    assert.equal(isStale(r.asOf, now, 60), true);
    assert.equal(isStale(r.asOf, new Date('2026-01-01T00:00:30Z'), 60), false);
    market.halt('BTC', undefined);
    assert.equal(isStale(((await market.mid(call, 'USDT', 'BTC')) as { asOf: string }).asOf, now, 60), false);
  });
  it(
    'a feed halted in real time is fresh on a sandbox clock already ahead, and stale once that clock moves ' +
      'past the maximum age',
    async () => {
      const real = new Date('2026-01-01T00:00:00Z');
      let ahead = new Date('2026-01-02T00:00:00Z');
      const market = new SimulatedMarket(
        undefined,
        async (c) => (c.merchantId === 'ahead' ? ahead : real),
        () => real,
      );
      market.halt('BTC', real);
      const first = await market.mid({ merchantId: 'ahead', environment: 'sandbox' }, 'USDT', 'BTC');
      assert.ok(first.kind === 'rate');
      assert.equal(first.asOf, '2026-01-02T00:00:00.000Z', "the halt on the caller's clock");
      assert.equal(isStale(first.asOf, ahead, 60), false);
      ahead = new Date('2026-01-02T00:02:00Z');
      const later = await market.mid({ merchantId: 'ahead', environment: 'sandbox' }, 'USDT', 'BTC');
      assert.equal((later as { asOf: string }).asOf, '2026-01-02T00:00:00.000Z', 'an advance does not move the halt');
      assert.equal(isStale((later as { asOf: string }).asOf, ahead, 60), true);
      // A caller on real time sees the halt at its real moment.
      assert.equal(
        ((await market.mid({ merchantId: 'other', environment: 'sandbox' }, 'USDT', 'BTC')) as { asOf: string }).asOf,
        '2026-01-01T00:00:00.000Z',
      );
    },
  );
});

describe('the default catalogue (migration 017 against extensions 7)', () => {
  it(
    'both ways between USDT and BTC, ETH, USDC, EUR, USD; conversion pairs USDC, BTC, EUR; a flexible and a ' +
      '30-day USDT product',
    () => {
      const pairs = defaultDirections.map((d) => `${d.from_asset}>${d.to_asset}`).sort();
      assert.deepEqual(pairs, [
        'BTC>USDT',
        'ETH>USDT',
        'EUR>USDT',
        'USD>USDT',
        'USDC>USDT',
        'USDT>BTC',
        'USDT>ETH',
        'USDT>EUR',
        'USDT>USD',
        'USDT>USDC',
      ]);
      assert.deepEqual(
        defaultDirections
          .filter((d) => d.merchant_conversion)
          .map((d) => `${d.from_asset}>${d.to_asset}`)
          .sort(),
        ['BTC>USDT', 'EUR>USDT', 'USDC>USDT', 'USDT>BTC', 'USDT>EUR', 'USDT>USDC'],
      );
      for (const d of defaultDirections)
        assert.ok(BigInt(d.min_amount) < BigInt(d.max_amount) && BigInt(d.max_amount) <= BigInt(d.member_daily_amount));
      assert.deepEqual(
        defaultEarnProducts.map((p) => [p.asset, p.type, p.term_days]),
        [
          ['USDT', 'flexible', 0],
          ['USDT', 'fixed', 30],
        ],
      );
    },
  );
});

describe('quote request identity (the locked quote idempotency comparison)', () => {
  it('meets asset case and a zero tail of the amount, nothing else; total on any body', () => {
    const base = quoteRequestIdentity({ from_asset: 'USDT', to_asset: 'USDC', from_amount: '250', lock: true });
    assert.deepEqual(
      quoteRequestIdentity({ from_asset: 'usdt', to_asset: 'UsDc', from_amount: '250.000', lock: true }),
      base,
    );
    assert.deepEqual(
      quoteRequestIdentity({ from_asset: 'USDT', to_asset: 'USDC', from_amount: '250.50', lock: true }),
      { from_asset: 'USDT', to_asset: 'USDC', from_amount: '250.5', lock: true },
    );
    for (const amount of ['0250', '250.', '2.5e2', ' 250', '-250']) {
      assert.notDeepEqual(
        quoteRequestIdentity({ from_asset: 'USDT', to_asset: 'USDC', from_amount: amount, lock: true }),
        base,
        amount,
      );
    }
    for (const body of [null, undefined, 'x', 3, [1], { from_amount: 250 }])
      assert.doesNotThrow(() => quoteRequestIdentity(body));
  });
});
