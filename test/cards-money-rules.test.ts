/** The pure rules of a card's money: top-up price, payment priority, the authorisation decision, the posting rules. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertEntry,
  topUpCreditLines,
  topUpFailLines,
  topUpFreezeLines,
  topUpSettleLines,
  authHoldLines,
  clearingLines,
  clearingSplit,
  refundLines,
  reversalLines,
} from '../src/money/index.js';
import { arrivalAt, payingAsset, priceTopUp, topUpDispatchProblem } from '../src/modules/cards/topups/rules.js';
import {
  authorizationExpired,
  authorizationExpiresAt,
  authorizationHoldDays,
  clearableHold,
  decideAuthorization,
  effectiveLimits,
  heldOf,
  limitCounted,
  reversalOf,
  ruleVerdict,
  type AuthorizationFacts,
} from '../src/modules/cards/transactions/rules.js';
import { cardStopped } from '../src/modules/cards/cards/state.js';
import { rateAfterSpread } from '../src/money/conversion.js';

const pricing = { feeBps: 100, feeFixed: 0n, topupMin: 1000n, topupMaxSingle: 1_000_000n };

describe('top-up price', () => {
  it('fee on top, rounded up; 1:1 estimate rounded down; the range on the 1:1 value', () => {
    assert.deepEqual(priceTopUp(100_000_000n, 6, 2, pricing), {
      amount: 100_000_000n,
      fee: 1_000_000n,
      customerTotal: 101_000_000n,
      arrivalEstimate: 10_000n,
    });
    assert.deepEqual(priceTopUp(10_005_001n, 6, 2, pricing), {
      amount: 10_005_001n,
      fee: 100_051n,
      customerTotal: 10_105_052n,
      arrivalEstimate: 1000n,
    });
    assert.deepEqual(priceTopUp(9_990_000n, 6, 2, pricing), { kind: 'amount_out_of_range', which: 'below_minimum' });
    assert.deepEqual(priceTopUp(10_000_000_001n, 6, 2, pricing), {
      kind: 'amount_out_of_range',
      which: 'above_single_cap',
    });
    assert.equal('kind' in priceTopUp(10_000_000_000n, 6, 2, pricing), false);
    assert.deepEqual(priceTopUp(0n, 6, 2, pricing), { kind: 'amount_out_of_range', which: 'converts_to_nothing' });
    // A fixed part in the card currency, taken 1:1 into the source asset.
    assert.equal((priceTopUp(100_000_000n, 6, 2, { ...pricing, feeFixed: 150n }) as { fee: bigint }).fee, 2_500_000n);
  });

  it('arrives at the real rate fixed at creation, rounded down', () => {
    assert.equal(arrivalAt(50_000_000n, 6, 2, rateAfterSpread('1', 50)), 4975n);
    assert.equal(arrivalAt(50_000_000n, 6, 2, '1'), 5000n);
    assert.equal(arrivalAt(1_999_999n, 6, 2, '1'), 199n);
  });
});

describe('payment priority', () => {
  const c = (code: string, enabled: boolean, available: bigint, total = 100n) => ({ code, enabled, available, total });
  it('keeps a usable preference; otherwise the product order, first covering, else first enabled', () => {
    const list = [c('USDT', true, 50n), c('USDC', true, 500n)];
    assert.equal(payingAsset('usdt', list), 'USDT');
    assert.equal(payingAsset('BTC', list), 'USDC');
    assert.equal(payingAsset(undefined, list), 'USDC');
    assert.equal(payingAsset(undefined, [c('USDT', true, 0n), c('USDC', true, 0n)]), 'USDT');
    assert.equal(payingAsset('USDT', [c('USDT', false, 500n), c('USDC', true, 0n)]), 'USDC');
    assert.equal(payingAsset('USDT', [c('USDT', false, 500n), c('USDC', false, 500n)]), undefined);
  });
});

describe('authorisation decision', () => {
  const none = { single: 0n, daily: 0n, monthly: 0n };
  const base: AuthorizationFacts = {
    cardStatus: 'active',
    cardFrozenAt: null,
    cardCurrency: 'USD',
    amount: 1000n,
    currency: 'USD',
    merchantName: 'Shop',
    mcc: '5411',
    rules: null,
    cardLimits: none,
    productLimits: { single: 100_000n, daily: 200_000n, monthly: 1_000_000n },
    spentToday: 0n,
    spentThisMonth: 0n,
    balance: 5000n,
  };
  const reason = (patch: Partial<AuthorizationFacts>) => {
    const d = decideAuthorization({ ...base, ...patch });
    return d.approved ? 'approved' : d.reason;
  };

  it('approves within every rule, up to the limits and the balance inclusive', () => {
    assert.equal(reason({}), 'approved');
    assert.equal(reason({ amount: 5000n }), 'approved');
    assert.equal(
      reason({ cardLimits: { single: 1000n, daily: 2000n, monthly: 3000n }, spentToday: 1000n, spentThisMonth: 2000n }),
      'approved',
    );
  });

  it('declines in order: status, currency, amount, rules, single, daily, monthly (card layer first), balance', () => {
    for (const s of ['unactivated', 'closing', 'closed', 'expired', 'replaced'] as const)
      assert.equal(reason({ cardStatus: s }), 'card_not_active');
    // An active card frozen by a security replacement spends nothing either (cardCanSpend).
    assert.equal(reason({ cardFrozenAt: new Date('2026-01-01T00:00:00Z') }), 'card_not_active');
    assert.equal(reason({ cardStatus: 'closed', currency: 'EUR' }), 'card_not_active');
    assert.equal(reason({ currency: 'EUR' }), 'currency_not_supported');
    assert.equal(reason({ amount: 0n }), 'invalid_amount');
    assert.equal(
      reason({ rules: { ruleType: 'white', merchantNames: ['Other'], mccList: [] } }),
      'merchant_not_allowed',
    );
    assert.equal(
      reason({
        rules: { ruleType: 'black', merchantNames: [], mccList: ['5411'] },
        cardLimits: { single: 1n, daily: 0n, monthly: 0n },
      }),
      'merchant_blocked',
    );
    assert.equal(reason({ cardLimits: { single: 999n, daily: 0n, monthly: 0n } }), 'card_limit_single');
    assert.equal(
      reason({ productLimits: { single: 999n, daily: 200_000n, monthly: 1_000_000n } }),
      'product_limit_single',
    );
    assert.equal(
      reason({
        cardLimits: { single: 999n, daily: 0n, monthly: 0n },
        productLimits: { single: 999n, daily: 999n, monthly: 999n },
      }),
      'card_limit_single',
    );
    assert.equal(
      reason({ cardLimits: { single: 0n, daily: 1500n, monthly: 0n }, spentToday: 501n }),
      'card_limit_daily',
    );
    assert.equal(reason({ spentToday: 199_001n }), 'product_limit_daily');
    assert.equal(
      reason({ cardLimits: { single: 0n, daily: 0n, monthly: 3000n }, spentThisMonth: 2001n }),
      'card_limit_monthly',
    );
    assert.equal(reason({ spentThisMonth: 999_001n }), 'product_limit_monthly');
    assert.equal(
      reason({ cardLimits: { single: 0n, daily: 1500n, monthly: 0n }, spentToday: 501n, spentThisMonth: 999_001n }),
      'card_limit_daily',
    );
    assert.equal(reason({ balance: 999n }), 'insufficient_funds');
    assert.equal(reason({ balance: 999n, spentToday: 199_001n }), 'product_limit_daily');
  });

  it('matches merchant names trimmed and case-insensitively, MCCs exactly', () => {
    const white = { ruleType: 'white' as const, merchantNames: [' Coffee Bar'], mccList: ['5812'] };
    assert.equal(ruleVerdict(white, 'COFFEE BAR ', '0000'), undefined);
    assert.equal(ruleVerdict(white, 'Tea Room', '5812'), undefined);
    assert.equal(ruleVerdict(white, 'Coffee Barn', '5813'), 'merchant_not_allowed');
    const black = { ...white, ruleType: 'black' as const };
    assert.equal(ruleVerdict(black, 'coffee bar', '0000'), 'merchant_blocked');
    assert.equal(ruleVerdict(black, 'Tea Room', '5812'), 'merchant_blocked');
    assert.equal(ruleVerdict(black, 'Tea Room', '5813'), undefined);
    assert.equal(ruleVerdict(null, 'x', '0000'), undefined);
  });

  it('effective limits: per layer the tighter of recorded and confirmed, 0 = none', () => {
    assert.deepEqual(
      effectiveLimits({ single: 100n, daily: 0n, monthly: 500n }, { single: 0n, daily: 300n, monthly: 400n }),
      { single: 100n, daily: 300n, monthly: 400n },
    );
  });
});

describe('posting rules balance', () => {
  const entry = (lines: ReturnType<typeof authHoldLines>) =>
    assertEntry({
      environment: 'sandbox',
      merchantId: 'mch_1',
      kind: 'k',
      referenceType: 'r',
      referenceId: 'i',
      asset: 'USD',
      lines,
    });
  const cardId = 'crd_00000000-0000-4000-8000-000000000000';
  const money = { memberId: 'mem_1', merchantId: 'mch_1', cardId, amount: 5000n, fee: 50n, arrival: 497n };
  it('every top-up and transaction entry balances', () => {
    for (const lines of [
      topUpFreezeLines(money),
      topUpSettleLines(money),
      topUpSettleLines({ ...money, fee: 0n }),
      topUpCreditLines(money),
      topUpFailLines(money),
    ])
      entry(lines);
    const move = { memberId: 'mem_1', merchantId: 'mch_1', cardId, amount: 700n };
    for (const lines of [authHoldLines(move), reversalLines(move), refundLines(move)]) entry(lines);
    for (const cleared of [0n, 300n, 700n, 900n])
      entry(clearingLines({ memberId: 'mem_1', merchantId: 'mch_1', cardId, held: 700n, cleared }));
    for (const cleared of [0n, 300n, 700n, 900n])
      entry(clearingLines({ memberId: 'mem_1', merchantId: 'mch_1', cardId, held: 700n, cleared }, 'available'));
    for (const lines of [
      reversalLines(move, 'available'),
      refundLines(move, 'available'),
      topUpCreditLines(money, 'available'),
    ])
      entry(lines);
  });
  it(
    'once the card stopped, what comes back goes to available, never onto card:<id> (the card whose balance ' +
      'was returned)',
    () => {
      const move = { memberId: 'mem_1', merchantId: 'mch_1', cardId, amount: 700n };
      const credited = (lines: ReturnType<typeof authHoldLines>) =>
        lines.filter((l) => l.side === 'credit').map((l) => l.account.bucket);
      assert.deepEqual(credited(reversalLines(move, 'available')), ['available']);
      assert.deepEqual(reversalLines(move, 'available').find((l) => l.side === 'debit')!.account.bucket, 'card_held');
      assert.deepEqual(credited(refundLines(move, 'available')), ['available']);
      assert.deepEqual(credited(topUpCreditLines(money, 'available')), ['available']);
      assert.deepEqual(
        credited(
          clearingLines({ memberId: 'mem_1', merchantId: 'mch_1', cardId, held: 700n, cleared: 500n }, 'available'),
        ),
        ['settlement_clearing', 'available'],
      );
      assert.deepEqual(credited(reversalLines(move)), ['card']);
      for (const status of ['closing', 'closed', 'replaced', 'expired'] as const)
        assert.equal(cardStopped({ status, frozenAt: null }), true);
      for (const status of ['unactivated', 'active'] as const)
        assert.equal(cardStopped({ status, frozenAt: null }), false);
      assert.equal(cardStopped({ status: 'active', frozenAt: new Date(0) }), true);
    },
  );
  it('a clearing takes from the hold first, releases the rest, or takes the difference from the card', () => {
    assert.deepEqual(clearingSplit(700n, 700n), { fromHeld: 700n, released: 0n, extra: 0n });
    assert.deepEqual(clearingSplit(700n, 500n), { fromHeld: 500n, released: 200n, extra: 0n });
    assert.deepEqual(clearingSplit(700n, 900n), { fromHeld: 700n, released: 0n, extra: 200n });
  });
});

describe('top-up dispatch', () => {
  const at = new Date('2026-01-01T00:00:00Z');
  it('a card that can still take a load dispatches; a replacement only requested stops nothing yet', () => {
    assert.equal(topUpDispatchProblem({ status: 'active', frozenAt: null }, false), undefined);
    assert.equal(topUpDispatchProblem({ status: 'unactivated', frozenAt: null }, false), undefined);
  });
  it('a card that stopped fails its pending top-ups, with the reason of the stop', () => {
    assert.equal(topUpDispatchProblem({ status: 'closing', frozenAt: null }, false), 'card_closing');
    assert.equal(topUpDispatchProblem({ status: 'closed', frozenAt: null }, false), 'card_closed');
    assert.equal(topUpDispatchProblem({ status: 'replaced', frozenAt: at }, false), 'card_replaced');
    assert.equal(topUpDispatchProblem({ status: 'expired', frozenAt: null }, false), 'card_expired');
    assert.equal(topUpDispatchProblem({ status: 'active', frozenAt: at }, false), 'card_frozen');
    assert.equal(topUpDispatchProblem({ status: 'unactivated', frozenAt: null }, true), 'card_replacing');
    // Every stopped card is refused (the same set as cardStopped).
    for (const status of ['unactivated', 'active', 'closing', 'closed', 'replaced', 'expired'] as const) {
      for (const frozenAt of [null, at]) {
        assert.equal(
          topUpDispatchProblem({ status, frozenAt }, false) !== undefined,
          cardStopped({ status, frozenAt }),
          `${status} ${String(frozenAt)}`,
        );
      }
    }
  });
});

describe('authorisation holds', () => {
  const t0 = new Date('2026-03-10T12:00:00Z');
  it('last 7 days; 30 for lodging, vehicle rental and cruise lines', () => {
    for (const mcc of ['5411', '5812', '4111', '3350', '4000', '7010', '7514'])
      assert.equal(authorizationHoldDays(mcc), 7, mcc);
    for (const mcc of ['7011', '7512', '7513', '7519', '4411', '3351', '3500', '3501', '3999'])
      assert.equal(authorizationHoldDays(mcc), 30, mcc);
    assert.equal(authorizationExpiresAt(t0, '5411').toISOString(), '2026-03-17T12:00:00.000Z');
    assert.equal(authorizationExpiresAt(t0, '7011').toISOString(), '2026-04-09T12:00:00.000Z');
  });
  it('expire only while approved, at their time inclusive', () => {
    const expiresAt = authorizationExpiresAt(t0, '5411');
    assert.equal(authorizationExpired({ status: 'approved', expiresAt }, new Date(expiresAt.getTime() - 1)), false);
    assert.equal(authorizationExpired({ status: 'approved', expiresAt }, expiresAt), true);
    for (const status of ['cleared', 'reversed', 'declined', 'posted'] as const)
      assert.equal(authorizationExpired({ status, expiresAt }, new Date(expiresAt.getTime() + 1)), false);
    assert.equal(authorizationExpired({ status: 'approved', expiresAt: null }, new Date(8.64e15)), false);
  });
  it('hold what was authorised less what was released; partial and full reversals within the hold', () => {
    assert.equal(heldOf({ status: 'approved', amount: 10_000n, reversedAmount: 2_500n }), 7_500n);
    assert.equal(heldOf({ status: 'reversed', amount: 10_000n, reversedAmount: 10_000n }), 0n);
    assert.equal(heldOf({ status: 'cleared', amount: 10_000n, reversedAmount: 0n }), 0n);
    assert.deepEqual(reversalOf(7_500n, undefined), { amount: 7_500n, full: true });
    assert.deepEqual(reversalOf(7_500n, 7_500n), { amount: 7_500n, full: true });
    assert.deepEqual(reversalOf(7_500n, 1n), { amount: 1n, full: false });
    assert.equal(reversalOf(7_500n, 7_501n), undefined);
    assert.equal(reversalOf(7_500n, 0n), undefined);
    assert.equal(reversalOf(0n, undefined), undefined);
  });
  it(
    'clear against the remaining hold; after an expiry as a late presentment with no hold; never after a ' +
      'network reversal or twice',
    () => {
      assert.equal(
        clearableHold({ status: 'approved', amount: 10_000n, reversedAmount: 4_000n, reversalReason: null }),
        6_000n,
      );
      assert.equal(
        clearableHold({ status: 'reversed', amount: 10_000n, reversedAmount: 10_000n, reversalReason: 'expired' }),
        0n,
      );
      assert.equal(
        clearableHold({ status: 'reversed', amount: 10_000n, reversedAmount: 10_000n, reversalReason: 'network' }),
        undefined,
      );
      assert.equal(
        clearableHold({ status: 'cleared', amount: 10_000n, reversedAmount: 0n, reversalReason: null }),
        undefined,
      );
      assert.equal(
        clearableHold({ status: 'declined', amount: 10_000n, reversedAmount: 0n, reversalReason: null }),
        undefined,
      );
      // A late presentment takes all of it from the card.
      const cardId = 'crd_00000000-0000-4000-8000-000000000000';
      assertEntry({
        environment: 'sandbox',
        merchantId: 'mch_x',
        kind: 'card.clearing',
        referenceType: 'card_transaction',
        referenceId: 'ctx_x',
        asset: 'USD',
        lines: clearingLines({ memberId: 'mem_x', merchantId: 'mch_x', cardId, held: 0n, cleared: 3_000n }),
      });
      assert.deepEqual(
        clearingLines({ memberId: 'm', merchantId: 'mch_x', cardId, held: 0n, cleared: 3_000n }).map(
          (l) => `${l.side}:${l.account.bucket}:${l.amount}`,
        ),
        ['debit:card:3000', 'credit:settlement_clearing:3000'],
      );
    },
  );
  it(
    'count against the limits what they hold or spent: the remaining hold, the cleared amount; nothing ' +
      'reversed, expired or declined',
    () => {
      const a = { amount: 10_000n, clearedAmount: 0n, reversedAmount: 0n };
      assert.equal(limitCounted({ ...a, status: 'approved' }), 10_000n);
      assert.equal(limitCounted({ ...a, status: 'approved', reversedAmount: 3_000n }), 7_000n);
      assert.equal(limitCounted({ ...a, status: 'cleared', clearedAmount: 6_000n, reversedAmount: 3_000n }), 6_000n);
      assert.equal(limitCounted({ ...a, status: 'cleared', clearedAmount: 12_000n }), 12_000n);
      assert.equal(limitCounted({ ...a, status: 'reversed', reversedAmount: 10_000n }), 0n);
      assert.equal(limitCounted({ ...a, status: 'declined' }), 0n);
    },
  );
});
