import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { html } from '../modules/hosted-screens/index.js';
import { type EventObject, findEvent, listEvents } from '../modules/events/index.js';
import { callerOf, type PageRequest } from './http.js';

import { eventDeliveries } from './queries/webhooks.js';
import { badge, envPath, sendPage, shortId, table, when, listTable } from './views.js';
import { selectInput, textInput } from './fields.js';
import { getPage } from './guards.js';

/**
 * Events (extensions 11, docs/events.md): the Events page with the API's filters, one event with
 * its body and its deliveries (an endpoint's page with the Replay form: endpoint-pages.ts). The
 * reads are the events area's own queries: the same rules as the API.
 */

const isTime = (v: string) => v !== '' && !Number.isNaN(Date.parse(v));

interface Filters {
  type: string;
  object_id: string;
  created_gte: string;
  created_lt: string;
  delivery_success: string;
  cursor?: string;
}

async function eventsPage(ctx: ServiceContext, req: FastifyRequest, reply: FastifyReply, page: PageRequest) {
  const q = req.query as Partial<Record<keyof Filters, string>>;
  const f: Filters = {
    type: (q.type ?? '').trim(),
    object_id: (q.object_id ?? '').trim(),
    created_gte: (q.created_gte ?? '').trim(),
    created_lt: (q.created_lt ?? '').trim(),
    delivery_success: q.delivery_success === 'true' || q.delivery_success === 'false' ? q.delivery_success : '',
  };
  const bad = (['created_gte', 'created_lt'] as const).filter((k) => f[k] !== '' && !isTime(f[k]));
  const list = await listEvents(ctx.db, callerOf(page), {
    ...(f.type ? { type: f.type } : {}),
    ...(f.object_id ? { object_id: f.object_id } : {}),
    ...(isTime(f.created_gte) ? { created_gte: f.created_gte } : {}),
    ...(isTime(f.created_lt) ? { created_lt: f.created_lt } : {}),
    ...(f.delivery_success ? { delivery_success: f.delivery_success === 'true' } : {}),
    limit: 25,
    cursor: q.cursor,
  });
  const base = envPath(page.environment, '/events');
  const kept = Object.fromEntries(Object.entries(f).filter(([, v]) => v !== '')) as Record<string, string>;
  return sendPage(reply, page, {
    title: 'Events',
    section: '/events',
    problem: bad.length
      ? `Not a time: ${bad.join(', ')} (use ISO 8601, such as 2026-01-31T12:00:00Z); that filter is left out.`
      : undefined,
    body: html`<p>Every event of this environment kept for ${ctx.config.eventRetentionDays} days, as its webhook
         carried it, newest first.</p>
<form method="get" action="${base}" class="filters">${textInput('type', 'Type', {
      value: f.type,
      hint: 'An exact type, or a prefix ending in .* such as card.*',
    })}${textInput('object_id', 'Object id', {
      value: f.object_id,
    })}${textInput('created_gte', 'Created from', { value: f.created_gte, hint: 'ISO 8601' })}${textInput(
      'created_lt',
      'Created before',
      { value: f.created_lt, hint: 'ISO 8601' },
    )}${selectInput(
      'delivery_success',
      'Delivery',
      [
        { value: '', label: 'Any' },
        { value: 'true', label: 'All sent' },
        { value: 'false', label: 'Failed, dead or no subscriber' },
      ],
      f.delivery_success,
    )}<button type="submit" class="secondary">Filter</button></form>
${listTable(
  'Events, newest first',
  [
    { label: 'Time', cell: (e: EventObject) => when(e.created_at) },
    {
      label: 'Event',
      cell: (e) => html`<a href="${base}/${e.event_id}"><code>${e.event_type}</code></a><br>${shortId(e.event_id)}`,
    },
    { label: 'Object', cell: (e) => html`${e.data.object}<br>${shortId(e.data.id)}` },
    { label: 'Status', cell: (e) => e.data.status },
    { label: 'Version', cell: (e) => String(e.data.status_version), num: true },
  ],
  list,
  'No events match.',
  base,
  kept,
)}`,
  });
}

async function eventPage(ctx: ServiceContext, req: FastifyRequest, reply: FastifyReply, page: PageRequest) {
  const event = await findEvent(ctx.db, callerOf(page), (req.params as { id: string }).id);
  if (!event) {
    return sendPage(
      reply,
      page,
      {
        title: 'Event not found',
        section: '/events',
        body: html`<p>No such event in this environment (it may be older than the retention).</p>`,
      },
      404,
    );
  }
  const records = await eventDeliveries(ctx.db, page.session.merchantId, event.event_id);
  type R = (typeof records)[number];
  return sendPage(reply, page, {
    title: `Event ${event.event_type}`,
    section: '/events',
    body: html`<div class="card"><h2>The webhook body</h2><pre class="mono">${JSON.stringify(event, null, 2)}</pre>
        </div>${table(
          'Deliveries',
          [
            { label: 'Delivery', cell: (r: R) => html`<span class="mono">${r.id}</span>` },
            {
              label: 'Endpoint',
              cell: (r) =>
                r.endpoint_id
                  ? html`<a href="${envPath(page.environment, `/webhooks/${r.endpoint_id}`)}" class="mono">${
                      r.endpoint_id
                    }</a>`
                  : 'none',
            },
            {
              label: 'Status',
              cell: (r) =>
                badge(
                  r.status.replace('_', ' '),
                  r.status === 'sent'
                    ? 'ok'
                    : r.status === 'pending'
                      ? 'warn'
                      : r.status === 'no_subscriber'
                        ? ''
                        : 'bad',
                ),
            },
            { label: 'Attempts', cell: (r) => String(r.attempts), num: true },
          ],
          records,
          'No delivery record yet.',
        )}<p><a href="${envPath(page.environment, '/events')}">All events</a></p>`,
  });
}

export function registerEventPages(app: AppInstance, ctx: ServiceContext): void {
  getPage(app, ctx, '/console/:env/events', (req, reply, page) => eventsPage(ctx, req, reply, page));
  getPage(app, ctx, '/console/:env/events/:id', (req, reply, page) => eventPage(ctx, req, reply, page));
}
