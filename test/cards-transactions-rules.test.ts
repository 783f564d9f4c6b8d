/**
 * Pure rules of card transactions (src/modules/cards/transactions/rules.ts), without a server: an
 * authorisation's hold (what it counts against the limits, how long it lasts by MCC, boundaries of
 * the extended ranges, when it has expired, what a reversal or a clearing may take from it) and the
 * authorisation decision.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  authorizationExpired,
  authorizationExpiresAt,
  authorizationHoldDays,
  authorizationHoldDaysDefault,
  authorizationHoldDaysExtended,
  clearableHold,
  heldOf,
  limitCounted,
  reversalOf,
  decideAuthorization,
  effectiveLimits,
  ruleVerdict,
  type AuthorizationFacts,
} from '../src/modules/cards/transactions/rules.js';
import { assertEntry, clearingLines } from '../src/money/index.js';
import type { CardTransactionStatus } from '../src/modules/cards/transactions/tables.js';

const statuses: CardTransactionStatus[] = ['approved', 'declined', 'cleared', 'reversed', 'posted'];

describe('limitCounted', () => {
  const a = { amount: 100n, clearedAmount: 120n, reversedAmount: 30n };
  it('approved: the hold still in place; cleared: the cleared amount; otherwise nothing', () => {
    assert.equal(limitCounted({ ...a, status: 'approved' }), 70n);
    assert.equal(limitCounted({ ...a, status: 'cleared' }), 120n, 'more than authorised counts as cleared');
    assert.equal(limitCounted({ ...a, status: 'cleared', clearedAmount: 40n }), 40n);
    for (const status of ['reversed', 'declined', 'posted'] as const)
      assert.equal(limitCounted({ ...a, status }), 0n, status);
  });
});

describe('hold duration', () => {
  it('7 days by default, 30 for lodging, vehicle rental and cruise lines', () => {
    assert.equal(authorizationHoldDaysDefault, 7);
    assert.equal(authorizationHoldDaysExtended, 30);
    for (const mcc of ['4411', '7011', '7512', '7513', '7519']) assert.equal(authorizationHoldDays(mcc), 30, mcc);
    for (const mcc of ['5411', '5812', '7510', '4412', '0000']) assert.equal(authorizationHoldDays(mcc), 7, mcc);
  });
  it('the ranges 3351–3999 are extended, their neighbours are not', () => {
    assert.equal(authorizationHoldDays('3350'), 7);
    assert.equal(authorizationHoldDays('3351'), 30);
    assert.equal(authorizationHoldDays('3500'), 30);
    assert.equal(authorizationHoldDays('3501'), 30);
    assert.equal(authorizationHoldDays('3999'), 30);
    assert.equal(authorizationHoldDays('4000'), 7);
  });
  it("only four digits count: a longer or non-numeric code in the range's order is not extended", () => {
    assert.equal(authorizationHoldDays('35000'), 7);
    assert.equal(authorizationHoldDays('36a0'), 7);
    assert.equal(authorizationHoldDays('351'), 7);
  });
  it('expires that many days after the authorisation; expired at that instant, not a millisecond before', () => {
    const at = new Date('2026-03-01T10:00:00.000Z');
    const grocery = authorizationExpiresAt(at, '5411');
    assert.equal(grocery.toISOString(), '2026-03-08T10:00:00.000Z');
    assert.equal(authorizationExpiresAt(at, '7011').toISOString(), '2026-03-31T10:00:00.000Z');
    const open = { status: 'approved' as const, expiresAt: grocery };
    assert.equal(authorizationExpired(open, new Date(grocery.getTime() - 1)), false);
    assert.equal(authorizationExpired(open, grocery), true);
    assert.equal(authorizationExpired({ status: 'approved', expiresAt: null }, new Date('2100-01-01')), false);
    for (const status of statuses.filter((s) => s !== 'approved')) {
      assert.equal(authorizationExpired({ status, expiresAt: grocery }, new Date('2100-01-01')), false, status);
    }
  });
});

describe('holds, reversals and clearings', () => {
  it('heldOf: the authorised amount less what was released, while approved', () => {
    assert.equal(heldOf({ status: 'approved', amount: 100n, reversedAmount: 0n }), 100n);
    assert.equal(heldOf({ status: 'approved', amount: 100n, reversedAmount: 40n }), 60n);
    for (const status of statuses.filter((s) => s !== 'approved'))
      assert.equal(heldOf({ status, amount: 100n, reversedAmount: 0n }), 0n, status);
  });
  it('reversalOf: all by default; more than zero and at most the hold; full when it takes all', () => {
    assert.deepEqual(reversalOf(60n, undefined), { amount: 60n, full: true });
    assert.deepEqual(reversalOf(60n, 60n), { amount: 60n, full: true });
    assert.deepEqual(reversalOf(60n, 59n), { amount: 59n, full: false });
    assert.deepEqual(reversalOf(60n, 1n), { amount: 1n, full: false });
    assert.equal(reversalOf(60n, 61n), undefined);
    assert.equal(reversalOf(60n, 0n), undefined);
    assert.equal(reversalOf(60n, -5n), undefined);
    assert.equal(reversalOf(0n, undefined), undefined, 'nothing held: nothing to reverse');
  });
  it('property: successive partial reversals never release more than was authorised', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.array(fc.bigInt({ min: -5n, max: 10n ** 12n }), { maxLength: 20 }),
        (amount, requests) => {
          let reversed = 0n;
          let status: CardTransactionStatus = 'approved';
          for (const r of requests) {
            const out = reversalOf(heldOf({ status, amount, reversedAmount: reversed }), r);
            if (!out) continue;
            reversed += out.amount;
            if (out.full) status = 'reversed';
          }
          assert.ok(reversed <= amount);
          assert.equal(status === 'reversed', reversed === amount);
          assert.equal(
            heldOf({ status, amount, reversedAmount: reversed }),
            status === 'approved' ? amount - reversed : 0n,
          );
        },
      ),
      { numRuns: 200 },
    );
  });
  it(
    'clearableHold: approved clears against its remaining hold; an expired hold is a late presentment (0); ' +
      'others refused',
    () => {
      const base = { amount: 100n, reversedAmount: 25n, reversalReason: null };
      assert.equal(clearableHold({ ...base, status: 'approved' }), 75n);
      assert.equal(clearableHold({ ...base, status: 'reversed', reversalReason: 'expired' }), 0n);
      assert.equal(clearableHold({ ...base, status: 'reversed', reversalReason: 'network' }), undefined);
      for (const status of ['declined', 'cleared', 'posted'] as const)
        assert.equal(clearableHold({ ...base, status }), undefined, status);
    },
  );
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
