// Over 300 lines: a KYC profile's life (sessions, submissions, the provider's check, reviews) under one lock order.
import type { Transaction } from 'kysely';
import type { Database, Environment, Db } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import { enqueue } from '../../jobs/queries.js';
import { recordEvent } from '../../events/index.js';
import { ApiError, type ErrorCode } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { configuredKey } from '../../platform/keys.js';
import { issueTicket, ticketView } from '../hosted-screens/index.js';
import { imageKeyLabel, sealImage } from './images.js';
import {
  deleteImages,
  highValueThreshold,
  insertImage,
  insertProfile,
  lockMember,
  memberKycLevel,
  memberScopeRow,
  minKycLevel,
  profileById,
  profileOfMember,
  setMemberLevel,
  updateProfile,
  type KycProfile,
} from './queries.js';
import { levelAfterUpdate, levelOnApproval, type ProfileFields } from './rules.js';
import { transition, type KycAction } from './state.js';
import type { KycImageKind, KycImageType, KycReviewSource } from './tables.js';
import type { KycSubmitOutcome } from '../../upstreams/kyc/port.js';
import type { MemberScope } from '../../platform/caller.js';

/**
 * The KYC area's operations (docs/kyc.md): hosted-screen sessions, submissions from the screens,
 * and the one review path every decision takes (operator, provider, sandbox helper).
 */

/** The codes each function can answer: the routes declare these lists. */
export const kycErrors = {
  createSession: ['duplicate_resource'],
  profileSession: ['not_found'],
  requirements: [],
  sandboxReview: ['member_not_found', 'not_found', 'state_invalid', 'upstream_error', 'upstream_timeout'],
  memberReview: ['member_not_found'],
  profileReview: ['not_found'],
  read: ['not_found'],
} as const satisfies Record<string, readonly ErrorCode[]>;

export interface MemberCaller {
  merchantId: string;
  environment: Environment;
  memberId: string;
}

/** `POST /v1/kyc/sessions`: a ticket for the first profile; a member who has one: 409 `duplicate_resource`. */
export async function createKycSession(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: MemberCaller,
  origin: string,
) {
  if (await profileOfMember(trx, caller.memberId)) {
    throw new ApiError(
      'duplicate_resource',
      'The member already has a KYC profile; update it with POST /v1/kyc/profile-sessions.',
    );
  }
  return ticketView(await issueTicket(ctx, trx, { ...caller, purpose: 'kyc', origin }));
}

/** `POST /v1/kyc/profile-sessions`: a ticket to update the existing profile; none: 404 `not_found` (never a creation).
 * */
export async function createProfileSession(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: MemberCaller,
  origin: string,
) {
  const profile = await profileOfMember(trx, caller.memberId);
  if (!profile)
    throw new ApiError('not_found', 'The member has no KYC profile yet; create one with POST /v1/kyc/sessions.');
  return ticketView(
    await issueTicket(ctx, trx, { ...caller, purpose: 'profile_update', origin, subjectId: profile.id }),
  );
}

/** An image that passed the screen's checks (type sniffed from its bytes). */
export interface CheckedImage {
  data: Uint8Array;
  type: KycImageType;
}

export interface Submission {
  fields: ProfileFields;
  document?: CheckedImage;
  selfie?: CheckedImage;
}

async function storeImage(
  ctx: ServiceContext,
  trx: Db,
  scope: MemberScope,
  kind: KycImageKind,
  image: CheckedImage,
): Promise<string> {
  const id = newId('kyi');
  const sealed = sealImage(
    configuredKey(ctx.config, imageKeyLabel),
    { imageId: id, memberId: scope.memberId, kind },
    image.data,
  );
  await insertImage(trx, {
    id,
    merchant_id: scope.merchantId,
    environment: scope.environment,
    member_id: scope.memberId,
    kind,
    content_type: image.type,
    size_bytes: image.data.length,
    key_label: imageKeyLabel,
    iv: sealed.iv,
    ciphertext: sealed.ciphertext,
    auth_tag: sealed.authTag,
  });
  return id;
}

async function emitStatus(trx: Db, profile: KycProfile, externalMemberId: string): Promise<void> {
  await recordEvent(trx, {
    merchantId: profile.merchant_id,
    environment: profile.environment,
    type: `kyc.profile.${profile.status}`,
    object: 'kyc_profile',
    objectId: profile.id,
    externalMemberId,
    status: profile.status,
    statusVersion: profile.status_version,
  });
}

export const kycCheckJobKind = 'kyc.check';
/** Verdict polls of one check (the delay doubles from 1 minute to 1 hour): about 8 days, then the operator's queue
 * alone. */
export const kycCheckPollsMax = 200;

/** Queues the provider check of a profile's current submission (in the caller's transaction). */
async function enqueueCheck(trx: Db, profile: KycProfile): Promise<void> {
  await enqueue(trx, {
    kind: kycCheckJobKind,
    payload: { profile_id: profile.id, submission: profile.submissions },
    dedupeKey: `${kycCheckJobKind}:${profile.id}:${profile.submissions}`,
    maxAttempts: kycCheckPollsMax,
  });
}

/**
 * The first KYC screen's submission: the profile is created (`pending_review`) with its images,
 * the event recorded and the provider check queued. Submissions of one member are serialised on
 * the member's row; when a profile exists already (another ticket was quicker) nothing is stored.
 */
export async function submitFirstProfile(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  scope: MemberScope,
  sub: Submission,
  now: Date,
): Promise<KycProfile | 'exists'> {
  const member = await lockMember(trx, scope.memberId);
  if (!member) throw new Error(`kyc: member ${scope.memberId} of a ticket is missing`);
  if (await profileOfMember(trx, scope.memberId)) return 'exists';
  if (!sub.document || !sub.selfie) throw new Error('kyc: a first profile needs both images');
  const profile = await insertProfile(trx, {
    id: newId('kyp'),
    merchant_id: scope.merchantId,
    environment: scope.environment,
    member_id: scope.memberId,
    status: 'pending_review',
    ...sub.fields,
    document_image_id: await storeImage(ctx, trx, scope, 'document', sub.document),
    selfie_image_id: await storeImage(ctx, trx, scope, 'selfie', sub.selfie),
    rejection_reason: null,
    review_source: null,
    provider_ref: null,
    submitted_at: now,
    reviewed_at: null,
    created_at: now,
    updated_at: now,
  });
  await emitStatus(trx, profile, member.external_member_id);
  await enqueueCheck(trx, profile);
  return profile;
}

/**
 * A completed profile update (the reference's rule): the profile goes back to `pending_review`
 * from any status and the member's level falls to 0 (`levelAfterUpdate`); images not uploaded
 * again are kept, replaced ones are deleted.
 */
export async function submitProfileUpdate(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  scope: MemberScope,
  sub: Submission,
  now: Date,
): Promise<KycProfile> {
  const member = await lockMember(trx, scope.memberId);
  const current = await profileOfMember(trx, scope.memberId, true);
  if (!member || !current) throw new Error(`kyc: the profile of member ${scope.memberId} is missing for an update`);
  const move = transition(current, { kind: 'submit_update' });
  if (!('move' in move)) throw new Error('kyc: an update is always accepted');
  const documentId = sub.document
    ? await storeImage(ctx, trx, scope, 'document', sub.document)
    : current.document_image_id;
  const selfieId = sub.selfie ? await storeImage(ctx, trx, scope, 'selfie', sub.selfie) : current.selfie_image_id;
  const profile = await updateProfile(trx, current.id, {
    ...sub.fields,
    status: move.move,
    status_version: current.status_version + 1,
    submissions: current.submissions + 1,
    document_image_id: documentId,
    selfie_image_id: selfieId,
    rejection_reason: null,
    review_source: null,
    provider_ref: null,
    submitted_at: now,
    reviewed_at: null,
    updated_at: now,
  });
  await deleteImages(
    trx,
    [current.document_image_id, current.selfie_image_id].filter((id) => id !== documentId && id !== selfieId),
  );
  await setMemberLevel(trx, scope.memberId, levelAfterUpdate(member.kyc_level), now);
  await emitStatus(trx, profile, member.external_member_id);
  await enqueueCheck(trx, profile);
  return profile;
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
  const row = await memberLevel(trx, memberId);
  return { id: memberId, kyc_level: row };
}

async function scopeOfMember(db: Db, memberId: string): Promise<{ merchantId: string; environment: Environment }> {
  const row = await memberScopeRow(db, memberId);
  return { merchantId: row.merchant_id, environment: row.environment };
}

async function memberLevel(db: Db, memberId: string): Promise<number> {
  return memberKycLevel(db, memberId);
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
  const now = await ctx.clock.now(trx, { merchantId: profile.merchant_id, environment: profile.environment });
  return (await applyReview(trx, profile, review, 'operator', now))!;
}

/**
 * The profile locked after its member, the order every KYC write takes (a submission and the
 * member review lock the member first): the other order could deadlock with them on PostgreSQL.
 * A profile never changes member, so the unlocked read names the member to lock.
 */
async function lockMemberThenProfile(trx: Transaction<Database>, profileId: string): Promise<KycProfile | undefined> {
  const seen = await profileById(trx, profileId);
  if (!seen) return undefined;
  await lockMember(trx, seen.member_id);
  return profileById(trx, profileId, true);
}

const requestIdOf = (profile: Pick<KycProfile, 'id' | 'submissions'>) => `${profile.id}:${profile.submissions}`;

/** Starts (idempotently) the provider check of the profile's current submission: the provider's answer. */
async function submitCheck(
  ctx: ServiceContext,
  profile: KycProfile,
  externalMemberId: string,
): Promise<KycSubmitOutcome> {
  const outcome = await ctx.upstreams.kyc.submit(
    { merchantId: profile.merchant_id, environment: profile.environment },
    {
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
    },
  );
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
  const verdict = await ctx.upstreams.kyc.verdict(
    { merchantId: profile.merchant_id, environment: profile.environment },
    requestIdOf(profile),
  );
  return ctx.db.transaction().execute(async (trx) => {
    const locked = await lockMemberThenProfile(trx, profileId);
    if (!locked) return 'stale';
    if (locked.provider_ref === null && locked.submissions === submission)
      await updateProfile(trx, profileId, { provider_ref: providerRef });
    if (verdict.kind !== 'decided') return verdict.kind === 'pending' ? 'pending' : unanswered(verdict);
    const now = await ctx.clock.now(trx, { merchantId: locked.merchant_id, environment: locked.environment });
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
  const level = await memberLevel(ctx.db, member.id);
  return profileSummary(after!, level);
}

/**
 * `GET /v1/kyc/profiles/{id}`: the profile a `kyc.profile.*` event names (its `data.id`), as the
 * merchant sees it (`profileSummary`); on behalf of a member only its own. `kyp_` prefix optional.
 */
export async function getProfile(
  db: Db,
  caller: { merchantId: string; environment: Environment; memberId?: string },
  id: string,
) {
  const profile = await profileById(db, id.startsWith('kyp_') ? id : `kyp_${id}`);
  if (
    !profile ||
    profile.merchant_id !== caller.merchantId ||
    profile.environment !== caller.environment ||
    (caller.memberId !== undefined && profile.member_id !== caller.memberId)
  ) {
    throw new ApiError('not_found', 'No such KYC profile.');
  }
  return profileSummary(profile, await memberLevel(db, profile.member_id));
}

/** The profile as the merchant sees it: ids, status and level, never the personal data. */
export function profileSummary(p: KycProfile, kycLevel: number) {
  return { id: p.id, member_id: p.member_id, status: p.status, status_version: p.status_version, kyc_level: kycLevel };
}

/**
 * The `high_value_transfer` gate of withdrawals and remittances: at or above the operator's
 * threshold for the asset (none by default), the member needs the level that business requires.
 * Refuses with `kyc_required`, which carries no level (the reference).
 */
export async function requireHighValueLevel(
  db: Db,
  p: { environment: Environment; memberId: string; asset: string; amount: bigint },
): Promise<void> {
  const row = await highValueThreshold(db, p.environment, p.asset);
  if (!row || p.amount < BigInt(row.min_amount)) return;
  const kycLevel = await memberKycLevel(db, p.memberId);
  const required = await minKycLevel(db, p.environment, 'high_value_transfer');
  if (kycLevel < required) throw new ApiError('kyc_required');
}
