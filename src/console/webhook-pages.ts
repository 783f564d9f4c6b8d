import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { html, type HtmlPart } from '../modules/hosted-screens/index.js';
import {
  checkEndpointUrl,
  createEndpoint,
  deleteEndpoint,
  listEndpoints,
  overlapSecondsDefault,
  rollSecret,
  updateEndpoint,
} from '../modules/webhooks/index.js';
import { ApiError } from '../platform/errors.js';
import { attemptAsCaller, callerOf, redirect, type PageRequest } from './http.js';
import { formOf, one } from './form.js';
import { auditPage } from './audit.js';
import { can, refusalFor } from './rules.js';
import {
  askFirst,
  badge,
  envPath,
  longValue,
  postButton,
  sendConfirmPage,
  sendPage,
  shortText,
  table,
  when,
} from './views.js';
import { csrfInput, textInput } from './fields.js';
import { getPage, postChange } from './guards.js';

/**
 * Webhook endpoints (create with the secret shown once, roll the secret, disable, enable, delete;
 * the delivery and API call logs: delivery-pages.ts). Every write is the webhooks area's own
 * function, with the URL check (SSRF rules) and the endpoint limit.
 */

const idOf = (req: FastifyRequest) => (req.params as { id: string }).id;

type EndpointView = Awaited<ReturnType<typeof listEndpoints>>['data'][number];

function endpointStatus(e: EndpointView) {
  return e.status === 'enabled'
    ? badge('enabled', 'ok')
    : badge(`disabled${e.disabled_reason ? ` (${e.disabled_reason})` : ''}`, 'bad');
}

function secretPanel(heading: string, url: string, secret: string): HtmlPart {
  return html`<div class="secret" role="status"><h2>${heading}</h2><p>For <code>${url}</code>. <strong>Copy the signing
     secret now: it is shown only once.</strong></p><code class="value" id="new-webhook-secret">${secret}</code></div>`;
}

async function endpointsPage(
  ctx: ServiceContext,
  reply: FastifyReply,
  page: PageRequest,
  extra: { top?: HtmlPart; problem?: string; notice?: string; values?: { url: string; event_types: string } } = {},
  status = 200,
) {
  const { data } = await listEndpoints(ctx.db, callerOf(page));
  const canWrite = can(page.session.role, 'webhooks.write');
  const base = envPath(page.environment, '/webhooks');
  const values = extra.values ?? { url: '', event_types: '*' };
  return sendPage(
    reply,
    page,
    {
      title: 'Webhooks',
      section: '/webhooks',
      problem: extra.problem,
      notice: extra.notice,
      body: html`${extra.top ?? ''}${table(
        'Endpoints',
        [
          { label: 'URL', cell: (e: EndpointView) => html`<a href="${base}/${e.id}">${longValue(e.url)}</a>` },
          { label: 'Events', cell: (e) => e.event_types.join(', ') },
          { label: 'Status', cell: endpointStatus },
          { label: 'Created', cell: (e) => when(e.created_at) },
          ...(canWrite
            ? [
                {
                  label: 'Actions',
                  cell: (e: EndpointView) =>
                    html`<div class="actions">${
                      e.status === 'enabled'
                        ? postButton(page, `${base}/${e.id}/disable`, 'Disable', { secondary: true })
                        : postButton(page, `${base}/${e.id}/enable`, 'Enable', { secondary: true })
                    }${askFirst(
                      `${base}/${e.id}/roll-secret`,
                      'Roll secret',
                    )}${askFirst(`${base}/${e.id}/delete`, 'Delete', { danger: true })}</div>`,
                },
              ]
            : []),
        ],
        data,
        'No endpoints in this environment yet.',
      )}${
        canWrite
          ? html`<form method="post" action="${base}" class="card" novalidate><h2>Add an endpoint</h2>${csrfInput(
              page,
            )}${textInput('url', 'Endpoint URL', {
              value: values.url,
              required: true,
              hint:
                page.environment === 'sandbox'
                  ? 'https, or http and local addresses in the sandbox.'
                  : 'https; internal and private addresses are refused.',
            })}${textInput('event_types', 'Event types', {
              value: values.event_types,
              hint: '* for every event, or types separated by commas, such as withdrawal.settled, deposit.credited.',
            })}<div class="actions"><button type="submit">Add endpoint</button></div></form>`
          : ''
      }`,
    },
    status,
  );
}

export function registerWebhookPages(app: AppInstance, ctx: ServiceContext): void {
  getPage(app, ctx, '/console/:env/webhooks', (req, reply, page) => {
    const { done, id } = req.query as { done?: string; id?: string };
    const what = id ? `The endpoint ${shortText(id)}` : 'The endpoint';
    const notices: Record<string, string> = {
      disabled: `${what} is disabled.`,
      enabled: `${what} is enabled.`,
      deleted: `${what} is deleted.`,
    };
    return endpointsPage(ctx, reply, page, { notice: done ? notices[done] : undefined });
  });

  // Deleting an endpoint and rolling its secret cannot be undone: a page first names the endpoint.
  for (const action of ['delete', 'roll-secret'] as const) {
    getPage(app, ctx, `/console/:env/webhooks/:id/${action}`, async (req, reply, page) => {
      const e = (await listEndpoints(ctx.db, callerOf(page))).data.find((x) => x.id === idOf(req));
      if (!e) throw new ApiError('not_found');
      const base = envPath(page.environment, '/webhooks');
      return sendConfirmPage(reply, page, {
        title: action === 'delete' ? 'Delete the endpoint?' : 'Roll the signing secret?',
        section: '/webhooks',
        refused: refusalFor(page.session.role, 'webhooks.write', 'change webhooks'),
        question:
          action === 'delete'
            ? html`Delete the endpoint ${e.url}? No event is sent to it any more, and its deliveries not yet made
                   are dropped.`
            : html`Make a new signing secret for ${e.url}? The current secret keeps signing for 24 hours, then only
                   the new one does.`,
        facts: [
          ['Endpoint', html`<code>${e.id}</code>`],
          ['URL', html`<code>${e.url}</code>`],
          ['Events', e.event_types.join(', ')],
          ['Status', e.status],
        ],
        action: `${base}/${e.id}/${action}`,
        button: action === 'delete' ? 'Yes, delete the endpoint' : 'Yes, roll the secret',
        danger: action === 'delete',
        back: base,
      });
    });
  }

  postChange(app, ctx, '/console/:env/webhooks', 'webhooks.write', async (req, reply, page) => {
    const form = formOf(req);
    const values = { url: one(form, 'url').trim(), event_types: one(form, 'event_types') };
    const eventTypes = values.event_types.split(/[\s,]+/).filter(Boolean);
    try {
      await checkEndpointUrl(ctx.config, page.environment, values.url);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return endpointsPage(
        ctx,
        reply,
        page,
        {
          problem:
            `The URL cannot be used ` +
            `(${String((err.extras.fields as { reason: string }[] | undefined)?.[0]?.reason ?? err.message).replace(
              /_/g,
              ' ',
            )}).`,
          values,
        },
        400,
      );
    }
    const r = await attemptAsCaller(ctx, page, async (trx, caller, now) => {
      const created = await createEndpoint(trx, caller, { url: values.url, event_types: eventTypes }, now);
      await auditPage(
        trx,
        page,
        'webhook_endpoint.create',
        created.id,
        `${created.url} ${created.event_types.join(',')}`,
      );
      return created;
    });
    if (!r.ok) return endpointsPage(ctx, reply, page, { problem: r.problem, values }, 400);
    return endpointsPage(ctx, reply, page, { top: secretPanel('Endpoint added', r.value.url, r.value.secret) }, 201);
  });

  for (const action of ['disable', 'enable', 'delete'] as const) {
    postChange(app, ctx, `/console/:env/webhooks/:id/${action}`, 'webhooks.write', async (req, reply, page) => {
      const r = await attemptAsCaller(ctx, page, async (trx, caller, now) => {
        if (action === 'delete') await deleteEndpoint(trx, caller, idOf(req), now);
        else
          await updateEndpoint(trx, caller, idOf(req), { status: action === 'disable' ? 'disabled' : 'enabled' }, now);
        await auditPage(trx, page, `webhook_endpoint.${action}`, idOf(req), '');
      });
      if (!r.ok) return endpointsPage(ctx, reply, page, { problem: r.problem }, 400);
      return redirect(
        reply,
        `${envPath(page.environment, '/webhooks')}?done=${action}d&id=${encodeURIComponent(idOf(req))}`,
      );
    });
  }

  postChange(app, ctx, '/console/:env/webhooks/:id/roll-secret', 'webhooks.write', async (req, reply, page) => {
    const r = await attemptAsCaller(ctx, page, async (trx, caller, now) => {
      const rolled = await rollSecret(trx, caller, idOf(req), overlapSecondsDefault, now);
      const until = `previous secret valid until ${rolled.previous_secret_expires_at}`;
      await auditPage(trx, page, 'webhook_endpoint.roll_secret', rolled.id, until);
      return rolled;
    });
    if (!r.ok) return endpointsPage(ctx, reply, page, { problem: r.problem }, 400);
    return endpointsPage(ctx, reply, page, {
      top: secretPanel('New signing secret (the previous one keeps signing for 24 hours)', r.value.url, r.value.secret),
    });
  });
}
