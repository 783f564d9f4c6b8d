import { Type } from 'typebox';
import { publicRoutes } from '../../platform/routes/route-module.js';
import { CreateMemberBody, Member, MemberIdParams } from './schemas.js';
import { createMembers, getMember, memberErrors, memberView, revokeSessions, suspendMember } from './service.js';
import { profileStatusOf } from '../kyc/index.js';
import { idParams, merchantWrite, readOne } from '../../platform/routes/route-kinds.js';

const tags = ['Members'];

export const memberRoutes = publicRoutes((route, ctx) => {
  const { db } = ctx;

  route.post(
    '/v1/members',
    merchantWrite({
      scope: 'members:write',
      errors: memberErrors.create,
      operationId: 'createMember',
      summary: 'Create a member',
      tags,
      body: CreateMemberBody,
      response: { 201: Member },
    }),
    {
      plan: ({ principal, body }) => ({
        merchantId: principal.merchantId,
        environment: principal.environment,
        externalId: body.external_member_id,
        profile: body.profile ?? {},
      }),
      commitMany: createMembers,
    },
  );

  route.get(
    '/v1/members/:id',
    readOne({
      scope: 'members:read',
      principal: 'merchant',
      errors: memberErrors.get,
      operationId: 'getMember',
      summary: 'Get a member',
      tags,
      params: MemberIdParams,
      response: Member,
    }),
    async ({ principal, params }) => {
      const member = await getMember(db, principal.merchantId, principal.environment, params.id);
      return memberView(member, await profileStatusOf(db, member.id));
    },
  );

  route.post(
    '/v1/members/:id/suspend',
    merchantWrite({
      scope: 'members:write',
      errors: memberErrors.suspend,
      operationId: 'suspendMember',
      summary: 'Suspend a member',
      description: 'Afterwards every on-behalf-of call for the member answers 404 member_not_found.',
      tags,
      params: MemberIdParams,
      response: { 200: Type.Object({ id: Type.String(), status: Type.Literal('suspended') }) },
    }),
    async ({ principal, params, writeNow }) =>
      writeNow((trx, now) => suspendMember(trx, principal.merchantId, principal.environment, params.id, now)),
  );

  route.post(
    '/v1/members/:id/sessions/revoke',
    merchantWrite({
      scope: 'members:write',
      errors: memberErrors.revokeSessions,
      operationId: 'revokeMemberSessions',
      summary: 'Sign a member out on all devices',
      description:
        'Voids every member-bound session and hosted-screen link of the member. Not a ban. The path takes ' +
        'only the external_member_id.',
      tags,
      params: idParams('external_member_id only'),
      response: { 200: Type.Object({ id: Type.String(), revoked: Type.Literal(true) }) },
    }),
    async ({ principal, params, writeNow }) =>
      writeNow((trx, now) => revokeSessions(trx, principal.merchantId, principal.environment, params.id, now)),
  );
});
