/**
 * The one review path every KYC decision takes (docs/kyc.md): the operator's review of a member or
 * of a profile of the queue, and the provider's verdict (check.ts); the member's level follows and
 * the profile's event is recorded.
 */
import type { Transaction } from 'kysely';
import type { Database, Environment, Db } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import { recordEvent, rowEnvelope } from '../../events/index.js';
import { ApiError } from '../../platform/errors.js';
import {
  lockMember,
  memberKycLevel,
  memberScopeRow,
  profileById,
  profileOfMember,
  setMemberLevel,
  updateProfile,
  type KycProfile,
} from './queries.js';
import { levelOnApproval } from './rules.js';
import { transition, type KycAction } from './state.js';
import type { KycReviewSource } from './tables.js';
import { rowScope } from '../../db/owned-by.js';

/** The profile's event at its status (`kyc.profile.<status>`), in the write's transaction. */
export async function emitStatus(trx: Db, profile: KycProfile, externalMemberId: string): Promise<void> {
  await recordEvent(trx, {
    ...rowEnvelope(profile),
    type: `kyc.profile.${profile.status}`,
    object: 'kyc_profile',
    status: profile.status,
    externalMemberId,
  });
}

export interface ReviewDecision {
  decision: 'approved' | 'rejected';
  level?: 1 | 2;
  reason?: string;
}

/** Longest rejection reason kept, in characters (the review routes' own bound; a provider's may be longer). */
const reasonLengthMax = 500;

/**
 * A rejection reason as stored: its first 500 characters. Cut by characters, not UTF-16 units: a
 * cut inside an emoji left half of it, which the database cannot hold and stored as U+FFFD.
 */
function reasonKept(reason: string | undefined): string | null {
  if (reason === undefined) return null;
  const chars = Array.from(reason);
  return chars.length <= reasonLengthMax ? reason : chars.slice(0, reasonLengthMax).join('');
}

/**
 * The one review path: the profile moves as `state.ts` says, the member's level follows
 * (approved: the level granted, 1 by default; rejected: 0), the event is recorded. Answers the
 * profile after it, or undefined when a provider verdict was stale (nothing changed).
 */
export async function applyReview(
  trx: Transaction<Database>,
  profile: KycProfile,
  review: ReviewDecision,
  source: KycReviewSource,
  now: Date,
  submission?: number,
): Promise<KycProfile | undefined> {
  const action: KycAction =
    source === 'operator'
      ? { kind: 'operator_review', decision: review.decision }
      : { kind: 'provider_verdict', decision: review.decision, submission: submission ?? -1 };
  const move = transition(profile, action);
  if (!('move' in move)) return undefined;
  const member = await lockMember(trx, profile.member_id);
  if (!member) throw new Error(`kyc: member ${profile.member_id} of profile ${profile.id} is missing`);
  const approved = review.decision === 'approved';
  const level = approved ? levelOnApproval(review.level) : 0;
  const after = await updateProfile(trx, profile.id, {
    status: move.move,
    status_version: profile.status_version + 1,
    ...(approved ? { granted_level: level, rejection_reason: null } : { rejection_reason: reasonKept(review.reason) }),
    review_source: source,
    reviewed_at: now,
    updated_at: now,
  });
  await setMemberLevel(trx, profile.member_id, level, now);
  await emitStatus(trx, after, member.external_member_id);
  return after;
}

/**
 * `POST /admin/v1/members/{id}/kyc-review` (extensions 2): reviews the member's profile. A member
 * without a profile gets the level directly (an identity checked outside the service); no profile
 * is created and no event is sent, so the member can still open its first KYC screen.
 */
export async function reviewMember(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  memberId: string,
  review: ReviewDecision,
) {
  const member = await lockMember(trx, memberId);
  if (!member) throw new ApiError('member_not_found');
  const now = await ctx.clock.now(trx, await scopeOfMember(trx, memberId));
  const profile = await profileOfMember(trx, memberId, true);
  if (profile) await applyReview(trx, profile, review, 'operator', now);
  else await setMemberLevel(trx, memberId, review.decision === 'approved' ? levelOnApproval(review.level) : 0, now);
  const row = await memberKycLevel(trx, memberId);
  return { id: memberId, kyc_level: row };
}

async function scopeOfMember(db: Db, memberId: string): Promise<{ merchantId: string; environment: Environment }> {
  return rowScope(await memberScopeRow(db, memberId));
}

/** The operator's review of one profile of the queue. */
export async function reviewProfile(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  profileId: string,
  review: ReviewDecision,
): Promise<KycProfile> {
  const profile = await lockMemberThenProfile(trx, profileId);
  if (!profile) throw new ApiError('not_found', 'No such KYC profile.');
  const now = await ctx.clock.now(trx, rowScope(profile));
  return (await applyReview(trx, profile, review, 'operator', now))!;
}

/**
 * The profile locked after its member, the order every KYC write takes (a submission and the
 * member review lock the member first): the other order could deadlock with them on PostgreSQL.
 * A profile never changes member, so the unlocked read names the member to lock.
 */
export async function lockMemberThenProfile(
  trx: Transaction<Database>,
  profileId: string,
): Promise<KycProfile | undefined> {
  const seen = await profileById(trx, profileId);
  if (!seen) return undefined;
  await lockMember(trx, seen.member_id);
  return profileById(trx, profileId, true);
}
