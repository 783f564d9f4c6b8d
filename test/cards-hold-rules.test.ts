/**
 * An authorisation's hold (src/modules/cards/transactions/rules.ts), without a server: what it counts
 * against the limits, how long it lasts by MCC (boundaries of the extended ranges), when it has
 * expired, what a reversal or a clearing may take from it.
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
} from '../src/modules/cards/transactions/rules.js';
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
