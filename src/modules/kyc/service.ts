import type { Transaction } from 'kysely';
import type { Database, Environment, Db } from '../../db/schema.js';
import { ownerColumns } from '../../db/owned-by.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError, type ErrorCode } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { configuredKey } from '../../platform/auth/keys.js';
import { issueTicket, ticketView } from '../hosted-screens/index.js';
import { imageKeyLabel, sealedImageColumns } from './images.js';
import {
  deleteImages,
  highValueThresholdsOf,
  insertImage,
  insertProfile,
  lockMember,
  memberKycLevel,
  minKycLevel,
  profileById,
  profileOfMember,
  setMemberLevel,
  updateProfile,
  type KycProfile,
} from './queries.js';
import { levelAfterUpdate, type ProfileFields } from './rules.js';
import { transition } from './state.js';
import type { KycImageKind, KycImageType } from './tables.js';
import type { MemberScope } from '../../platform/caller.js';
import { enqueueCheck } from './check.js';
import { emitStatus } from './review.js';
import { profileSummary } from './views.js';

/**
 * The KYC area's operations (docs/kyc.md): hosted-screen sessions, submissions from the screens,
 * the profile's read and the high-value gate. The one review path every decision takes: review.ts;
 * the provider's check and the sandbox reviewer: check.ts.
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

/** `POST /v1/kyc/sessions`: a ticket for the first profile; a member who has one: 409 `duplicate_resource`. */
export async function createKycSession(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: MemberScope,
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
  caller: MemberScope,
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
  const key = configuredKey(ctx.config, imageKeyLabel);
  await insertImage(trx, {
    id,
    ...ownerColumns(scope),
    kind,
    content_type: image.type,
    size_bytes: image.data.length,
    ...sealedImageColumns(imageKeyLabel, key, { imageId: id, memberId: scope.memberId, kind }, image.data),
  });
  return id;
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
    ...ownerColumns(scope),
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
  return profileSummary(profile, await memberKycLevel(db, profile.member_id));
}

/**
 * The `high_value_transfer` gate of withdrawals and remittances: at or above the operator's
 * threshold for the asset (none by default), the member needs the level that business requires.
 * Refuses with `kyc_required`, which carries no level (the reference).
 */
export async function requireHighValueLevel(db: Db, transfer: HighValueTransfer): Promise<void> {
  const [refused] = await highValueRefusals(db, [transfer]);
  if (refused) throw new ApiError('kyc_required');
}

export interface HighValueTransfer {
  environment: Environment;
  memberId: string;
  asset: string;
  amount: bigint;
}

/**
 * `requireHighValueLevel` for many transfers (a batch of withdrawals): true for each one it would
 * refuse. One statement reads the thresholds of all; only a transfer at or above its threshold
 * reads its member's level and the level required.
 */
export async function highValueRefusals(db: Db, transfers: readonly HighValueTransfer[]): Promise<boolean[]> {
  if (transfers.length === 0) return [];
  const thresholds = await highValueThresholdsOf(db, transfers);
  const refusals: boolean[] = [];
  for (const t of transfers) {
    const min = thresholds.get(`${t.environment}|${t.asset}`);
    if (min === undefined || t.amount < min) refusals.push(false);
    else
      refusals.push(
        (await memberKycLevel(db, t.memberId)) < (await minKycLevel(db, t.environment, 'high_value_transfer')),
      );
  }
  return refusals;
}
