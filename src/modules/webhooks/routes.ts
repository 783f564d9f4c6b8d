import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { router } from '../../platform/routes/route.js';
import { merchantWrite, readList } from '../../platform/routes/route-kinds.js';
import { ApiError } from '../../platform/errors.js';
import { PageQuery } from '../../platform/routes/pagination.js';
import {
  checkEndpointUrl,
  createEndpoint,
  deleteEndpoint,
  listDeliveries,
  listEndpoints,
  overlapSecondsDefault,
  overlapSecondsMax,
  redeliver,
  replayEndpoint,
  replayEventsMax,
  requeueBatchMax,
  requeueSince,
  rollSecret,
  updateEndpoint,
  endpointsPerMerchantMax,
  webhookErrors,
} from './service.js';
import {
  CreatedEndpoint,
  DeletedEndpoint,
  Delivery,
  DeliveryStatusFilter,
  Endpoint,
  EventTypes,
  IdParams,
  RequeueResult,
  RolledEndpoint,
  Url,
} from './schemas.js';

const tags = ['Webhooks'];

export async function webhookRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db, config } = ctx;
  const route = router(app, ctx);

  route.post(
    '/v1/webhooks/endpoints',
    merchantWrite({
      scope: 'webhooks:write',
      errors: webhookErrors.createEndpoint,
      operationId: 'createWebhookEndpoint',
      summary: 'Create a webhook endpoint',
      description:
        `Subscribes a URL to event types. The \`secret\` is shown only in this response. At ` +
        `most ${endpointsPerMerchantMax} endpoints per environment. A URL that fails the address check ` +
        `answers \`invalid_fields\` with \`fields: [{key: "url", reason}]\`.`,
      tags,
      body: Type.Object({ url: Url, event_types: EventTypes }),
      response: { 201: CreatedEndpoint },
    }),
    async ({ principal, body, writeNow }) => {
      await checkEndpointUrl(config, principal.environment, body.url);
      return writeNow((trx, now) => createEndpoint(trx, principal, body, now));
    },
  );

  route.get(
    '/v1/webhooks/endpoints',
    readList({
      scope: 'webhooks:read',
      principal: 'merchant',
      operationId: 'listWebhookEndpoints',
      summary: 'List webhook endpoints',
      description:
        `Every endpoint of the environment (at most ${endpointsPerMerchantMax}, one page), newest first, ` +
        `without secrets.`,
      tags,
      item: Endpoint,
    }),
    async ({ principal }) => listEndpoints(db, principal),
  );

  route.patch(
    '/v1/webhooks/endpoints/:id',
    merchantWrite({
      scope: 'webhooks:write',
      idempotency: 'optional',
      errors: webhookErrors.updateEndpoint,
      operationId: 'updateWebhookEndpoint',
      summary: 'Update a webhook endpoint',
      description:
        '`{status: "enabled"}` re-enables a disabled endpoint (its failure streak restarts; requeue its ' +
        'dead deliveries separately); `{status: "disabled"}` pauses it. `event_types` and `url` replace ' +
        'the current values (the URL is checked again); a record already planned for a type the new ' +
        '`event_types` leave out goes `dead` at its next attempt, unsent (redeliver and requeue leave it ' +
        'until the type is added back).',
      tags,
      params: IdParams('whe'),
      body: Type.Object(
        {
          status: Type.Optional(Type.Union([Type.Literal('enabled'), Type.Literal('disabled')])),
          event_types: Type.Optional(EventTypes),
          url: Type.Optional(Url),
        },
        { minProperties: 1 },
      ),
      response: { 200: Endpoint },
    }),
    async ({ principal, params, body, writeNow }) => {
      // `minProperties` counts keys the schema does not name (validation keeps them): a body of only
      // such keys (a misspelt `Status`) changed nothing and answered 200. It is refused as {} is.
      if (body.status === undefined && body.event_types === undefined && body.url === undefined) {
        throw new ApiError('invalid_request', 'Send at least one of status, event_types and url.');
      }
      if (body.url !== undefined) await checkEndpointUrl(config, principal.environment, body.url);
      return writeNow((trx, now) => updateEndpoint(trx, principal, params.id, body, now));
    },
  );

  route.delete(
    '/v1/webhooks/endpoints/:id',
    merchantWrite({
      scope: 'webhooks:write',
      idempotency: 'none',
      errors: webhookErrors.deleteEndpoint,
      operationId: 'deleteWebhookEndpoint',
      summary: 'Delete a webhook endpoint',
      description:
        'Removes the endpoint and its secret; deliveries still planned for it end `dead`. Naturally ' +
        'idempotent: a repeat answers the same.',
      tags,
      params: IdParams('whe'),
      response: { 200: DeletedEndpoint },
    }),
    async ({ principal, params, writeNow }) => writeNow((trx, now) => deleteEndpoint(trx, principal, params.id, now)),
  );

  route.post(
    '/v1/webhooks/endpoints/:id/roll-secret',
    merchantWrite({
      scope: 'webhooks:write',
      errors: webhookErrors.rollSecret,
      operationId: 'rollWebhookEndpointSecret',
      summary: 'Roll the signing secret of a webhook endpoint',
      description:
        `A new secret, shown only here. The previous one keeps signing beside it for \`overlap_seconds\` ` +
        `(default ${overlapSecondsDefault}, at most ${overlapSecondsMax}; 0 drops it now): each request then ` +
        `carries both signatures, space separated, in \`webhook-signature\`.`,
      tags,
      params: IdParams('whe'),
      // Optional: no body at all means the defaults (route.ts reads it as `{}`; the document marks it not required).
      body: Type.Optional(
        Type.Object({
          overlap_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: overlapSecondsMax })),
        }),
      ),
      response: { 200: RolledEndpoint },
    }),
    async ({ principal, params, body, writeNow }) => {
      const overlap = body.overlap_seconds ?? overlapSecondsDefault;
      return writeNow((trx, now) => rollSecret(trx, principal, params.id, overlap, now));
    },
  );

  route.post(
    '/v1/webhooks/endpoints/:id/replay',
    merchantWrite({
      scope: 'webhooks:write',
      errors: webhookErrors.replay,
      operationId: 'replayWebhookEndpoint',
      summary: 'Replay events to a webhook endpoint',
      description:
        `Queues a new delivery to this endpoint of every kept event created from \`since\` (inclusive) to ` +
        `\`until\` (exclusive; default now) that the endpoint subscribes to; with \`only_failed\` (default ` +
        `true), only those whose delivery record for this endpoint is not \`sent\` (an event that had no ` +
        `subscriber counts as not sent). Records already \`pending\` are left (queued already) and not ` +
        `counted. At most ${replayEventsMax} events per call, oldest first: with \`only_failed\`, the same ` +
        `call again continues. A range longer than the retention (EVENT_RETENTION_DAYS), or an endpoint that ` +
        `is not \`enabled\`: \`state_invalid\`. Queued, not delivered.`,
      tags,
      params: IdParams('whe'),
      body: Type.Object({
        since: Type.String({ format: 'date-time' }),
        until: Type.Optional(Type.String({ format: 'date-time' })),
        only_failed: Type.Optional(Type.Boolean({ description: 'default true' })),
      }),
      response: {
        200: Type.Object(
          {
            id: Type.String({ description: 'the endpoint (whe_...)' }),
            queued: Type.Integer({ description: 'deliveries queued by this call' }),
          },
          { title: 'WebhookReplayResult' },
        ),
      },
    }),
    async ({ principal, params, body, writeNow }) =>
      writeNow((trx, now) => replayEndpoint(trx, principal, params.id, body, now, config.eventRetentionDays)),
  );

  route.get(
    '/v1/webhooks/deliveries',
    readList({
      scope: 'merchant:read',
      principal: 'merchant',
      operationId: 'listWebhookDeliveries',
      summary: 'List webhook deliveries',
      description:
        'Delivery log without payload, newest first. `status` filters (`pending`, `sent`, `failed`, ' +
        '`dead`, `no_subscriber`; empty means all; an unknown value returns an empty page).',
      tags,
      query: Type.Object({ ...PageQuery.properties, status: Type.Optional(DeliveryStatusFilter) }),
      item: Delivery,
    }),
    async ({ principal, query }) => listDeliveries(db, principal, query),
  );

  route.post(
    '/v1/webhooks/deliveries/requeue',
    merchantWrite({
      scope: 'merchant:read',
      operationId: 'requeueWebhookDeliveries',
      summary: 'Requeue failed and dead deliveries since a time',
      description:
        `Every \`failed\` and/or \`dead\` record created at or after \`since\` goes back to the queue with a ` +
        `new attempt schedule, oldest first (records of a disabled or deleted endpoint, or of one that no ` +
        `longer subscribes to their event's type, stay as they are until it is enabled or widened again), at ` +
        `most ${requeueBatchMax} per call (\`has_more\` then says to call again).`,
      tags,
      body: Type.Object({
        since: Type.String({ format: 'date-time' }),
        status: Type.Optional(
          Type.Union([Type.Literal('failed'), Type.Literal('dead')], { description: 'default: both' }),
        ),
      }),
      response: { 200: RequeueResult },
    }),
    async ({ principal, body, writeNow }) =>
      writeNow(async (trx, now) => {
        const { queued, limit } = await requeueSince(trx, principal, new Date(body.since), body.status, now);
        return { queued, has_more: queued >= limit };
      }),
  );

  route.post(
    '/v1/webhooks/deliveries/:id/redeliver',
    merchantWrite({
      scope: 'merchant:read',
      errors: webhookErrors.redeliver,
      operationId: 'redeliverWebhookDelivery',
      summary: 'Redeliver a webhook',
      description:
        '`dead` and `failed` records are queued again with a new attempt schedule; a `no_subscriber` ' +
        'record is bound to the endpoints that subscribe now (one record each), or refused with ' +
        '`state_invalid` if none does. `sent` and `pending` answer `state_invalid`, and so does a `dead` ' +
        'or `failed` record whose endpoint is disabled or deleted (re-enable the endpoint first) or no ' +
        'longer subscribes to the event type (add it to `event_types` first). Queued, not delivered.',
      tags,
      params: IdParams('whd'),
      response: { 200: Type.Object({ id: Type.String(), queued: Type.Literal(true) }) },
    }),
    async ({ principal, params, writeNow }) => writeNow((trx, now) => redeliver(trx, principal, params.id, now)),
  );
}
