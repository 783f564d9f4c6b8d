/**
 * The withdrawal state machine (src/modules/withdrawals/state.ts), without a server: every
 * (status, action) pair. `locked` is the only state that moves; a repeat of the action that reached
 * a final state is a replay; the other action on a final state is refused.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { transition, type WithdrawalAction } from '../src/modules/withdrawals/state.js';
import type { WithdrawalStatus } from '../src/modules/withdrawals/tables.js';

const statuses: WithdrawalStatus[] = ['locked', 'settled', 'failed'];
const actions: WithdrawalAction[] = ['confirm', 'fail'];

describe('withdrawal state machine', () => {
  it('locked moves: confirm → settled, fail → failed', () => {
    assert.deepEqual(transition('locked', 'confirm'), { kind: 'move', to: 'settled' });
    assert.deepEqual(transition('locked', 'fail'), { kind: 'move', to: 'failed' });
  });

  it('the action that reached a final state again is a replay', () => {
    assert.deepEqual(transition('settled', 'confirm'), { kind: 'replay' });
    assert.deepEqual(transition('failed', 'fail'), { kind: 'replay' });
  });

  it('the other action on a final state is refused (order_not_cancellable)', () => {
    assert.deepEqual(transition('settled', 'fail'), { kind: 'refuse', code: 'order_not_cancellable' });
    assert.deepEqual(transition('failed', 'confirm'), { kind: 'refuse', code: 'order_not_cancellable' });
  });

  it('every pair: only locked moves, and a move goes to a final state', () => {
    for (const from of statuses) {
      for (const action of actions) {
        const t = transition(from, action);
        assert.equal(t.kind === 'move', from === 'locked', `${from} + ${action}: ${t.kind}`);
        if (t.kind === 'move') {
          assert.notEqual(t.to, 'locked');
          // Final: the same action on the state reached is a replay, the other one refused.
          assert.deepEqual(transition(t.to, action), { kind: 'replay' });
          const other = actions.find((a) => a !== action)!;
          assert.equal(transition(t.to, other).kind, 'refuse');
        }
      }
    }
  });
});
