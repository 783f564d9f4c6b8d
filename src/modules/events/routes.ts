import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { router } from '../../platform/route.js';
import { ApiError } from '../../platform/errors.js';
import { listEnvelope } from '../../platform/pagination.js';
import { findEvent, listEvents } from './queries.js';
import { Event, EventParams, EventsQuery } from './schemas.js';

const tags = ['Events'];

/** The events API (extensions 11, docs/events.md): kept events read by filters, one by id. */
export async function eventRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db } = ctx;
  const route = router(app, ctx);

  route.get('/v1/events', {
    access: { scope: 'events:read' },
    schema: {
      operationId: 'listEvents',
      summary: 'List events',
      description: `The environment's kept events (${ctx.config.eventRetentionDays} days; EVENT_RETENTION_DAYS), newest first (the order they were written). Each is exactly the body its webhook carried. Filters combine; an unknown \`type\` answers an empty page.`,
      tags,
      querystring: EventsQuery,
      response: { 200: listEnvelope(Event) },
    },
  }, async ({ principal, query }) => listEvents(db, principal, query));

  route.get('/v1/events/:id', {
    access: { scope: 'events:read' },
    errors: ['not_found'],
    schema: {
      operationId: 'getEvent',
      summary: 'Get an event',
      description: "One kept event, as its webhook body. Another merchant's, another environment's or a pruned event: `not_found`.",
      tags,
      params: EventParams,
      response: { 200: Event },
    },
  }, async ({ principal, params }) => {
    const event = await findEvent(db, principal, params.id);
    if (!event) throw new ApiError('not_found', 'No such event.');
    return event;
  });
}
