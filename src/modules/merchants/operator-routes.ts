import { Type } from 'typebox';
import {
  OperatorEnvironment,
  OperatorIdParams as IdParams,
  Time,
  TimeOrNull,
} from '../../platform/routes/operator-route.js';
import { operatorRoutes } from '../../platform/routes/route-module.js';
import { operatorCreate, operatorReadOne, operatorUpdate } from '../../platform/routes/route-kinds.js';
import { approveScopes, createKey, rotateKey, updateKey } from './service.js';
import { createMerchant, getMerchant, setMerchantStatus } from './queries.js';
import { merchantStatuses, splitScopes } from './rules.js';

const Merchant = Type.Object(
  { id: Type.String(), name: Type.String(), status: Type.String(), created_at: Time },
  { title: 'Merchant' },
);
const Scopes = Type.Array(Type.String());
const ApiKey = Type.Object(
  {
    id: Type.String(),
    merchant_id: Type.String(),
    client_id: Type.String(),
    environment: OperatorEnvironment,
    scopes: Scopes,
    pending_scopes: Scopes,
    ip_allowlist: Type.String(),
    disabled: Type.Boolean(),
    expires_at: TimeOrNull,
    created_at: Time,
  },
  { title: 'ApiKey' },
);
/** A new key with its secrets: shown once, at creation and rotation. */
const ApiKeyWithSecrets = Type.Object(
  { ...ApiKey.properties, api_key: Type.String(), signing_key: Type.String() },
  { title: 'ApiKeyWithSecrets' },
);

/** Operator calls: merchants and their API keys. */
export const merchantOperatorRoutes = operatorRoutes((route, ctx) => {
  route.post(
    '/admin/v1/merchants',
    operatorCreate({
      operationId: 'createMerchant',
      body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }),
      response: Merchant,
    }),
    ({ body, write }) => write((trx) => createMerchant(trx, body.name, ctx.clock.real())),
  );

  route.get(
    '/admin/v1/merchants/:id',
    operatorReadOne({ operationId: 'getMerchant', params: IdParams, response: Merchant }),
    ({ params }) => getMerchant(ctx.db, params.id),
  );

  route.patch(
    '/admin/v1/merchants/:id',
    operatorUpdate({
      operationId: 'updateMerchant',
      params: IdParams,
      body: Type.Object({ status: Type.Union(merchantStatuses.map((s) => Type.Literal(s))) }),
      response: Merchant,
    }),
    ({ params, body, write }) => write((trx) => setMerchantStatus(trx, params.id, body.status, ctx.clock.real())),
  );

  route.post(
    '/admin/v1/merchants/:id/api-keys',
    operatorCreate({
      operationId: 'createApiKey',
      // invalid_fields: a production key without an IP allow-list (extensions 2), or a list too long.
      errors: ['not_found', 'invalid_fields'],
      params: IdParams,
      body: Type.Object({
        environment: OperatorEnvironment,
        scopes: Type.Array(Type.String(), { maxItems: 100 }),
        ip_allowlist: Type.Optional(Type.String({ maxLength: 10_000 })),
        expires_at: Type.Optional(Type.String({ format: 'date-time' })),
      }),
      response: ApiKeyWithSecrets,
    }),
    ({ params, body, write }) =>
      write(async (trx) => {
        await getMerchant(trx, params.id);
        const { scopes, pending } = splitScopes(body.environment, body.scopes);
        return createKey(
          trx,
          {
            merchantId: params.id,
            environment: body.environment,
            scopes,
            pendingScopes: pending,
            ipAllowlist: body.ip_allowlist ?? '',
            expiresAt: body.expires_at ? new Date(body.expires_at) : null,
          },
          ctx.clock.real(),
        );
      }),
  );

  route.post(
    '/admin/v1/api-keys/:id/approve',
    operatorUpdate({
      operationId: 'approveApiKey',
      params: IdParams,
      body: Type.Optional(Type.Object({ scopes: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })) })),
      response: ApiKey,
    }),
    ({ params, body, write }) => write((trx) => approveScopes(trx, params.id, body?.scopes, ctx.clock.real())),
  );

  route.patch(
    '/admin/v1/api-keys/:id',
    operatorUpdate({
      operationId: 'updateApiKey',
      errors: ['not_found', 'invalid_fields'],
      params: IdParams,
      body: Type.Object({
        scopes: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })),
        ip_allowlist: Type.Optional(Type.String({ maxLength: 10_000 })),
        disabled: Type.Optional(Type.Boolean()),
        expires_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
      }),
      response: ApiKey,
    }),
    ({ params, body, write }) => write((trx) => updateKey(trx, params.id, body, ctx.clock.real())),
  );

  route.post(
    '/admin/v1/api-keys/:id/rotate',
    operatorCreate({
      operationId: 'rotateApiKey',
      errors: ['not_found', 'state_invalid'],
      params: IdParams,
      body: Type.Object({ overlap_seconds: Type.Integer({ minimum: 0, maximum: 30 * 24 * 3600 }) }),
      response: ApiKeyWithSecrets,
    }),
    ({ params, body, write }) => write((trx) => rotateKey(trx, params.id, body.overlap_seconds, ctx.clock.real())),
  );
});
