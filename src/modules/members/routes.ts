import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { executeWrite } from '../../platform/idempotency.js';
import { CreateMemberBody, Member, MemberIdParams } from './schemas.js';
import { createMember, getMember, memberView, revokeSessions, suspendMember } from './service.js';

const tags = ['Members'];

export async function memberRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db } = ctx;

  app.post('/v1/members', {
    config: { access: { scope: 'members:write', idempotency: 'required', errors: ['duplicate_resource'] } },
    schema: { summary: 'Create a member', tags, body: CreateMemberBody, response: { 201: Member } },
  }, async (req, reply) =>
    executeWrite(db, req, reply, async (trx) => ({
      status: 201,
      body: await createMember(trx, req.auth!.merchantId, req.auth!.environment, req.body.external_member_id, req.body.profile ?? {}),
    })));

  app.get('/v1/members/:id', {
    config: { access: { scope: 'members:read', errors: ['member_not_found'] } },
    schema: { summary: 'Get a member', tags, params: MemberIdParams, response: { 200: Member } },
  }, async (req) => memberView(await getMember(db, req.auth!.merchantId, req.auth!.environment, req.params.id)));

  app.post('/v1/members/:id/suspend', {
    config: { access: { scope: 'members:write', idempotency: 'required', errors: ['member_not_found'] } },
    schema: {
      summary: 'Suspend a member',
      description: 'Afterwards every on-behalf-of call for the member answers 404 member_not_found.',
      tags,
      params: MemberIdParams,
      response: { 200: Type.Object({ id: Type.String(), status: Type.Literal('suspended') }) },
    },
  }, async (req, reply) =>
    executeWrite(db, req, reply, async (trx) => ({
      status: 200,
      body: await suspendMember(trx, req.auth!.merchantId, req.auth!.environment, req.params.id),
    })));

  app.post('/v1/members/:id/sessions/revoke', {
    config: { access: { scope: 'members:write', idempotency: 'required', errors: ['member_not_found'] } },
    schema: {
      summary: 'Sign a member out on all devices',
      description: 'Voids every member-bound session and hosted-screen link of the member. Not a ban. The path takes only the external_member_id.',
      tags,
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: 'external_member_id only' }) }),
      response: { 200: Type.Object({ id: Type.String(), revoked: Type.Literal(true) }) },
    },
  }, async (req, reply) =>
    executeWrite(db, req, reply, async (trx) => ({
      status: 200,
      body: await revokeSessions(trx, req.auth!.merchantId, req.auth!.environment, req.params.id),
    })));
}
