// Over 300 lines: the operator's KYC review queue, its routes beside the response schemas they declare.
import { Type } from 'typebox';
import { OperatorEnvironment, OperatorIdParams, Time, TimeOrNull } from '../../platform/routes/operator-route.js';
import { operatorRoutes } from '../../platform/routes/route-module.js';
import { decodeCursor, encodeCursor, pageSize, PageQuery } from '../../platform/routes/pagination.js';
import { configuredKey } from '../../platform/auth/keys.js';
import { ApiError } from '../../platform/errors.js';
import { imageKeyLabel, openImage } from './images.js';
import {
  highValueThresholds,
  imageById,
  profileById,
  profileQueue,
  putHighValueThreshold,
  putRequirement,
  requirementsOf,
  type KycProfile,
} from './queries.js';
import { getAsset } from '../assets/index.js';
import { formatAmount, parseAmount } from '../../money/index.js';
import { businessPattern, orderRequirements } from './rules.js';
import { kycErrors } from './service.js';
import { reviewMember, reviewProfile } from './review.js';
import { EnvironmentQuery, operatorReadOne, operatorUpdate, orNotFound } from '../../platform/routes/route-kinds.js';

/**
 * Operator calls of the KYC area: the member review of extensions 2 (now through the profile's
 * review path), the review queue, one profile, its images, and the requirements.
 */

const Decision = Type.Union([Type.Literal('approved'), Type.Literal('rejected')]);
const Review = Type.Object(
  {
    decision: Decision,
    level: Type.Optional(Type.Union([Type.Literal(1), Type.Literal(2)])),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { title: 'KycReviewRequest' },
);

const Profile = Type.Object(
  {
    id: Type.String(),
    merchant_id: Type.String(),
    environment: OperatorEnvironment,
    member_id: Type.String(),
    status: Type.String(),
    status_version: Type.Integer(),
    submissions: Type.Integer(),
    first_name: Type.String(),
    last_name: Type.String(),
    birth_date: Type.String(),
    nationality: Type.String(),
    document_type: Type.String(),
    document_number: Type.String(),
    address_line1: Type.String(),
    address_line2: Type.String(),
    city: Type.String(),
    postal_code: Type.String(),
    address_country: Type.String(),
    document_image_id: Type.String(),
    selfie_image_id: Type.String(),
    granted_level: Type.Integer(),
    rejection_reason: Type.Union([Type.String(), Type.Null()]),
    review_source: Type.Union([Type.String(), Type.Null()]),
    provider_ref: Type.Union([Type.String(), Type.Null()]),
    submitted_at: Time,
    reviewed_at: TimeOrNull,
    created_at: Time,
    updated_at: Time,
  },
  { title: 'KycProfile' },
);

function profileView(p: KycProfile) {
  return {
    ...p,
    seq: undefined,
    submitted_at: new Date(p.submitted_at).toISOString(),
    reviewed_at: p.reviewed_at ? new Date(p.reviewed_at).toISOString() : null,
    created_at: new Date(p.created_at).toISOString(),
    updated_at: new Date(p.updated_at).toISOString(),
  };
}

const Requirement = Type.Object(
  { business: Type.String(), min_kyc_level: Type.Integer() },
  { title: 'KycRequirement' },
);

export const kycOperatorRoutes = operatorRoutes((route, ctx) => {
  route.post(
    '/admin/v1/members/:id/kyc-review',
    operatorUpdate({
      operationId: 'reviewMemberKyc',
      errors: kycErrors.memberReview,
      params: Type.Object({ id: Type.String({ pattern: '^mem_' }) }),
      body: Review,
      response: Type.Object({ id: Type.String(), kyc_level: Type.Integer() }),
    }),
    ({ params, body, write }) => write((trx) => reviewMember(ctx, trx, params.id, body)),
  );

  route.get(
    '/admin/v1/kyc/profiles',
    {
      schema: {
        operationId: 'listKycProfiles',
        querystring: Type.Object({
          environment: OperatorEnvironment,
          status: Type.Optional(
            Type.Union([Type.Literal('pending_review'), Type.Literal('approved'), Type.Literal('rejected')]),
          ),
          ...PageQuery.properties,
        }),
        response: {
          200: Type.Object({
            data: Type.Array(Profile),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
            has_more: Type.Boolean(),
          }),
        },
      },
    },
    async ({ query }) => {
      // The review queue: oldest submission first (pending_review by default).
      const limit = pageSize(query.limit);
      const rows = await profileQueue(
        ctx.db,
        query.environment,
        query.status ?? 'pending_review',
        decodeCursor(query.cursor),
        limit + 1,
      );
      const page = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      return {
        data: page.map(profileView),
        next_cursor: hasMore ? encodeCursor(page[page.length - 1]!.seq) : null,
        has_more: hasMore,
      };
    },
  );

  route.get(
    '/admin/v1/kyc/profiles/:id',
    operatorReadOne({
      operationId: 'getKycProfile',
      errors: kycErrors.read,
      params: OperatorIdParams,
      response: Profile,
    }),
    async ({ params }) => profileView(orNotFound(await profileById(ctx.db, params.id), 'No such KYC profile.')),
  );

  route.post(
    '/admin/v1/kyc/profiles/:id/review',
    operatorUpdate({
      operationId: 'reviewKycProfile',
      errors: kycErrors.profileReview,
      params: OperatorIdParams,
      body: Review,
      response: Profile,
    }),
    async ({ params, body, write }) => profileView(await write((trx) => reviewProfile(ctx, trx, params.id, body))),
  );

  route.get(
    '/admin/v1/kyc/images/:id',
    operatorReadOne({
      operationId: 'getKycImage',
      errors: kycErrors.read,
      params: OperatorIdParams,
      response: Type.Object({
        id: Type.String(),
        kind: Type.String(),
        content_type: Type.String(),
        size_bytes: Type.Integer(),
        data_base64: Type.String(),
      }),
    }),
    async ({ params }) => {
      const image = orNotFound(await imageById(ctx.db, params.id), 'No such image.');
      const plain = openImage(
        configuredKey(ctx.config, imageKeyLabel),
        { imageId: image.id, memberId: image.member_id, kind: image.kind },
        {
          iv: Buffer.from(image.iv),
          ciphertext: Buffer.from(image.ciphertext),
          authTag: Buffer.from(image.auth_tag),
        },
      );
      return {
        id: image.id,
        kind: image.kind,
        content_type: image.content_type,
        size_bytes: image.size_bytes,
        data_base64: plain.toString('base64'),
      };
    },
  );

  route.get(
    '/admin/v1/kyc/requirements',
    {
      schema: {
        operationId: 'listKycRequirements',
        querystring: EnvironmentQuery,
        response: { 200: Type.Object({ data: Type.Array(Requirement) }) },
      },
    },
    async ({ query }) => ({ data: orderRequirements(await requirementsOf(ctx.db, query.environment)) }),
  );

  route.put(
    '/admin/v1/kyc/requirements/:business',
    {
      schema: {
        operationId: 'setKycRequirement',
        params: Type.Object({ business: Type.String({ pattern: businessPattern }) }),
        body: Type.Object({
          environment: OperatorEnvironment,
          min_kyc_level: Type.Integer({ minimum: 0, maximum: 2 }),
        }),
        response: { 200: Requirement },
      },
    },
    ({ params, body, write }) =>
      write(async (trx) => {
        await putRequirement(trx, body.environment, params.business, body.min_kyc_level, ctx.clock.real());
        return { business: params.business, min_kyc_level: body.min_kyc_level };
      }),
  );

  const Threshold = Type.Object({
    asset: Type.String(),
    min_amount: Type.String({
      description: 'At or above this amount of the asset a withdrawal or a remittance is a high-value transfer.',
    }),
  });

  route.get(
    '/admin/v1/kyc/high-value-thresholds',
    {
      schema: {
        operationId: 'listHighValueThresholds',
        querystring: EnvironmentQuery,
        response: { 200: Type.Object({ data: Type.Array(Threshold) }) },
      },
    },
    async ({ query }) => {
      const rows = await highValueThresholds(ctx.db, query.environment);
      const data = [];
      for (const row of rows)
        data.push({
          asset: row.asset,
          min_amount: formatAmount(BigInt(row.min_amount), (await getAsset(ctx.db, row.asset))!.scale),
        });
      return { data };
    },
  );

  route.put(
    '/admin/v1/kyc/high-value-thresholds/:asset',
    operatorUpdate({
      operationId: 'setHighValueThreshold',
      errors: ['not_found', 'invalid_fields'],
      params: Type.Object({ asset: Type.String({ minLength: 1, maxLength: 16 }) }),
      body: Type.Object({
        environment: OperatorEnvironment,
        min_amount: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()], {
          description: 'Greater than zero; null removes the threshold (no amount is high-value).',
        }),
      }),
      response: Type.Object({ asset: Type.String(), min_amount: Type.Union([Type.String(), Type.Null()]) }),
    }),
    ({ params, body, write }) =>
      write(async (trx) => {
        const asset = orNotFound(await getAsset(trx, params.asset.toUpperCase()), 'No such asset.');
        const amount = body.min_amount === null ? null : parseAmount(body.min_amount, asset.scale, 'min_amount');
        if (amount !== null && amount <= 0n)
          throw new ApiError('invalid_fields', 'min_amount must be greater than zero.', {
            fields: [{ key: 'min_amount', reason: 'out_of_range' }],
          });
        await putHighValueThreshold(trx, body.environment, asset.code, amount, ctx.clock.real());
        return { asset: asset.code, min_amount: amount === null ? null : formatAmount(amount, asset.scale) };
      }),
  );
});
