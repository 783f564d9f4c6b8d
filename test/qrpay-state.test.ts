/**
 * The QR payment order's state machine (src/modules/qrpay/state.ts), without a server: open
 * statuses, what callers see, and what the payment call's answer and a status query's answer mean
 * for an order (the shared order lifecycle with QR pay's `complete_and_refund`).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  decideOnCall,
  decideOnQuery,
  isOpen,
  openStatuses,
  publicStatus,
  recheckDelayMs,
  type OrderFacts,
} from '../src/modules/qrpay/state.js';
import type { QrPayOrderStatus } from '../src/modules/qrpay/tables.js';

const all: QrPayOrderStatus[] = ['processing', 'suspended', 'completed', 'failed', 'refunded'];
const grace = 60_000;

describe('statuses', () => {
  it('processing and suspended are open; the rest are final', () => {
    assert.deepEqual([...openStatuses], ['processing', 'suspended']);
    assert.deepEqual(all.filter(isOpen), ['processing', 'suspended']);
  });
  it('callers see suspended as processing, the others as they are', () => {
    assert.deepEqual(all.map(publicStatus), ['processing', 'processing', 'completed', 'failed', 'refunded']);
  });
});

describe("the payment call's answer", () => {
  it('a refusal fails the order; no answer keeps it open, never failed on that alone', () => {
    assert.deepEqual(decideOnCall({ kind: 'rejected', reason: 'limit' }), {
      kind: 'fail',
      reason: 'upstream_rejected',
    });
    assert.deepEqual(decideOnCall({ kind: 'timeout' }), { kind: 'wait', outcome: 'timeout' });
    assert.deepEqual(decideOnCall({ kind: 'unknown', reason: '502' }), { kind: 'wait', outcome: 'unknown' });
  });
  it("accepted: by the provider's status", () => {
    const accepted = (status: string) => decideOnCall({ kind: 'accepted', providerOrderId: 'QP1', status, detail: {} });
    assert.deepEqual(accepted('processing'), {
      kind: 'wait',
      outcome: 'accepted',
      providerOrderId: 'QP1',
      providerStatus: 'processing',
    });
    assert.deepEqual(accepted('succeeded'), { kind: 'complete', providerOrderId: 'QP1', providerStatus: 'succeeded' });
    assert.deepEqual(accepted('failed'), {
      kind: 'fail',
      reason: 'upstream_failed',
      providerOrderId: 'QP1',
      providerStatus: 'failed',
    });
    assert.deepEqual(accepted('refunded'), {
      kind: 'complete_and_refund',
      providerOrderId: 'QP1',
      providerStatus: 'refunded',
    });
    assert.deepEqual(accepted('SETTLING'), {
      kind: 'suspend',
      alertKind: 'upstream.unknown_status',
      providerOrderId: 'QP1',
      providerStatus: 'SETTLING',
    });
  });
});

describe("a status query's answer", () => {
  const open = (over: Partial<OrderFacts> = {}): OrderFacts => ({
    status: 'processing',
    upstreamOutcome: 'accepted',
    callAgeMs: grace + 1,
    ...over,
  });
  const found = (status: string) => ({ kind: 'found' as const, providerOrderId: 'QP1', status });

  it('a closed order learns nothing', () => {
    for (const status of ['completed', 'failed', 'refunded'] as const) {
      assert.deepEqual(decideOnQuery(open({ status }), found('succeeded'), grace), { kind: 'none' }, status);
    }
  });
  it('a query that fails teaches nothing', () => {
    assert.deepEqual(decideOnQuery(open(), { kind: 'timeout' }, grace), { kind: 'none' });
    assert.deepEqual(decideOnQuery(open(), { kind: 'unknown', reason: 'x' }, grace), { kind: 'none' });
  });
  it('found: completes, fails, refunds or waits; an unknown status suspends once', () => {
    assert.equal(decideOnQuery(open(), found('succeeded'), grace).kind, 'complete');
    assert.equal(decideOnQuery(open(), found('failed'), grace).kind, 'fail');
    assert.equal(decideOnQuery(open(), found('refunded'), grace).kind, 'complete_and_refund');
    assert.deepEqual(decideOnQuery(open(), found('processing'), grace), {
      kind: 'wait',
      outcome: 'accepted',
      providerOrderId: 'QP1',
      providerStatus: 'processing',
    });
    assert.equal(decideOnQuery(open(), found('WEIRD'), grace).kind, 'suspend');
    assert.deepEqual(decideOnQuery(open({ status: 'suspended' }), found('WEIRD'), grace), {
      kind: 'wait',
      outcome: 'accepted',
      providerOrderId: 'QP1',
      providerStatus: 'WEIRD',
    });
    assert.equal(
      decideOnQuery(open({ status: 'suspended' }), found('succeeded'), grace).kind,
      'complete',
      'a suspended order still settles',
    );
  });
  it('not found: nothing within the grace; past it, failed if never acknowledged', () => {
    assert.deepEqual(
      decideOnQuery(open({ upstreamOutcome: 'timeout', callAgeMs: grace - 1 }), { kind: 'not_found' }, grace),
      { kind: 'none' },
    );
    assert.deepEqual(
      decideOnQuery(open({ upstreamOutcome: 'timeout', callAgeMs: grace }), { kind: 'not_found' }, grace),
      { kind: 'fail', reason: 'upstream_not_found' },
    );
    assert.deepEqual(decideOnQuery(open({ upstreamOutcome: 'pending' }), { kind: 'not_found' }, grace), {
      kind: 'fail',
      reason: 'upstream_not_found',
    });
  });
  it('not found after the provider accepted it: an anomaly for the operator, raised once', () => {
    assert.deepEqual(decideOnQuery(open(), { kind: 'not_found' }, grace), {
      kind: 'suspend',
      alertKind: 'upstream.order_missing',
      providerStatus: 'not_found',
    });
    assert.deepEqual(decideOnQuery(open({ status: 'suspended' }), { kind: 'not_found' }, grace), { kind: 'none' });
  });
  it('re-query delay: base·2^(checks-1), capped; base 0 means at once', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((n) => recheckDelayMs(n, 1_000, 10_000)),
      [1_000, 2_000, 4_000, 8_000, 10_000],
    );
    assert.equal(recheckDelayMs(0, 1_000, 10_000), 1_000);
    assert.equal(recheckDelayMs(1_000, 1_000, 60_000), 60_000);
    assert.equal(recheckDelayMs(3, 0, 10_000), 0);
  });
});
