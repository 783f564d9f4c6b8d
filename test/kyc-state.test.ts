/**
 * The KYC profile's state machine (src/modules/kyc/state.ts), without a server: an update always
 * goes back to review, the operator decides from any status, the provider's verdict applies only
 * to the current submission while it is pending review.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { transition } from '../src/modules/kyc/state.js';
import type { KycProfileStatus } from '../src/modules/kyc/tables.js';

const statuses: KycProfileStatus[] = ['pending_review', 'approved', 'rejected'];
const decisions = ['approved', 'rejected'] as const;

describe('KYC profile transitions', () => {
  it('a completed update sends the profile back to pending_review from any status', () => {
    for (const status of statuses)
      assert.deepEqual(
        transition({ status, submissions: 3 }, { kind: 'submit_update' }),
        { move: 'pending_review' },
        status,
      );
  });
  it('the operator decides from any status', () => {
    for (const status of statuses) {
      for (const decision of decisions) {
        assert.deepEqual(
          transition({ status, submissions: 1 }, { kind: 'operator_review', decision }),
          { move: decision },
          `${status} → ${decision}`,
        );
      }
    }
  });
  it("the provider's verdict on the current submission under review applies", () => {
    for (const decision of decisions) {
      assert.deepEqual(
        transition({ status: 'pending_review', submissions: 2 }, { kind: 'provider_verdict', decision, submission: 2 }),
        { move: decision },
      );
    }
  });
  it('a verdict on an older (or unknown newer) submission is stale', () => {
    assert.deepEqual(
      transition(
        { status: 'pending_review', submissions: 2 },
        { kind: 'provider_verdict', decision: 'approved', submission: 1 },
      ),
      { ignore: 'stale_verdict' },
    );
    assert.deepEqual(
      transition(
        { status: 'pending_review', submissions: 2 },
        { kind: 'provider_verdict', decision: 'rejected', submission: 3 },
      ),
      { ignore: 'stale_verdict' },
    );
  });
  it('a verdict once the profile was decided is stale, even for the current submission', () => {
    for (const status of ['approved', 'rejected'] as const) {
      for (const decision of decisions) {
        assert.deepEqual(
          transition({ status, submissions: 1 }, { kind: 'provider_verdict', decision, submission: 1 }),
          { ignore: 'stale_verdict' },
          `${status}, ${decision}`,
        );
      }
    }
  });
  it('update, then the verdict on it: approved; the verdict on the one before stays ignored', () => {
    let profile = { status: 'approved' as KycProfileStatus, submissions: 1 };
    const moved = transition(profile, { kind: 'submit_update' });
    assert.ok('move' in moved);
    profile = { status: moved.move, submissions: 2 };
    assert.deepEqual(transition(profile, { kind: 'provider_verdict', decision: 'rejected', submission: 1 }), {
      ignore: 'stale_verdict',
    });
    assert.deepEqual(transition(profile, { kind: 'provider_verdict', decision: 'approved', submission: 2 }), {
      move: 'approved',
    });
  });
});
