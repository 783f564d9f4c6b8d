/** The card application's state machine (src/modules/cards/applications/state.ts). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  applicationQueryDecision,
  applicationResubmitDecision,
  applicationTransition,
  supplementOpen,
} from '../src/modules/cards/applications/state.js';

describe('card application state machine', () => {
  it('a supplement is open while pending and before its expiry, not at it', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const order = {
      status: 'need_docs',
      supplement_status: 'pending',
      supplement_expires_at: new Date(at.getTime() + 1),
    };
    assert.equal(supplementOpen(order, at), true);
    assert.equal(supplementOpen(order, new Date(at.getTime() + 1)), false);
    assert.equal(supplementOpen({ ...order, supplement_status: 'submitted' }, at), false);
    assert.equal(supplementOpen({ ...order, status: 'failed' }, at), false);
  });
  it('application transitions', () => {
    assert.deepEqual(applicationTransition('pending', 'approved', false), { kind: 'move', to: 'approved' });
    assert.deepEqual(applicationTransition('pending', 'need_docs', false), { kind: 'move', to: 'need_docs' });
    assert.equal(applicationTransition('approved', 'approved', false).kind, 'replay');
    assert.equal(applicationTransition('rejected', 'approved', false).kind, 'refuse');
    assert.equal(applicationTransition('need_docs', 'approved', true).kind, 'refuse');
    assert.deepEqual(applicationTransition('need_docs', 'supplement_submitted', true), { kind: 'move', to: 'pending' });
    assert.deepEqual(applicationTransition('need_docs', 'supplement_expired', true), { kind: 'move', to: 'failed' });
    assert.equal(applicationTransition('pending', 'supplement_expired', false).kind, 'refuse');
  });
});

describe('card application reconciliation', () => {
  const card = { cardRef: 'CD1', last4: '1234', expMonth: 1, expYear: 2030 };
  it(
    'an application: decisions applied, in review received, never received resubmitted after the grace, ' +
      'anything else waits',
    () => {
      assert.deepEqual(applicationQueryDecision({ kind: 'found', status: 'approved', card }, 0, 60_000), {
        kind: 'decide',
        decision: 'approved',
      });
      assert.deepEqual(applicationQueryDecision({ kind: 'found', status: 'approved' }, 0, 60_000), { kind: 'wait' });
      assert.deepEqual(applicationQueryDecision({ kind: 'found', status: 'rejected' }, 0, 60_000), {
        kind: 'decide',
        decision: 'rejected',
      });
      assert.deepEqual(applicationQueryDecision({ kind: 'found', status: 'need_docs' }, 0, 60_000), {
        kind: 'decide',
        decision: 'need_docs',
      });
      assert.deepEqual(applicationQueryDecision({ kind: 'found', status: 'in_review' }, 0, 60_000), {
        kind: 'received',
      });
      assert.deepEqual(applicationQueryDecision({ kind: 'found', status: 'SANDBOX_UNKNOWN_STATUS' }, 0, 60_000), {
        kind: 'wait',
        unknownStatus: 'SANDBOX_UNKNOWN_STATUS',
      });
      assert.deepEqual(applicationQueryDecision({ kind: 'found', status: 'processing' }, 0, 60_000), { kind: 'wait' });
      assert.deepEqual(applicationQueryDecision({ kind: 'not_found' }, 59_999, 60_000), { kind: 'wait' });
      assert.deepEqual(applicationQueryDecision({ kind: 'not_found' }, 60_000, 60_000), { kind: 'resubmit' });
      assert.deepEqual(applicationQueryDecision({ kind: 'timeout' }, 1e9, 60_000), { kind: 'wait' });
      assert.deepEqual(applicationQueryDecision({ kind: 'unknown', reason: '5xx' }, 1e9, 60_000), { kind: 'wait' });
      assert.deepEqual(
        applicationResubmitDecision({ kind: 'accepted', providerOrderId: 'CD2', status: 'succeeded', detail: {} }),
        { kind: 'received' },
      );
      assert.deepEqual(applicationResubmitDecision({ kind: 'rejected', reason: 'no' }), {
        kind: 'decide',
        decision: 'rejected',
      });
      assert.deepEqual(applicationResubmitDecision({ kind: 'timeout' }), { kind: 'wait' });
      assert.deepEqual(
        applicationResubmitDecision({
          kind: 'accepted',
          providerOrderId: 'CD2',
          status: 'SANDBOX_UNKNOWN_STATUS',
          detail: {},
        }),
        { kind: 'wait', unknownStatus: 'SANDBOX_UNKNOWN_STATUS' },
      );
      assert.deepEqual(
        applicationResubmitDecision({ kind: 'accepted', providerOrderId: 'CD2', status: 'failed', detail: {} }),
        { kind: 'wait' },
      );
    },
  );
});
