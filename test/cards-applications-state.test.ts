/** The card application's state machine (src/modules/cards/applications/state.ts). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applicationTransition, supplementOpen } from '../src/modules/cards/applications/state.js';

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
