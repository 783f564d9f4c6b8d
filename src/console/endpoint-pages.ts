import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { html, type HtmlPart } from '../modules/hosted-screens/index.js';
import { deliveryView, listEndpoints, replayEndpoint, replayEventsMax } from '../modules/webhooks/index.js';
import { attemptAsCaller, callerOf, type PageRequest } from './http.js';

import { formOf, one } from './form.js';
import { auditPage } from './audit.js';
import { endpointDeliveries } from './queries/webhooks.js';
import { can } from './rules.js';
import { badge, envPath, sendPage, table, when } from './views.js';
import { csrfInput, selectInput, textInput } from './fields.js';
import { getPage, postChange } from './guards.js';

/**
 * A webhook endpoint's page (extensions 11, docs/events.md): its latest deliveries and the Replay
 * form. The replay is the webhooks area's function: the same rules as the API.
 */

const isTime = (v: string) => v !== '' && !Number.isNaN(Date.parse(v));

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
    return sendPage(
      reply,
      page,
      {
        title: 'Endpoint not found',
        section: '/webhooks',
        body: html`<p>No such webhook endpoint in this environment.</p>`,
      },
      404,
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
  return sendPage(
    reply,
    page,
    {
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
    },
    status,
  );
}

export function registerEndpointPages(app: AppInstance, ctx: ServiceContext): void {
  getPage(app, ctx, '/console/:env/webhooks/:id', (req, reply, page) => endpointPage(ctx, req, reply, page));
  postChange(app, ctx, '/console/:env/webhooks/:id/replay', 'webhooks.write', async (req, reply, page) => {
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
    const r = await attemptAsCaller(ctx, page, async (trx, caller, now) => {
      const done = await replayEndpoint(
        trx,
        caller,
        id,
        {
          since: new Date(values.since).toISOString(),
          ...(values.until ? { until: new Date(values.until).toISOString() } : {}),
          only_failed: values.only_failed === 'true',
        },
        now,
        ctx.config.eventRetentionDays,
      );
      await auditPage(
        trx,
        page,
        'webhook_endpoint.replay',
        done.id,
        `${values.since}..${values.until || 'now'} only_failed=${values.only_failed} queued=${done.queued}`,
      );
      return done;
    });
    if (!r.ok) return endpointPage(ctx, req, reply, page, { problem: r.problem, values }, 400);
    return endpointPage(ctx, req, reply, page, {
      notice: `${r.value.queued} ${r.value.queued === 1 ? 'delivery' : 'deliveries'} queued.`,
      values,
    });
  });
}
