import type { FastifyRequest } from 'fastify';
import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { ApiError } from '../platform/errors.js';
import { html } from '../modules/hosted-screens/index.js';
import {
  createExport,
  exportFileHeaders,
  type ExportKind,
  exportKinds,
  listExports,
  openExportFile,
} from '../modules/exports/index.js';
import { attempt, redirect, type PageRequest } from './http.js';

import { formOf, one } from './form.js';
import { auditPage } from './audit.js';
import { can } from './rules.js';
import { badge, envPath, sendPage, shortId, when, listTable } from './views.js';
import { csrfInput, selectInput, textInput } from './fields.js';
import { instant } from './ledger-pages.js';
import { getPage, postChange, type RedrawnPage } from './guards.js';

/**
 * Exports (extensions 13): request one, follow its progress, download the file. The export job is
 * the exports area's; a request is a form POST with the CSRF field.
 */

const scopeOf = (page: PageRequest) => ({ merchantId: page.session.merchantId, environment: page.environment });
const queryOf = (req: FastifyRequest) => req.query as Record<string, string | undefined>;

const exportsPage: RedrawnPage = async (ctx, req, reply, page, extra = {}, status = 200) => {
  const list = await listExports(ctx.db, scopeOf(page), { limit: 25, cursor: queryOf(req).cursor });
  const base = envPath(page.environment, '/exports');
  const canWrite = can(page.session.role, 'exports.write');
  type X = (typeof list.data)[number];
  return sendPage(
    reply,
    page,
    {
      title: 'Exports',
      section: '/exports',
      problem: extra.problem,
      notice: extra.notice,
      body: html`<p>Files of your objects for your accountants, written in the background and kept 7 days. <a
        href="${base}">Refresh</a> to follow their progress.</p>${listTable(
          'Exports, newest first',
          [
            { label: 'Requested', cell: (x: X) => when(x.created_at) },
            { label: 'Kind', cell: (x) => html`${x.kind.replace(/_/g, ' ')}<br>${shortId(x.id)}` },
            {
              label: 'Status',
              cell: (x) => badge(x.status, x.status === 'completed' ? 'ok' : x.status === 'pending' ? 'warn' : 'bad'),
            },
            { label: 'Rows', cell: (x) => (x.row_count === null ? '' : String(x.row_count)), num: true },
            {
              label: 'File',
              cell: (x) =>
                x.status === 'completed'
                  ? html`<a href="${base}/${x.id}/file">Download</a> (${String(x.size_bytes)} bytes)<br><span
                  class="mono">sha256 ${x.sha256 ?? ''}</span>`
                  : '',
            },
          ],
          list,
          'No exports yet.',
          base,
        )}${
          canWrite
            ? html`<form method="post" action="${base}" class="card"><h3>Request an export</h3>${csrfInput(
                page,
              )}${selectInput(
                'kind',
                'Kind',
                exportKinds.map((k) => ({ value: k, label: k.replace(/_/g, ' ') })),
              )}${textInput('from', 'From (UTC, inclusive)', {
                type: 'date',
                required: true,
              })}${textInput('to', 'To (UTC, exclusive)', {
                type: 'date',
                required: true,
                hint: 'Member balances: as of this date',
              })}${selectInput('format', 'Format', [
                { value: 'csv', label: 'CSV' },
                { value: 'jsonl', label: 'JSON lines' },
              ])}<button type="submit">Request</button></form>`
            : ''
        }`,
    },
    status,
  );
};

export function registerExportPages(app: AppInstance, ctx: ServiceContext): void {
  getPage(app, ctx, '/console/:env/exports', (req, reply, page) => exportsPage(ctx, req, reply, page));

  postChange(app, ctx, '/console/:env/exports', 'exports.write', async (req, reply, page) => {
    const form = formOf(req);
    const from = instant(one(form, 'from'));
    const to = instant(one(form, 'to'));
    const kind = one(form, 'kind') as ExportKind;
    if (!from || !to || from === 'bad' || to === 'bad')
      return exportsPage(ctx, req, reply, page, { problem: 'Give both dates.' }, 400);
    if (!(exportKinds as readonly string[]).includes(kind))
      return exportsPage(ctx, req, reply, page, { problem: 'Choose a kind.' }, 400);
    const r = await attempt(ctx, async (trx) => {
      const x = await createExport(trx, ctx.clock, scopeOf(page), {
        kind,
        created_gte: from.toISOString(),
        created_lt: to.toISOString(),
        format: one(form, 'format') === 'jsonl' ? 'jsonl' : 'csv',
      });
      await auditPage(trx, page, 'export.create', x.id, `${kind} ${from.toISOString()} to ${to.toISOString()}`);
      return x;
    });
    if (!r.ok) return exportsPage(ctx, req, reply, page, { problem: r.problem }, 400);
    return redirect(reply, `${envPath(page.environment, '/exports')}?requested=${r.value.id}`);
  });

  getPage(app, ctx, '/console/:env/exports/:id/file', async (req, reply, page) => {
    try {
      const file = await openExportFile(ctx.db, ctx.clock, scopeOf(page), (req.params as { id: string }).id);
      return reply.code(200).headers(exportFileHeaders(file)).send(file.body);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return exportsPage(ctx, req, reply, page, { problem: err.message }, 404);
    }
  });
}
