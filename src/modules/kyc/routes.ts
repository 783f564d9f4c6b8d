import { Type } from 'typebox';
import { MemberRef } from '../../platform/routes/list-filters.js';
import { constantList } from '../../platform/routes/pagination.js';
import { publicRoutes } from '../../platform/routes/route-module.js';
import { idParams, memberWrite, readList, readOne, sandboxStep } from '../../platform/routes/route-kinds.js';
import { hostedOrigin } from '../hosted-screens/index.js';
import { requirementsOf } from './queries.js';
import { orderRequirements } from './rules.js';
import { createKycSession, createProfileSession, getProfile, kycErrors } from './service.js';
import { sandboxReview } from './check.js';

const tags = ['KYC'];

export const HostedTicket = Type.Object(
  {
    id: Type.String({ description: 'kyc_<32 hex>' }),
    hosted_url: Type.String({ description: 'The screen, on the host that was called; send the member there.' }),
    expires_at: Type.Integer({ description: "Unix seconds (24 hours after issue, by the merchant's clock)" }),
  },
  { title: 'HostedScreenTicket' },
);

const Requirement = Type.Object(
  {
    business: Type.String({
      description: 'card_issuing, remittance, exchange, high_value_transfer (and any the operator adds)',
    }),
    min_kyc_level: Type.Integer({ minimum: 0, maximum: 2 }),
  },
  { title: 'KycRequirement' },
);

const ReviewedProfile = Type.Object(
  {
    id: Type.String({ description: 'kyp_<uuid>' }),
    member_id: Type.String(),
    status: Type.String({ description: 'pending_review, approved or rejected' }),
    status_version: Type.Integer(),
    kyc_level: Type.Integer(),
  },
  { title: 'KycProfile' },
);

export const kycRoutes = publicRoutes((route, ctx) => {
  route.post(
    '/v1/kyc/sessions',
    memberWrite({
      scope: 'kyc:write',
      errors: kycErrors.createSession,
      operationId: 'createKycSession',
      summary: "Open the KYC screen for the member's first profile",
      description:
        'A one-time hosted-screen link (single use, bound to the member, 24 hours). The member has a ' +
        'profile only once the screen is submitted, ' +
        ('not when the link is issued. A member who already has a profile: 409 `duplicate_resource` (update ' +
          'it with `POST /v1/kyc/profile-sessions`). No body.'),
      tags,
      response: { 201: HostedTicket },
    }),
    async ({ principal, req, write }) => write((trx) => createKycSession(ctx, trx, principal, hostedOrigin(req))),
  );

  route.post(
    '/v1/kyc/profile-sessions',
    memberWrite({
      scope: 'kyc:write',
      errors: kycErrors.profileSession,
      operationId: 'createKycProfileSession',
      summary: "Open the screen that updates the member's existing profile",
      description:
        'A one-time hosted-screen link (single use, bound to the member, 24 hours) to a pre-filled form; ' +
        'document images not uploaded again are kept. ' +
        ('After the update the profile returns to `pending_review` and `kyc_level` falls to 0 until the ' +
          'review passes. ') +
        'No profile yet: 404 `not_found` (never a creation; that is `POST /v1/kyc/sessions`). No body.',
      tags,
      response: { 201: HostedTicket },
    }),
    async ({ principal, req, write }) => write((trx) => createProfileSession(ctx, trx, principal, hostedOrigin(req))),
  );

  route.get(
    '/v1/kyc/profiles/:id',
    readOne({
      scope: 'kyc:write',
      errors: kycErrors.read,
      operationId: 'getKycProfile',
      summary: 'A KYC profile: status and level',
      description:
        "The profile a `kyc.profile.*` event names (`data.id`): ids, status and the member's `kyc_level`, " +
        'never the personal data. ' +
        ("On behalf of a member only its own; another member's or merchant's: 404 `not_found`. `kyp_` " +
          'prefix optional.'),
      tags,
      params: idParams({ maxLength: 80, description: 'kyp_<uuid>' }),
      response: ReviewedProfile,
    }),
    async ({ principal, params }) => getProfile(ctx.db, principal, params.id),
  );

  route.get(
    '/v1/kyc/requirements',
    readList({
      scope: 'kyc:write',
      errors: kycErrors.requirements,
      operationId: 'listKycRequirements',
      summary: 'Minimum KYC level per business',
      description:
        "A bounded list (never paged). A call that needs a higher level than the member's `kyc_level` " +
        'answers 400 `kyc_required`.',
      tags,
      item: Requirement,
    }),
    async ({ principal }) => constantList(orderRequirements(await requirementsOf(ctx.db, principal.environment))),
  );

  route.post(
    '/v1/sandbox/kyc/:member_id/review',
    {
      access: sandboxStep,
      errors: kycErrors.sandboxReview,
      schema: {
        operationId: 'reviewSandboxKyc',
        summary: "Decide the member's pending KYC review (sandbox)",
        description:
          "The simulated KYC provider's reviewer decides the submission waiting for review; the service then " +
          'applies the verdict as in production ' +
          '(profile status, `kyc_level`, `kyc.profile.*` event). `level` (1 or 2, default 1) only with `approved`. ' +
          ('No profile: 404 `not_found`; a profile not `pending_review`: 400 `state_invalid`. After a lost ' +
            'answer (502/504) the reviewer has decided ') +
          ('the submission: a retry with the same `decision` and `level` applies it, one with another is 400 ' +
            '`state_invalid`.'),
        tags: ['Sandbox'],
        params: Type.Object({
          member_id: MemberRef,
        }),
        body: Type.Object({
          decision: Type.Union([Type.Literal('approved'), Type.Literal('rejected')]),
          level: Type.Optional(Type.Union([Type.Literal(1), Type.Literal(2)])),
          reason: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 500,
              description: 'with `rejected`: kept for the operator, never sent to the merchant',
            }),
          ),
        }),
        response: { 200: ReviewedProfile },
      },
    },
    async ({ principal, params, body, once }) => once(() => sandboxReview(ctx, principal, params.member_id, body)),
  );
});
