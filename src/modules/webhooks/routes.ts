import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { executeWrite } from '../../platform/idempotency.js';
import { PageQuery, listEnvelope } from '../../platform/pagination.js';
import {
  checkEndpointUrl, createEndpoint, deleteEndpoint, listDeliveries, listEndpoints, overlapSecondsDefault, overlapSecondsMax,
  redeliver, requeueBatchMax, requeueSince, rollSecret, updateEndpoint, endpointsPerMerchantMax,
} from './service.js';
import { maxUrlLength } from './ssrf.js';

const tags = ['Webhooks'];

const EventTypes = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 50,
  description: '`["*"]` for every event, or event types such as `withdrawal.settled`, `deposit.credited`, `qrpay.order.completed` (pattern `^[a-z_]+(\\.[a-z_]+)+$`).',
});
const Url = Type.String({
  minLength: 1,
  maxLength: maxUrlLength,
  description: 'https; it must not resolve to loopback, private, link-local, metadata, multicast or unspecified addresses (checked now and before every attempt). The sandbox also accepts http and loopback/private addresses.',
});
const EndpointStatus = Type.String({ description: '`enabled` or `disabled` (by the merchant, after a 410 Gone, or after failing for 3 days)' });
const Endpoint = Type.Object({
  id: Type.String({ description: 'whe_<uuid>' }),
  url: Type.String(),
  event_types: Type.Array(Type.String()),
  status: EndpointStatus,
  disabled_reason: Type.String({ description: "'' when enabled; `merchant`, `gone` (410) or `failing`" }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
const Secret = Type.String({ description: '`whsec_<base64 of 32 bytes>`: shown only in this response. Verify with the Standard Webhooks scheme.' });
const IdParams = (prefix: string) => Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: `${prefix}_ prefix optional` }) });
const Delivery = Type.Object({
  id: Type.String({ description: 'whd_<uuid>' }),
  event_id: Type.String(),
  event_type: Type.String(),
  status: Type.String({ description: '`pending`, `sent`, `failed`, `dead`, `no_subscriber`; treat any other value as unknown, never as a failure' }),
  attempts: Type.Integer(),
  last_http_status: Type.Integer({ description: '0 if never answered' }),
  next_attempt_at: Type.String({ description: "ISO 8601, or '' when no attempt is planned" }),
  created_at: Type.String({ format: 'date-time' }),
});

export async function webhookRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db, config } = ctx;
  const caller = (req: { auth?: { merchantId: string; environment: 'sandbox' | 'production' } }) => ({
    merchantId: req.auth!.merchantId,
    environment: req.auth!.environment,
  });

  app.post('/v1/webhooks/endpoints', {
    config: { access: { scope: 'webhooks:write', idempotency: 'required', errors: ['invalid_fields', 'limit_exceeded'] } },
    schema: {
      summary: 'Create a webhook endpoint',
      description: `Subscribes a URL to event types. The \`secret\` is shown only in this response. At most ${endpointsPerMerchantMax} endpoints per environment. A URL that fails the address check answers \`invalid_fields\` with \`fields: [{key: "url", reason}]\`.`,
      tags,
      body: Type.Object({ url: Url, event_types: EventTypes }),
      response: {
        201: Type.Object({
          id: Type.String(), url: Type.String(), event_types: Type.Array(Type.String()), secret: Secret, status: EndpointStatus,
          created_at: Type.String({ format: 'date-time' }),
        }),
      },
    },
  }, async (req, reply) => {
    await checkEndpointUrl(config, req.auth!.environment, req.body.url);
    return executeWrite(db, req, reply, async (trx) => ({ status: 201, body: await createEndpoint(trx, caller(req), req.body) }));
  });

  app.get('/v1/webhooks/endpoints', {
    config: { access: { scope: 'webhooks:read' } },
    schema: {
      summary: 'List webhook endpoints',
      description: `Every endpoint of the environment (at most ${endpointsPerMerchantMax}, one page), newest first, without secrets.`,
      tags,
      response: { 200: listEnvelope(Endpoint) },
    },
  }, async (req) => listEndpoints(db, caller(req)));

  app.patch('/v1/webhooks/endpoints/:id', {
    config: { access: { scope: 'webhooks:write', idempotency: 'optional', errors: ['not_found', 'invalid_fields'] } },
    schema: {
      summary: 'Update a webhook endpoint',
      description: '`{status: "enabled"}` re-enables a disabled endpoint (its failure streak restarts; requeue its dead deliveries separately); `{status: "disabled"}` pauses it. `event_types` and `url` replace the current values (the URL is checked again).',
      tags,
      params: IdParams('whe'),
      body: Type.Object({
        status: Type.Optional(Type.Union([Type.Literal('enabled'), Type.Literal('disabled')])),
        event_types: Type.Optional(EventTypes),
        url: Type.Optional(Url),
      }, { minProperties: 1 }),
      response: { 200: Endpoint },
    },
  }, async (req, reply) => {
    if (req.body.url !== undefined) await checkEndpointUrl(config, req.auth!.environment, req.body.url);
    return executeWrite(db, req, reply, async (trx) => ({ status: 200, body: await updateEndpoint(trx, caller(req), req.params.id, req.body) }));
  });

  app.delete('/v1/webhooks/endpoints/:id', {
    config: { access: { scope: 'webhooks:write', errors: ['not_found'] } },
    schema: {
      summary: 'Delete a webhook endpoint',
      description: 'Removes the endpoint and its secret; deliveries still planned for it end `dead`. Naturally idempotent: a repeat answers the same.',
      tags,
      params: IdParams('whe'),
      response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }) },
    },
  }, async (req, reply) => executeWrite(db, req, reply, async (trx) => ({ status: 200, body: await deleteEndpoint(trx, caller(req), req.params.id) })));

  app.post('/v1/webhooks/endpoints/:id/roll-secret', {
    config: { access: { scope: 'webhooks:write', idempotency: 'required', errors: ['not_found'] } },
    schema: {
      summary: 'Roll the signing secret of a webhook endpoint',
      description: `A new secret, shown only here. The previous one keeps signing beside it for \`overlap_seconds\` (default ${overlapSecondsDefault}, at most ${overlapSecondsMax}; 0 drops it now): each request then carries both signatures, space separated, in \`webhook-signature\`.`,
      tags,
      params: IdParams('whe'),
      body: Type.Object({
        overlap_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: overlapSecondsMax })),
      }),
      response: {
        200: Type.Object({
          ...Endpoint.properties,
          secret: Secret,
          previous_secret_expires_at: Type.String({ description: "When the previous secret stops signing; '' when it already has" }),
        }),
      },
    },
    // The body is optional: an empty one means the defaults.
    preValidation: async (req) => {
      if (req.body === undefined) req.body = {};
    },
  }, async (req, reply) => {
    const overlap = req.body.overlap_seconds ?? overlapSecondsDefault;
    return executeWrite(db, req, reply, async (trx) => ({ status: 200, body: await rollSecret(trx, caller(req), req.params.id, overlap) }));
  });

  app.get('/v1/webhooks/deliveries', {
    config: { access: { scope: 'merchant:read' } },
    schema: {
      summary: 'List webhook deliveries',
      description: 'Delivery log without payload, newest first. `status` filters (`pending`, `sent`, `failed`, `dead`, `no_subscriber`; empty means all; an unknown value returns an empty page).',
      tags,
      querystring: Type.Object({ ...PageQuery.properties, status: Type.Optional(Type.String({ maxLength: 40 })) }),
      response: { 200: listEnvelope(Delivery) },
    },
  }, async (req) => listDeliveries(db, caller(req), req.query));

  app.post('/v1/webhooks/deliveries/requeue', {
    config: { access: { scope: 'merchant:read', idempotency: 'required' } },
    schema: {
      summary: 'Requeue failed and dead deliveries since a time',
      description: `Every \`failed\` and/or \`dead\` record created at or after \`since\` goes back to the queue with a new attempt schedule, oldest first, at most ${requeueBatchMax} per call (\`has_more\` then says to call again).`,
      tags,
      body: Type.Object({
        since: Type.String({ format: 'date-time' }),
        status: Type.Optional(Type.Union([Type.Literal('failed'), Type.Literal('dead')], { description: 'default: both' })),
      }),
      response: { 200: Type.Object({ queued: Type.Integer(), has_more: Type.Boolean() }) },
    },
  }, async (req, reply) =>
    executeWrite(db, req, reply, async (trx) => {
      const { queued, limit } = await requeueSince(trx, caller(req), new Date(req.body.since), req.body.status);
      return { status: 200, body: { queued, has_more: queued >= limit } };
    }));

  app.post('/v1/webhooks/deliveries/:id/redeliver', {
    config: { access: { scope: 'merchant:read', idempotency: 'required', errors: ['state_invalid', 'not_found'] } },
    schema: {
      summary: 'Redeliver a webhook',
      description: '`dead` and `failed` records are queued again with a new attempt schedule; a `no_subscriber` record is bound to the endpoints that subscribe now (one record each), or refused with `state_invalid` if none does. `sent` and `pending` answer `state_invalid`. Queued, not delivered.',
      tags,
      params: IdParams('whd'),
      response: { 200: Type.Object({ id: Type.String(), queued: Type.Literal(true) }) },
    },
  }, async (req, reply) => executeWrite(db, req, reply, async (trx) => ({ status: 200, body: await redeliver(trx, caller(req), req.params.id) })));
}
