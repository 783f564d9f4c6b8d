/**
 * API keys: the list of this environment's keys and the creation of one (secrets shown once).
 * Every write is the merchants area's own function (createKey) with the same rules the operator API
 * applies; restricted scopes asked for in production wait for the operator. One key's page:
 * one-key-pages.ts.
 */
import type { FastifyReply } from 'fastify';
import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { restrictedScopes, scopeCatalogue } from '../platform/auth/scopes.js';
import { html, type HtmlPart } from '../modules/hosted-screens/index.js';
import { createKey, splitScopes } from '../modules/merchants/index.js';
import { attempt, type PageRequest } from './http.js';

import { all, one, formOf } from './form.js';
import { auditPage } from './audit.js';
import { listKeys } from './queries/area-reads.js';
import { allowlistLines, can } from './rules.js';
import { envPath, realTimeMark, sendPage, table, when } from './views.js';
import { checkboxes, csrfInput } from './fields.js';
import { keyStatus, scopeList, secretsPanel, type KeyRow } from './key-views.js';
import { allowlistPreview, allowlistSent, saveAnywayButton, unmatchedRefusal } from './allowlist-form.js';
import { getPage, postChange } from './guards.js';

function createForm(
  page: PageRequest,
  values: { scopes: readonly string[]; allowlist: string; expires: string },
  /** The browser's address, when the allow-list is previewed. */
  previewFor?: string,
): HtmlPart {
  const options = scopeCatalogue.map((s) => ({
    value: s,
    label: restrictedScopes.has(s) && page.environment === 'production' ? `${s} (needs approval)` : s,
  }));
  const saveAnyway = saveAnywayButton(values.allowlist, previewFor !== undefined);
  return html`<form method="post" action="${envPath(page.environment, '/keys')}" class="card" novalidate>
    <h2>Create a key</h2>${csrfInput(page)}${checkboxes(
      'scopes',
      'Scopes',
      options,
      values.scopes,
      page.environment === 'production'
        ? "Restricted scopes wait for the operator's approval; the key works meanwhile with the others."
        : undefined,
    )}
<div class="field"><label for="f-ip_allowlist">IP allow-list${
    page.environment === 'sandbox' ? ' (optional in the sandbox)' : ''
  }</label><p class="hint"
  id="f-ip_allowlist-hint">One entry per line: an address (203.0.113.7), a.b.c.* or a.b.c.d/8, /16, /24.${
    page.environment === 'production' ? ' Required for a production key.' : ''
  }</p><textarea id="f-ip_allowlist" name="ip_allowlist" aria-describedby="f-ip_allowlist-hint"
    rows="4">${values.allowlist}</textarea></div>
${previewFor === undefined ? '' : allowlistPreview(values.allowlist, previewFor)}
<div class="field"><label for="f-expires">Expires (optional, UTC, real time: a key expires on the real clock, not the
   sandbox clock)</label><input id="f-expires" name="expires" type="datetime-local" value="${values.expires}"></div>
<div class="actions"><button type="submit" name="intent" value="preview"
  class="secondary">Preview allow-list</button><button type="submit" name="intent" value="create">Create key</button>${
    saveAnyway
  }</div></form>`;
}

async function listPage(
  ctx: ServiceContext,
  reply: FastifyReply,
  page: PageRequest,
  extra: {
    top?: HtmlPart;
    problem?: string;
    notice?: string;
    form?: Parameters<typeof createForm>[1];
    preview?: Parameters<typeof createForm>[2];
  } = {},
  status = 200,
) {
  const keys = await listKeys(ctx.db, page.session.merchantId, page.environment);
  const canWrite = can(page.session.role, 'keys.write');
  return sendPage(
    reply,
    page,
    {
      title: 'API keys',
      section: '/keys',
      problem: extra.problem,
      notice: extra.notice,
      body: html`${extra.top ?? ''}${table(
        'Keys of this environment',
        [
          {
            label: 'Client id',
            cell: (k: KeyRow) =>
              html`<a href="${envPath(page.environment, `/keys/${k.id}`)}"><code>${k.client_id}</code></a>`,
          },
          { label: 'Status', cell: (k) => keyStatus(k, page.now) },
          { label: 'Scopes', cell: (k) => scopeList(k) },
          {
            label: 'Allow-list',
            cell: (k) => (k.ip_allowlist.trim() ? `${allowlistLines(k.ip_allowlist).length} entries` : 'any address'),
          },
          { label: `Created${realTimeMark(page)}`, cell: (k) => when(k.created_at) },
        ],
        keys,
        'No keys in this environment yet.',
      )}${canWrite ? createForm(page, extra.form ?? { scopes: [], allowlist: '', expires: '' }, extra.preview) : ''}`,
    },
    status,
  );
}

function expiryFrom(value: string): Date | null | 'bad' {
  if (value.trim() === '') return null;
  const d = new Date(`${value}${value.length === 16 ? ':00' : ''}Z`);
  return Number.isNaN(d.getTime()) ? 'bad' : d;
}

export function registerKeyPages(app: AppInstance, ctx: ServiceContext): void {
  getPage(app, ctx, '/console/:env/keys', (_req, reply, page) => listPage(ctx, reply, page));

  postChange(app, ctx, '/console/:env/keys', 'keys.write', async (req, reply, page) => {
    const form = formOf(req);
    const values = {
      scopes: all(form, 'scopes'),
      allowlist: allowlistSent(form),
      expires: one(form, 'expires'),
    };
    const intent = one(form, 'intent');
    if (intent === 'preview') return listPage(ctx, reply, page, { form: values, preview: req.ip });
    const unmatched = unmatchedRefusal(values.allowlist, intent);
    if (unmatched) return listPage(ctx, reply, page, { form: values, preview: req.ip, problem: unmatched }, 400);
    const expiresAt = expiryFrom(values.expires);
    if (expiresAt === 'bad')
      return listPage(ctx, reply, page, { problem: 'The expiry is not a date and time.', form: values }, 400);
    if (values.scopes.length === 0)
      return listPage(ctx, reply, page, { problem: 'Choose at least one scope.', form: values }, 400);
    const r = await attempt(ctx, async (trx) => {
      const { scopes, pending } = splitScopes(page.environment, values.scopes);
      const key = await createKey(
        trx,
        {
          merchantId: page.session.merchantId,
          environment: page.environment,
          scopes,
          pendingScopes: pending,
          ipAllowlist: values.allowlist,
          expiresAt,
        },
        page.now,
      );
      await auditPage(
        trx,
        page,
        'api_key.create',
        key.id,
        `scopes ${key.scopes.join(' ')}${key.pending_scopes.length ? `; waiting ${key.pending_scopes.join(' ')}` : ''}`,
      );
      return key;
    });
    if (!r.ok) return listPage(ctx, reply, page, { problem: r.problem, form: values }, 400);
    return listPage(ctx, reply, page, { top: secretsPanel(r.value, `Key ${r.value.client_id} created`) }, 201);
  });
}
