import type { KycProfileStatus } from './tables.js';

/**
 * The KYC profile's states (docs/kyc.md, "States"). A profile exists from its first submission
 * (`pending_review`). The reference's rule: a completed profile update sends the profile back to
 * `pending_review` from any status. A review decides `approved` (with a level) or `rejected`
 * (with a reason):
 * - the operator may decide from any status (a manual review, a correction, a later downgrade);
 * - the provider's verdict applies only to the submission it was asked about, while that
 *   submission is still `pending_review`; a verdict on an older submission is stale and ignored.
 */
export type KycAction =
  | { kind: 'submit_update' }
  | { kind: 'operator_review'; decision: 'approved' | 'rejected' }
  | { kind: 'provider_verdict'; decision: 'approved' | 'rejected'; submission: number };

export type KycTransition = { move: KycProfileStatus } | { ignore: 'stale_verdict' };

export function transition(
  profile: { status: KycProfileStatus; submissions: number },
  action: KycAction,
): KycTransition {
  switch (action.kind) {
    case 'submit_update':
      return { move: 'pending_review' };
    case 'operator_review':
      return { move: action.decision };
    case 'provider_verdict':
      if (profile.status !== 'pending_review' || action.submission !== profile.submissions)
        return { ignore: 'stale_verdict' };
      return { move: action.decision };
  }
}
