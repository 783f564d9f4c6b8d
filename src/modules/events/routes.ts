import type { AppInstance } from '../../platform/http/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { Type } from 'typebox';
import { router } from '../../platform/routes/route.js';
import { readList, readOne } from '../../platform/routes/route-kinds.js';
import { mount } from '../../platform/routes/route-mount.js';
import type { MerchantPrincipal } from '../../platform/routes/route-types.js';
import type { RouteAccess } from '../../platform/routes/route-access.js';
import { ApiError } from '../../platform/errors.js';
import { authenticate, authenticateHeld, bearerFrom, checkIp, checkMerchantStatus } from '../../platform/auth/auth.js';
import { hasScope } from '../../platform/auth/scopes.js';
import { findEvent, listEvents, typesOfFilter } from './queries.js';
import { Event, EventParams, EventsQuery, StreamQuery } from './schemas.js';
import { StreamHub, streamsPerKeyMax } from './stream.js';
import { useRetention } from './retention.js';

const tags = ['Events'];

const streamAccess: RouteAccess = { scope: 'events:read', errors: ['rate_limited'] };

/** The events API (extensions 11, docs/events.md): kept events read by filters, one by id, and the live stream. */
export async function eventRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db } = ctx;
  useRetention(ctx.config.eventRetentionDays);
  const route = router(app, ctx);

  route.get(
    '/v1/events',
    readList({
      scope: 'events:read',
      principal: 'merchant',
      operationId: 'listEvents',
      summary: 'List events',
      description:
        `The environment's kept events (${ctx.config.eventRetentionDays} days; EVENT_RETENTION_DAYS), newest ` +
        `first (the order they were written). Each is exactly the body its webhook carried. Filters combine; ` +
        `an unknown \`type\` answers an empty page.`,
      tags,
      query: EventsQuery,
      item: Event,
    }),
    async ({ principal, query }) => listEvents(db, principal, query),
  );

  // The stream answers with a body it writes as events come (a stream, not a serialized value), so
  // it is mounted with the route helper's core (access, pipeline hooks, request id, log line,
  // metrics) and handed the reply. Registered before `/v1/events/:id` (the router prefers the
  // static path anyway).
  const hub = new StreamHub(ctx);
  // The drain (SIGTERM): streams end as the listener starts to close, not at SHUTDOWN_TIMEOUT_MS.
  app.addHook('preClose', (done) => {
    hub.closeAll();
    done();
  });
  app.addHook('onClose', async () => hub.stop());
  mount(
    app,
    ctx,
    'GET',
    '/v1/events/stream',
    {
      config: { access: streamAccess },
      schema: {
        operationId: 'streamEvents',
        summary: 'Stream events (server-sent events)',
        description:
          `\`text/event-stream\`: each new event of the merchant and environment as \`id: <event_id>\`, ` +
          `\`event: <event_type>\`, \`data: <event JSON>\` (the Event object). \`Last-Event-ID\` (header) ` +
          `resumes after that event: the kept events after it first, then new ones as they are written, none ` +
          `lost or repeated (an id that is not a kept event of the merchant replays every kept event). A ` +
          `comment line at least every 15 s keeps the connection open. At most ${streamsPerKeyMax} streams per ` +
          `API key are open at once (across processes); the next answers 429 \`rate_limited\` with ` +
          `\`Retry-After\`. Streams end when the service shuts down: reconnect with \`Last-Event-ID\`.`,
        tags,
        querystring: StreamQuery,
        headers: Type.Object({
          'last-event-id': Type.Optional(
            Type.String({
              maxLength: 200,
              description: 'The id of the last event received (`evt_...`): the stream resumes after it',
            }),
          ),
        }),
        response: {
          200: {
            content: {
              'text/event-stream': {
                schema: Type.String({ description: 'Server-sent events; each data line is an Event (JSON)' }),
              },
            },
          } as never,
        },
      },
    },
    (req, reply) => ({ req, reply }),
    async ({ req, reply }) => {
      const auth = req.auth!;
      const principal: MerchantPrincipal = {
        merchantId: auth.merchantId,
        environment: auth.environment,
        keyId: auth.keyId,
        scopes: auth.scopes,
      };
      const query = req.query as { type?: string };
      const lastEventId = req.headers['last-event-id'];
      // The pipeline checked the token once, when the stream opened; a stream lasts, so the same
      // checks are asked again as it goes (the process's auth cache answers them without a read
      // until a change of key, merchant or token empties it).
      const token = bearerFrom(req.headers);
      const clientIp = req.ip;
      const stillAllowed = async (): Promise<boolean> => {
        try {
          const nowMs = ctx.requestClock();
          const now =
            authenticateHeld(ctx.authCache, token, auth.environment, nowMs) ??
            (await authenticate(db, ctx.authCache, token, auth.environment, nowMs));
          checkIp(now.environment, now.ipAllowlist, clientIp);
          checkMerchantStatus(now.merchantStatus, true);
          return now.keyId === auth.keyId && now.merchantId === auth.merchantId && hasScope(now.scopes, 'events:read');
        } catch (err) {
          if (err instanceof ApiError) return false;
          throw err;
        }
      };
      const out = await hub.open({
        scope: principal,
        keyId: principal.keyId,
        types: typesOfFilter(query.type),
        lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined,
        stillAllowed,
      });
      // A client gone while the stream was being opened: Fastify saw the close before it had the
      // stream to end, so it is ended here (its lease, feed subscription and timers with it).
      const res = reply.raw;
      if (res.destroyed || req.raw.socket?.destroyed) out.destroy();
      else res.once('close', () => out.destroy());
      return reply
        .code(200)
        .headers({
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          'x-accel-buffering': 'no',
        })
        .send(out);
    },
  );

  route.get(
    '/v1/events/:id',
    readOne({
      scope: 'events:read',
      principal: 'merchant',
      errors: ['not_found'],
      operationId: 'getEvent',
      summary: 'Get an event',
      description:
        "One kept event, as its webhook body. Another merchant's, another environment's or a pruned event: " +
        '`not_found`.',
      tags,
      params: EventParams,
      response: Event,
    }),
    async ({ principal, params }) => {
      const event = await findEvent(db, principal, params.id);
      if (!event) throw new ApiError('not_found', 'No such event.');
      return event;
    },
  );
}
