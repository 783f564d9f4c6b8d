import type { FastifyRequest } from 'fastify';
import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { html } from '../modules/hosted-screens/index.js';
import { deliveryStatuses, listDeliveries, redeliver, redeliverAction } from '../modules/webhooks/index.js';
import { attemptAsCaller, callerOf } from './http.js';

import { auditPage } from './audit.js';
import { apiCalls, deliveryAttempts, deliveryEndpoints, endpointUrls } from './queries/webhooks.js';
import { can } from './rules.js';
import {
  badge,
  envPath,
  longValue,
  postButton,
  realTimeMark,
  sendPage,
  shortId,
  table,
  when,
  listTable,
} from './views.js';
import { selectInput } from './fields.js';
import { getPage, postChange, type RedrawnPage } from './guards.js';

/**
 * The delivery log (filter by status, each attempt, redelivery) and the API call log. The reads and
 * the redelivery are the webhooks area's own functions, as the API's.
 */

const idOf = (req: FastifyRequest) => (req.params as { id: string }).id;

const deliveriesPage: RedrawnPage = async (ctx, req, reply, page, extra = {}, status = 200) => {
  const q = req.query as { status?: string; cursor?: string };
  const filter = (deliveryStatuses as readonly string[]).includes(q.status ?? '') ? q.status! : '';
  const list = await listDeliveries(ctx.db, callerOf(page), {
    status: filter || undefined,
    limit: 25,
    cursor: q.cursor,
  });
  const attempts = await deliveryAttempts(
    ctx.db,
    list.data.map((d) => d.id),
  );
  const urls = await endpointUrls(ctx.db, page.session.merchantId, page.environment);
  const endpointOf = await deliveryEndpoints(
    ctx.db,
    list.data.map((d) => d.id),
  );
  const canWrite = can(page.session.role, 'webhooks.write');
  const base = envPath(page.environment, '/deliveries');
  type D = (typeof list.data)[number];
  const tone = (s: string) => (s === 'sent' ? 'ok' : s === 'pending' ? 'warn' : s === 'no_subscriber' ? '' : 'bad');
  return sendPage(
    reply,
    page,
    {
      title: 'Webhook deliveries',
      section: '/deliveries',
      ...extra,
      body: html`<form method="get" action="${base}" class="filters">${selectInput(
        'status',
        'Status',
        [{ value: '', label: 'Any' }, ...deliveryStatuses.map((s) => ({ value: s, label: s.replace('_', ' ') }))],
        filter,
      )}<button type="submit" class="secondary">Filter</button></form>
${listTable(
  'Deliveries, newest first',
  [
    { label: 'Event', cell: (d: D) => html`<code>${d.event_type}</code><br>${shortId(d.event_id)}` },
    {
      label: 'Endpoint',
      cell: (d) => {
        const id = endpointOf.get(d.id);
        return id ? longValue(urls.get(id) ?? id) : 'none';
      },
    },
    { label: 'Status', cell: (d) => badge(d.status.replace('_', ' '), tone(d.status)) },
    {
      label: `Attempts${realTimeMark(page)}`,
      cell: (d) => {
        const a = attempts.filter((x) => x.delivery_id === d.id);
        return a.length === 0
          ? '0'
          : html`<ol>${a.map(
              (x) =>
                html`<li><span class="nowrap">${when(x.started_at)}</span>: ${x.outcome}${
                  x.http_status ? ` (HTTP ${x.http_status})` : ''
                }${
                  x.error && x.error !== `HTTP ${x.http_status}`
                    ? html` <code
  class="long">${x.error.slice(0, 120)}</code>`
                    : ''
                }</li>`,
            )}</ol>`;
      },
    },
    { label: 'Next attempt', cell: (d) => when(d.next_attempt_at || null) },
    ...(canWrite
      ? [
          {
            label: 'Actions',
            cell: (d: D) =>
              redeliverAction(d.status) === 'refuse'
                ? ''
                : postButton(page, `${base}/${d.id}/redeliver`, 'Redeliver', { secondary: true }),
          },
        ]
      : []),
  ],
  list,
  'No deliveries match.',
  base,
  filter ? { status: filter } : {},
)}`,
    },
    status,
  );
};

export function registerDeliveryPages(app: AppInstance, ctx: ServiceContext): void {
  getPage(app, ctx, '/console/:env/deliveries', (req, reply, page) => deliveriesPage(ctx, req, reply, page));

  postChange(app, ctx, '/console/:env/deliveries/:id/redeliver', 'webhooks.write', async (req, reply, page) => {
    const r = await attemptAsCaller(ctx, page, async (trx, caller, now) => {
      const done = await redeliver(trx, caller, idOf(req), now);
      await auditPage(trx, page, 'webhook_delivery.redeliver', done.id, '');
      return done;
    });
    if (!r.ok) return deliveriesPage(ctx, req, reply, page, { problem: r.problem }, 400);
    return deliveriesPage(ctx, req, reply, page, { notice: `Delivery ${r.value.id} is queued again.` });
  });

  getPage(app, ctx, '/console/:env/api-log', async (req, reply, page) => {
    const beforeText = (req.query as { before?: string }).before ?? '';
    const before = /^[0-9]{1,18}$/.test(beforeText) ? BigInt(beforeText) : undefined;
    await ctx.apiCallLog.flush();
    const rows = await apiCalls(ctx.db, page.session.merchantId, page.environment, 50, before);
    const last = rows.length === 50 ? rows[rows.length - 1] : undefined;
    return sendPage(reply, page, {
      title: 'API calls',
      section: '/api-log',
      body: html`<p>The newest calls first. Quote the request id when you ask for support.</p>${table(
        'API calls',
        [
          { label: `Time${realTimeMark(page)}`, cell: (c: (typeof rows)[number]) => when(c.created_at) },
          { label: 'Request id', cell: (c) => longValue(c.request_id) },
          { label: 'Call', cell: (c) => longValue(`${c.method} ${c.path}`) },
          {
            label: 'Status',
            cell: (c) =>
              badge(String(c.status_code), c.status_code < 400 ? 'ok' : c.status_code < 500 ? 'warn' : 'bad'),
          },
          { label: 'Duration', cell: (c) => `${c.duration_ms} ms`, num: true },
        ],
        rows,
        'No calls in this environment yet.',
      )}${
        last
          ? html`<p><a href="${envPath(page.environment, '/api-log')}?before=${String(last.id)}">Older
             calls</a></p>`
          : ''
      }`,
    });
  });
}
