/** Pure rules of card top-ups (src/modules/cards/topups/rules.ts): price, payment priority, dispatch check. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { arrivalAt, payingAsset, priceTopUp, topUpDispatchProblem } from '../src/modules/cards/topups/rules.js';
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
