import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  atOrAboveThreshold,
  challengeVerdict,
  decideCode,
  isStepUpAction,
  resumeVerdict,
  stepUpAttemptsMax,
  stepUpObjectRef,
  type StepUpBinding,
} from '../src/modules/step-up/rules.js';
import { TRON } from './support/fixtures.js';

/** The step-up rules (src/modules/step-up/rules.ts): pure, no service. */

describe('step-up rules (pure)', () => {
  const binding: StepUpBinding = {
    merchantId: 'mch_1',
    environment: 'sandbox',
    memberId: 'mem_1',
    action: 'withdrawal.create',
    objectRef: 'obj',
  };
  const now = new Date('2026-11-23T12:00:00Z');
  const ticket = {
    merchant_id: 'mch_1',
    environment: 'sandbox' as const,
    member_id: 'mem_1',
    purpose: 'step_up' as const,
    action: 'withdrawal.create',
    object_ref: 'obj',
    status: 'completed' as const,
    outcome: 'approved',
    expires_at: new Date(now.getTime() + 1000),
  };

  it(
    'passes only a completed, approved, unused, unexpired challenge bound to the same merchant, member, action ' +
      'and object',
    () => {
      assert.deepEqual(challengeVerdict(ticket, binding, now), { pass: true });
      const reason = (t: Partial<typeof ticket> | undefined) => {
        const v = challengeVerdict(t === undefined ? undefined : ({ ...ticket, ...t } as any), binding, now);
        return v.pass ? 'pass' : v.reason;
      };
      assert.equal(reason(undefined), 'unknown');
      assert.equal(reason({ purpose: 'kyc' as any }), 'unknown');
      assert.equal(reason({ merchant_id: 'mch_2' }), 'other_merchant');
      assert.equal(reason({ environment: 'production' as any }), 'other_merchant');
      assert.equal(reason({ member_id: 'mem_2' }), 'other_member');
      assert.equal(reason({ action: 'card.activate' }), 'other_action');
      assert.equal(reason({ object_ref: 'other' }), 'other_object');
      assert.equal(reason({ status: 'open' as any, outcome: null as any }), 'not_completed');
      assert.equal(reason({ status: 'used' as any }), 'used');
      assert.equal(reason({ status: 'void' as any, outcome: 'declined' }), 'void');
      assert.equal(reason({ outcome: 'declined' }), 'not_completed');
      assert.equal(reason({ expires_at: now }), 'expired');
    },
  );

  it('counts wrong codes and voids at the fifth', () => {
    assert.deepEqual(decideCode(true, 4), { kind: 'approve' });
    assert.deepEqual(decideCode(false, 0), { kind: 'wrong', failedAttempts: 1, attemptsLeft: 4 });
    assert.deepEqual(decideCode(false, 3), { kind: 'wrong', failedAttempts: 4, attemptsLeft: 1 });
    assert.deepEqual(decideCode(false, 4), { kind: 'exhausted', failedAttempts: 5 });
  });

  it('digests the object canonically, bigint amounts as integers', () => {
    const a = stepUpObjectRef('withdrawal.create', {
      asset: 'USDT',
      network: 'TRON',
      address: TRON,
      amount: 100_000_000n,
    });
    assert.equal(
      a,
      stepUpObjectRef('withdrawal.create', { amount: 100_000_000n, address: TRON, network: 'TRON', asset: 'USDT' }),
    );
    assert.notEqual(
      a,
      stepUpObjectRef('withdrawal.create', { asset: 'USDT', network: 'TRON', address: TRON, amount: 100_000_001n }),
    );
    assert.match(a, /^[0-9a-f]{64}$/);
    assert.equal(atOrAboveThreshold(5n, undefined), false);
    assert.equal(atOrAboveThreshold(5n, 5n), true);
    assert.equal(atOrAboveThreshold(4n, 5n), false);
  });

  it('resumes only a used, approved challenge bound to the same request', () => {
    const used = { ...ticket, status: 'used' as const };
    assert.deepEqual(resumeVerdict(used, binding), { pass: true });
    const reason = (t: Partial<typeof used> | undefined) => {
      const v = resumeVerdict(t === undefined ? undefined : ({ ...used, ...t } as any), binding);
      return v.pass ? 'pass' : v.reason;
    };
    assert.equal(reason(undefined), 'unknown');
    assert.equal(reason({ purpose: 'card_reveal' as any }), 'unknown');
    assert.equal(reason({ environment: 'production' as any }), 'other_merchant');
    assert.equal(reason({ member_id: 'mem_2' }), 'other_member');
    assert.equal(reason({ action: 'exchange.execute' }), 'other_action');
    assert.equal(reason({ object_ref: 'other' }), 'other_object');
    // Completed but never used passes the ordinary way (challengeVerdict), never as a resume.
    assert.equal(reason({ status: 'completed' as any }), 'not_completed');
    assert.equal(reason({ outcome: 'declined' }), 'not_completed');
    // No expiry check: the retry of a request whose outcome was lost may come after the ticket's expiry.
    assert.equal(reason({ expires_at: new Date(0) }), 'pass');
  });

  it('never approves a wrong code, however few attempts were made', () => {
    for (let before = 0; before < stepUpAttemptsMax; before++) {
      const d = decideCode(false, before);
      assert.notEqual(d.kind, 'approve');
      assert.equal(d.kind === 'exhausted', before + 1 === stepUpAttemptsMax);
    }
  });

  it('knows the actions of the catalogue only', () => {
    assert.equal(isStepUpAction('withdrawal.create'), true);
    assert.equal(isStepUpAction('exchange.execute'), true);
    assert.equal(isStepUpAction('card.activate'), true);
    assert.equal(isStepUpAction('withdrawal.cancel'), false);
    assert.equal(isStepUpAction('toString'), false, 'not an inherited property');
    assert.equal(isStepUpAction(''), false);
  });
});
