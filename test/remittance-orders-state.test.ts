/**
 * The remittance order state machine (src/modules/remittance/orders/state.ts), without a server:
 * what a payout call's and a status query's answers mean, the return watch's decisions and
 * schedule, the public statuses and the moves each status may be reached from.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  decideOnCall,
  decideOnQuery,
  decideOnReturnCheck,
  isOpen,
  movesFrom,
  nextReturnCheckOffset,
  publicStatus,
  publicStatuses,
  recheckDelayMs,
  returnCheckOffsetsSeconds,
  statusesOf,
} from '../src/modules/remittance/orders/state.js';

/** The provider's acceptance of a payout call as RM1, in `status`, with `detail`. */
const accepted = (status: string, detail: Record<string, string> = {}) =>
  ({ kind: 'accepted', providerOrderId: 'RM1', status, detail }) as const;

describe('statuses', () => {
  it('a suspended order shows as processing, and the processing filter finds it', () => {
    assert.deepEqual(statusesOf('processing'), ['processing', 'suspended']);
    for (const s of publicStatuses) {
      for (const internal of statusesOf(s)) assert.equal(publicStatus(internal), s);
    }
  });
  it('only processing and suspended orders are open', () => {
    assert.ok(isOpen('processing'));
    assert.ok(isOpen('suspended'));
    for (const s of ['pending', 'completed', 'failed', 'returned'] as const) assert.equal(isOpen(s), false, s);
  });
  it('a return is reached only from completed; a completion never from pending; a failure from any open status', () => {
    assert.deepEqual(movesFrom.returned, ['completed']);
    assert.deepEqual(movesFrom.processing, ['pending']);
    assert.equal(movesFrom.completed.includes('pending'), false);
    assert.deepEqual([...movesFrom.failed].sort(), ['pending', 'processing', 'suspended']);
  });
});

describe('the return watch', () => {
  it('asks at 1 h, 1, 3, 7, 14 and 30 days after completion, then no more', () => {
    assert.deepEqual(
      returnCheckOffsetsSeconds.map((s) => s / 3_600),
      [1, 24, 72, 168, 336, 720],
    );
    assert.equal(nextReturnCheckOffset(0), 3_600);
    assert.equal(nextReturnCheckOffset(5), 30 * 86_400);
    assert.equal(nextReturnCheckOffset(6), undefined);
  });
  it('returns only a completed order the provider reports refunded', () => {
    const refunded = { kind: 'found', providerOrderId: 'RM', status: 'refunded' } as const;
    assert.deepEqual(decideOnReturnCheck('completed', { kind: 'found', providerOrderId: 'RM', status: 'succeeded' }), {
      kind: 'none',
    });
    assert.deepEqual(decideOnReturnCheck('completed', { kind: 'timeout' }), { kind: 'none' });
    assert.deepEqual(decideOnReturnCheck('returned', refunded), { kind: 'none' }, 'never twice');
  });
  it('an accepted payout call without a payout date carries none', () => {
    assert.deepEqual(decideOnCall(accepted('processing', { payout_date: '' })), {
      kind: 'wait',
      outcome: 'accepted',
      providerOrderId: 'RM1',
      providerStatus: 'processing',
    });
  });
});

describe('order state machine', () => {
  it('decides on the payout call', () => {
    assert.deepEqual(decideOnCall({ kind: 'rejected', reason: 'x' }), { kind: 'fail', reason: 'upstream_rejected' });
    assert.deepEqual(decideOnCall({ kind: 'timeout' }), { kind: 'wait', outcome: 'timeout' });
    assert.deepEqual(decideOnCall({ kind: 'unknown', reason: '5xx' }), { kind: 'wait', outcome: 'unknown' });
    assert.deepEqual(decideOnCall(accepted('processing', { payout_date: '2025-01-06' })), {
      kind: 'wait',
      outcome: 'accepted',
      providerOrderId: 'RM1',
      providerStatus: 'processing',
      payoutDate: '2025-01-06',
    });
    assert.deepEqual(decideOnCall(accepted('succeeded', { payout_date: '2025-01-06' })), {
      kind: 'complete',
      providerOrderId: 'RM1',
      providerStatus: 'succeeded',
      payoutDate: '2025-01-06',
    });
    assert.deepEqual(decideOnCall(accepted('SANDBOX_UNKNOWN_STATUS')), {
      kind: 'suspend',
      alertKind: 'upstream.unknown_status',
      providerOrderId: 'RM1',
      providerStatus: 'SANDBOX_UNKNOWN_STATUS',
    });
  });
  it('decides on a status query; never fails an order on a timeout', () => {
    const open = { status: 'processing' as const, upstreamOutcome: 'timeout' as const, callAgeMs: 120_000 };
    assert.deepEqual(decideOnQuery(open, { kind: 'timeout' }, 60_000), { kind: 'none' });
    assert.deepEqual(decideOnQuery(open, { kind: 'unknown', reason: 'x' }, 60_000), { kind: 'none' });
    assert.deepEqual(
      decideOnQuery({ ...open, callAgeMs: 1_000 }, { kind: 'not_found' }, 60_000),
      { kind: 'none' },
      'within the grace',
    );
    assert.deepEqual(decideOnQuery(open, { kind: 'not_found' }, 60_000), {
      kind: 'fail',
      reason: 'upstream_not_found',
    });
    assert.deepEqual(decideOnQuery({ ...open, upstreamOutcome: 'accepted' }, { kind: 'not_found' }, 60_000), {
      kind: 'suspend',
      alertKind: 'upstream.order_missing',
      providerStatus: 'not_found',
    });
    assert.deepEqual(decideOnQuery(open, { kind: 'found', providerOrderId: 'RM', status: 'succeeded' }, 0), {
      kind: 'complete',
      providerOrderId: 'RM',
      providerStatus: 'succeeded',
    });
    assert.deepEqual(decideOnQuery(open, { kind: 'found', providerOrderId: 'RM', status: 'refunded' }, 0), {
      kind: 'complete_and_return',
      providerOrderId: 'RM',
      providerStatus: 'refunded',
    });
    assert.deepEqual(
      decideOnQuery({ ...open, status: 'suspended' }, { kind: 'found', providerOrderId: 'RM', status: 'WEIRD' }, 0),
      { kind: 'wait', outcome: 'accepted', providerOrderId: 'RM', providerStatus: 'WEIRD' },
    );
    assert.deepEqual(
      decideOnQuery({ ...open, status: 'completed' }, { kind: 'found', providerOrderId: 'RM', status: 'failed' }, 0),
      { kind: 'none' },
    );
    assert.deepEqual(decideOnReturnCheck('completed', { kind: 'found', providerOrderId: 'RM', status: 'refunded' }), {
      kind: 'return',
      providerStatus: 'refunded',
    });
    assert.deepEqual(decideOnReturnCheck('failed', { kind: 'found', providerOrderId: 'RM', status: 'refunded' }), {
      kind: 'none',
    });
    assert.equal(publicStatus('suspended'), 'processing');
    assert.equal(recheckDelayMs(1, 5_000, 600_000), 5_000);
    assert.equal(recheckDelayMs(20, 5_000, 600_000), 600_000);
    assert.equal(recheckDelayMs(3, 0, 600_000), 0);
  });
});
