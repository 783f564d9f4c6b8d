import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../platform/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { html, type HtmlPart } from '../modules/hosted-screens/index.js';
import { type EventObject, findEvent, listEvents } from '../modules/events/index.js';
import { deliveryView, listEndpoints, replayEndpoint, replayEventsMax } from '../modules/webhooks/index.js';
import { attempt, formOf, one, sendHtml, withChange, withSession, type PageRequest } from './http.js';
import { audit } from './audit.js';
import { endpointDeliveries, eventDeliveries } from './queries/webhooks.js';
import { can } from './rules.js';
import { refusedPage } from './auth-pages.js';
import {
  badge,
  consolePage,
  csrfInput,
  envPath,
  nextPageLink,
  selectInput,
  shortId,
  table,
  textInput,
  when,
} from './views.js';

/**
 * Events (extensions 11, docs/events.md): the Events page with the API's filters, one event with
 * its body and its deliveries, and an endpoint's page with the Replay form. The reads are the
 * events area's own queries, the replay the webhooks area's function: the same rules as the API.
 */

const route = { config: { access: { scope: 'public' as const } }, schema: { hide: true } };
const callerOf = (page: PageRequest) => ({ merchantId: page.session.merchantId, environment: page.environment });
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
  return sendHtml(
    reply,
    200,
    consolePage(page, {
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
${table(
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
  list.data,
  'No events match.',
)}${nextPageLink(base, list.next_cursor, kept)}`,
    }),
  );
}

async function eventPage(ctx: ServiceContext, req: FastifyRequest, reply: FastifyReply, page: PageRequest) {
  const event = await findEvent(ctx.db, callerOf(page), (req.params as { id: string }).id);
  if (!event) {
    return sendHtml(
      reply,
      404,
      consolePage(page, {
        title: 'Event not found',
        section: '/events',
        body: html`<p>No such event in this environment (it may be older than the retention).</p>`,
      }),
    );
  }
  const records = await eventDeliveries(ctx.db, page.session.merchantId, event.event_id);
  type R = (typeof records)[number];
  return sendHtml(
    reply,
    200,
    consolePage(page, {
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
    }),
  );
}

async function endpointPage(
  ctx: ServiceContext,
  req: FastifyRequest,
  reply: FastifyReply,
  page: PageRequest,
  extra: { notice?: string; problem?: string; values?: Record<string, string> } = {},
  status = 200,
) {
  const id = (req.params as { id: string }).id;
  const endpoint = (await listEndpoints(ctx.db, callerOf(page))).data.find((e) => e.id === id);
  if (!endpoint) {
    return sendHtml(
      reply,
      404,
      consolePage(page, {
        title: 'Endpoint not found',
        section: '/webhooks',
        body: html`<p>No such webhook endpoint in this environment.</p>`,
      }),
    );
  }
  const deliveries = (await endpointDeliveries(ctx.db, page.session.merchantId, page.environment, endpoint.id)).map(
    deliveryView,
  );
  type D = (typeof deliveries)[number];
  const base = envPath(page.environment, `/webhooks/${endpoint.id}`);
  const since = extra.values?.since ?? new Date(page.now.getTime() - 86_400_000).toISOString();
  const replayForm: HtmlPart = can(page.session.role, 'webhooks.write')
    ? html`<form method="post" action="${base}/replay" class="card" novalidate><h2>Replay events</h2>
      <p>Sends again, to this endpoint, the kept events of the types it takes created in the range (at most ${
        replayEventsMax
      } a time). Queued, not delivered at once.</p>${csrfInput(page)}${textInput('since', 'From', {
        value: since,
        required: true,
        hint: 'ISO 8601',
      })}${textInput('until', 'Until', {
        value: extra.values?.until ?? '',
        hint: 'ISO 8601; empty: now',
      })}${selectInput(
        'only_failed',
        'Which',
        [
          { value: 'true', label: 'Only those not delivered' },
          { value: 'false', label: 'All of them' },
        ],
        extra.values?.only_failed ?? 'true',
      )}<div class="actions"><button type="submit">Replay</button></div></form>`
    : html``;
  return sendHtml(
    reply,
    status,
    consolePage(page, {
      title: 'Webhook endpoint',
      section: '/webhooks',
      notice: extra.notice,
      problem: extra.problem,
      body: html`<div class="card"><p><code>${endpoint.url}</code></p><p>Events: ${endpoint.event_types.join(', ')}</p>
        <p>Status: ${
          endpoint.status === 'enabled'
            ? badge('enabled', 'ok')
            : badge(`disabled${endpoint.disabled_reason ? ` (${endpoint.disabled_reason})` : ''}`, 'bad')
        }</p><p class="mono">${endpoint.id}</p></div>${replayForm}${table(
          'Recent deliveries to this endpoint',
          [
            {
              label: 'Event',
              cell: (d: D) =>
                html`<a href="${envPath(page.environment, `/events/${d.event_id}`)}"><code>${d.event_type}</code></a>`,
            },
            { label: 'Status', cell: (d) => d.status.replace('_', ' ') },
            { label: 'Attempts', cell: (d) => String(d.attempts), num: true },
            { label: 'Created', cell: (d) => when(d.created_at) },
          ],
          deliveries,
          'No deliveries yet.',
        )}<p><a href="${envPath(page.environment, '/webhooks')}">All endpoints</a></p>`,
    }),
  );
}

export function registerEventPages(app: AppInstance, ctx: ServiceContext): void {
  app.get(
    '/console/:env/events',
    route,
    withSession(ctx, (req, reply, page) => eventsPage(ctx, req, reply, page)),
  );
  app.get(
    '/console/:env/events/:id',
    route,
    withSession(ctx, (req, reply, page) => eventPage(ctx, req, reply, page)),
  );
  app.get(
    '/console/:env/webhooks/:id',
    route,
    withSession(ctx, (req, reply, page) => endpointPage(ctx, req, reply, page)),
  );
  app.post(
    '/console/:env/webhooks/:id/replay',
    route,
    withChange(
      ctx,
      'webhooks.write',
      async (req, reply, page) => {
        const form = formOf(req);
        const values = {
          since: one(form, 'since').trim(),
          until: one(form, 'until').trim(),
          only_failed: one(form, 'only_failed') === 'false' ? 'false' : 'true',
        };
        if (!isTime(values.since) || (values.until !== '' && !isTime(values.until))) {
          return endpointPage(
            ctx,
            req,
            reply,
            page,
            { problem: 'Give the times in ISO 8601, such as 2026-01-31T12:00:00Z.', values },
            400,
          );
        }
        const id = (req.params as { id: string }).id;
        const r = await attempt(ctx, async (trx) => {
          const done = await replayEndpoint(
            trx,
            callerOf(page),
            id,
            {
              since: new Date(values.since).toISOString(),
              ...(values.until ? { until: new Date(values.until).toISOString() } : {}),
              only_failed: values.only_failed === 'true',
            },
            await ctx.clock.now(trx, callerOf(page)),
            ctx.config.eventRetentionDays,
          );
          await audit(
            trx,
            page.session,
            page.environment,
            'webhook_endpoint.replay',
            done.id,
            `${values.since}..${values.until || 'now'} only_failed=${values.only_failed} queued=${done.queued}`,
            page.now,
          );
          return done;
        });
        if (!r.ok) return endpointPage(ctx, req, reply, page, { problem: r.problem, values }, 400);
        return endpointPage(ctx, req, reply, page, {
          notice: `${r.value.queued} ${r.value.queued === 1 ? 'delivery' : 'deliveries'} queued.`,
          values,
        });
      },
      refusedPage,
    ),
  );
}
