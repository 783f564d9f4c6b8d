import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { approveScopes, createKey, rotateKey, updateKey } from './service.js';
import { createMerchant, getMerchant, setMerchantStatus } from './queries.js';
import { merchantStatuses, splitScopes } from './rules.js';

const Environment = Type.Union([Type.Literal('sandbox'), Type.Literal('production')]);
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

/** Operator calls: merchants and their API keys. */
export async function merchantOperatorRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db } = ctx;

  app.post('/admin/v1/merchants', {
    schema: { body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }) },
  }, async (req, reply) => reply.code(201).send(await createMerchant(db, req.body.name)));

  app.get('/admin/v1/merchants/:id', { schema: { params: IdParams } }, async (req) => getMerchant(db, req.params.id));

  app.patch('/admin/v1/merchants/:id', {
    schema: {
      params: IdParams,
      body: Type.Object({ status: Type.Union(merchantStatuses.map((s) => Type.Literal(s))) }),
    },
  }, async (req) => setMerchantStatus(db, req.params.id, req.body.status));

  app.post('/admin/v1/merchants/:id/api-keys', {
    schema: {
      params: IdParams,
      body: Type.Object({
        environment: Environment,
        scopes: Type.Array(Type.String(), { maxItems: 100 }),
        ip_allowlist: Type.Optional(Type.String({ maxLength: 10_000 })),
        expires_at: Type.Optional(Type.String({ format: 'date-time' })),
      }),
    },
  }, async (req, reply) => {
    await getMerchant(db, req.params.id);
    const { scopes, pending } = splitScopes(req.body.environment, req.body.scopes);
    const key = await createKey(db, {
      merchantId: req.params.id,
      environment: req.body.environment,
      scopes,
      pendingScopes: pending,
      ipAllowlist: req.body.ip_allowlist ?? '',
      expiresAt: req.body.expires_at ? new Date(req.body.expires_at) : null,
    });
    return reply.code(201).send(key);
  });

  app.post('/admin/v1/api-keys/:id/approve', {
    schema: { params: IdParams, body: Type.Optional(Type.Object({ scopes: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })) })) },
  }, async (req) => approveScopes(db, req.params.id, req.body?.scopes));

  app.patch('/admin/v1/api-keys/:id', {
    schema: {
      params: IdParams,
      body: Type.Object({
        scopes: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })),
        ip_allowlist: Type.Optional(Type.String({ maxLength: 10_000 })),
        disabled: Type.Optional(Type.Boolean()),
        expires_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
      }),
    },
  }, async (req) => updateKey(db, req.params.id, req.body));

  app.post('/admin/v1/api-keys/:id/rotate', {
    schema: { params: IdParams, body: Type.Object({ overlap_seconds: Type.Integer({ minimum: 0, maximum: 30 * 24 * 3600 }) }) },
  }, async (req, reply) => reply.code(201).send(await rotateKey(db, req.params.id, req.body.overlap_seconds)));
}
