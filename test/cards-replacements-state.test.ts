/**
 * The replacement's state machine (src/modules/cards/replacements/state.ts): the request's verdict,
 * the note, the executor's transitions.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  isSecurityReason,
  replacementReasons,
  replacementRequestVerdict,
  replacementStartProblem,
  replacementTransition,
  truncateNote,
} from '../src/modules/cards/replacements/state.js';
import type { CardStatus } from '../src/modules/cards/cards/tables.js';

const statuses: CardStatus[] = ['unactivated', 'active', 'closing', 'closed', 'expired', 'replaced'];

describe('card replacement state machine', () => {
  it("replacement request: the reference's preconditions, reasons outside the enumeration invalid_request", () => {
    assert.equal(replacementReasons.length, 10);
    const bored = replacementRequestVerdict({ status: 'active', inFlight: false }, 'bored');
    assert.equal(bored.kind === 'refuse' && bored.code, 'invalid_request');
    for (const status of statuses) {
      for (const reason of replacementReasons) {
        const v = replacementRequestVerdict({ status, inFlight: false }, reason);
        const open = status === 'unactivated' || status === 'active';
        const allowed = open && (isSecurityReason(reason) || status === 'unactivated');
        assert.equal(v.kind, allowed ? 'accept' : 'refuse', `${status} ${reason}`);
        if (v.kind === 'refuse') assert.equal(v.code, 'state_invalid');
        if (v.kind === 'accept') assert.equal(v.security, isSecurityReason(reason));
      }
      const inFlight = replacementRequestVerdict({ status, inFlight: true }, 'stolen');
      assert.equal(inFlight.kind, 'refuse');
    }
    assert.equal(isSecurityReason('expiring'), true);
    assert.equal(isSecurityReason('name_error'), false);
  });

  it('the note is kept to 200 characters, never cutting a surrogate pair', () => {
    assert.equal(truncateNote(undefined), null);
    assert.equal(truncateNote('abc'), 'abc');
    assert.equal(truncateNote('x'.repeat(201)), 'x'.repeat(200));
    const emoji = '😀'.repeat(201);
    assert.equal([...truncateNote(emoji)!].length, 200);
    assert.equal(truncateNote(emoji), '😀'.repeat(200));
  });

  it(
    'replacement transitions: start, complete, fail; ' + 'final states replay their own event and refuse the others',
    () => {
      assert.deepEqual(replacementTransition('requested', 'start'), { kind: 'move', to: 'processing' });
      assert.deepEqual(replacementTransition('processing', 'start'), { kind: 'replay', at: 'processing' });
      assert.deepEqual(replacementTransition('processing', 'complete'), { kind: 'move', to: 'completed' });
      assert.deepEqual(replacementTransition('requested', 'fail'), { kind: 'move', to: 'failed' });
      assert.deepEqual(replacementTransition('processing', 'fail'), { kind: 'move', to: 'failed' });
      assert.deepEqual(replacementTransition('completed', 'complete'), { kind: 'replay', at: 'completed' });
      assert.deepEqual(replacementTransition('failed', 'fail'), { kind: 'replay', at: 'failed' });
      assert.equal(replacementTransition('requested', 'complete').kind, 'refuse');
      assert.equal(replacementTransition('completed', 'fail').kind, 'refuse');
      assert.equal(replacementTransition('failed', 'start').kind, 'refuse');
      assert.equal(replacementTransition('completed', 'start').kind, 'refuse');
    },
  );

  it("the executor's first look at the card", () => {
    assert.equal(replacementStartProblem({ status: 'active' }, true), undefined);
    assert.equal(replacementStartProblem({ status: 'unactivated' }, false), undefined);
    assert.equal(replacementStartProblem({ status: 'active' }, false), 'card_activated');
    assert.equal(replacementStartProblem({ status: 'expired' }, true), 'card_expired');
    assert.equal(replacementStartProblem({ status: 'closing' }, true), 'card_closing');
  });
});
