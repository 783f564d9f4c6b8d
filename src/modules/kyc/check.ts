/**
 * The provider's side of a KYC submission (docs/kyc.md): the `kyc.check` job queued with each
 * submission, the check submitted and its verdict applied through the one review path
 * (review.ts), and the sandbox helper that has the simulated provider's reviewer decide.
 */
import type { ServiceContext } from '../../service-context.js';
import type { Environment, Db } from '../../db/schema.js';
import { enqueue } from '../../jobs/queries.js';
import { ApiError } from '../../platform/errors.js';
import type { KycSubmitOutcome } from '../../upstreams/kyc/port.js';
import { memberKycLevel, profileById, profileOfMember, updateProfile, type KycProfile } from './queries.js';
import { applyReview, lockMemberThenProfile, type ReviewDecision } from './review.js';
import { profileSummary } from './views.js';
import { rowScope } from '../../db/owned-by.js';

export const kycCheckJobKind = 'kyc.check';
/** Verdict polls of one check (the delay doubles from 1 minute to 1 hour): about 8 days, then the operator's queue
 * alone. */
export const kycCheckPollsMax = 200;

/** Queues the provider check of a profile's current submission (in the caller's transaction). */
export async function enqueueCheck(trx: Db, profile: KycProfile): Promise<void> {
  await enqueue(trx, {
    kind: kycCheckJobKind,
    payload: { profile_id: profile.id, submission: profile.submissions },
    dedupeKey: `${kycCheckJobKind}:${profile.id}:${profile.submissions}`,
    maxAttempts: kycCheckPollsMax,
  });
}

const requestIdOf = (profile: Pick<KycProfile, 'id' | 'submissions'>) => `${profile.id}:${profile.submissions}`;

/** Starts (idempotently) the provider check of the profile's current submission: the provider's answer. */
async function submitCheck(
  ctx: ServiceContext,
  profile: KycProfile,
  externalMemberId: string,
): Promise<KycSubmitOutcome> {
  const outcome = await ctx.upstreams.kyc.submit(rowScope(profile), {
    requestId: requestIdOf(profile),
    memberRef: externalMemberId,
    firstName: profile.first_name,
    lastName: profile.last_name,
    birthDate: profile.birth_date,
    nationality: profile.nationality,
    documentType: profile.document_type,
    documentNumber: profile.document_number,
    addressCountry: profile.address_country,
    imageRefs: [profile.document_image_id, profile.selfie_image_id],
  });
  return outcome;
}

/** `timed_out`: the provider sent nothing back in time; `no_answer`: any other answer without a verdict (5xx, fault).
 * Both are outcome-unknown. */
export type CheckResult = 'applied' | 'pending' | 'stale' | 'no_answer' | 'timed_out';

const unanswered = (outcome: { kind: string }): 'timed_out' | 'no_answer' =>
  outcome.kind === 'timeout' ? 'timed_out' : 'no_answer';

/**
 * The provider side of one submission (the `kyc.check` job and the sandbox helper): submit the
 * check, read the verdict, and apply a decided one through `applyReview`. Provider calls happen
 * outside any transaction; the verdict is applied in one, on the locked profile.
 */
export async function runCheck(ctx: ServiceContext, profileId: string, submission: number): Promise<CheckResult> {
  const profile = await profileById(ctx.db, profileId);
  if (!profile || profile.submissions !== submission || profile.status !== 'pending_review') return 'stale';
  const member = await ctx.resolveMember(ctx.db, profile.merchant_id, profile.environment, profile.member_id);
  const submitted = await submitCheck(ctx, profile, member?.external_member_id ?? '');
  if (submitted.kind !== 'accepted') return unanswered(submitted);
  const providerRef = submitted.providerRef;
  const verdict = await ctx.upstreams.kyc.verdict(rowScope(profile), requestIdOf(profile));
  return ctx.db.transaction().execute(async (trx) => {
    const locked = await lockMemberThenProfile(trx, profileId);
    if (!locked) return 'stale';
    if (locked.provider_ref === null && locked.submissions === submission)
      await updateProfile(trx, profileId, { provider_ref: providerRef });
    if (verdict.kind !== 'decided') return verdict.kind === 'pending' ? 'pending' : unanswered(verdict);
    const now = await ctx.clock.now(trx, rowScope(locked));
    const applied = await applyReview(
      trx,
      { ...locked, provider_ref: providerRef },
      verdict,
      'provider',
      now,
      submission,
    );
    return applied ? 'applied' : 'stale';
  });
}

const sameVerdict = (a: { decision: string; level?: number }, b: { decision: string; level?: number }): boolean =>
  a.decision === b.decision && (a.decision !== 'approved' || (a.level ?? 1) === (b.level ?? 1));

/**
 * `POST /v1/sandbox/kyc/{member_id}/review`: the simulated provider's reviewer decides the
 * member's pending submission, then the service handles the verdict exactly as in production
 * (`runCheck`). No profile: 404 `not_found`; a profile not waiting for review: 400 `state_invalid`.
 */
export async function sandboxReview(
  ctx: ServiceContext,
  caller: { merchantId: string; environment: Environment },
  memberRef: string,
  review: ReviewDecision,
) {
  const member = await ctx.resolveMember(ctx.db, caller.merchantId, caller.environment, memberRef);
  // A suspended member is not found here either, as on every call for it.
  if (!member || member.status !== 'active') throw new ApiError('member_not_found');
  const profile = await profileOfMember(ctx.db, member.id);
  if (!profile) throw new ApiError('not_found', 'The member has no KYC profile.');
  if (profile.status !== 'pending_review')
    throw new ApiError('state_invalid', 'The profile is not waiting for review.');
  const provider = ctx.upstreams.kyc;
  if (!provider.sandboxDecide)
    throw new ApiError('state_invalid', 'The configured KYC provider has no sandbox reviewer.');
  const call = { merchantId: caller.merchantId, environment: caller.environment };
  // The provider's outcome-unknown answers change nothing; a timeout is 504 `upstream_timeout`, any other 502
  // `upstream_error`.
  const submitted = await submitCheck(ctx, profile, member.external_member_id);
  if (submitted.kind !== 'accepted')
    throw new ApiError(submitted.kind === 'timeout' ? 'upstream_timeout' : 'upstream_error');
  if (!(await provider.sandboxDecide(call, requestIdOf(profile), review))) {
    // The reviewer decided this submission before (a call whose answer was lost): a retry asking
    // for the same verdict goes on to apply it, one asking for another is refused, never
    // answered 200 with the verdict it did not ask for.
    const earlier = await provider.verdict(call, requestIdOf(profile));
    if (earlier.kind === 'decided' && !sameVerdict(earlier, review)) {
      throw new ApiError(
        'state_invalid',
        `The provider's reviewer already decided this ` +
          `submission: ${earlier.decision}${earlier.decision === 'approved' ? ` at level ${earlier.level ?? 1}` : ''}.`,
      );
    }
  }
  const result = await runCheck(ctx, profile.id, profile.submissions);
  if (result === 'timed_out') throw new ApiError('upstream_timeout');
  if (result === 'no_answer') throw new ApiError('upstream_error');
  const after = await profileOfMember(ctx.db, member.id);
  const level = await memberKycLevel(ctx.db, member.id);
  return profileSummary(after!, level);
}
