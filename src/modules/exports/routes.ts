import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { router } from '../../platform/routes/route.js';
import { idParams, merchantWrite, readList } from '../../platform/routes/route-kinds.js';
import { mount } from '../../platform/routes/route-mount.js';
import { ApiError } from '../../platform/errors.js';
import { PageQuery } from '../../platform/routes/pagination.js';
import { exportKinds } from './queries/kinds.js';
import { createExport, exportErrors, getExport, listExports } from './service.js';
import { exportFileHeaders, openExportFile } from './file.js';

const tags = ['Exports'];
const Time = Type.String({ format: 'date-time' });

const ExportRequest = Type.Object(
  {
    id: Type.String({ description: 'exp_<uuid>' }),
    kind: Type.String(),
    status: Type.Literal('pending'),
    created_at: Time,
  },
  { title: 'ExportRequest' },
);

const Export = Type.Object(
  {
    id: Type.String({ description: 'exp_<uuid>' }),
    kind: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('completed'), Type.Literal('failed')]),
    row_count: Type.Union([Type.Integer(), Type.Null()], {
      description: 'rows of the file (header not counted); null until completed',
    }),
    sha256: Type.Union([Type.String(), Type.Null()], { description: 'SHA-256 of the file, hex; null until completed' }),
    size_bytes: Type.Union([Type.Integer(), Type.Null()]),
    created_at: Time,
    completed_at: Type.Union([Time, Type.Null()]),
  },
  { title: 'Export' },
);

const IdParams = idParams('exp_ prefix optional');

export async function exportRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const route = router(app, ctx);

  route.post(
    '/v1/exports',
    merchantWrite({
      scope: 'exports:write',
      errors: exportErrors.create,
      operationId: 'createExport',
      summary: 'Request an export file',
      description:
        'Written in the background: poll `GET /v1/exports/{id}` or wait for `export.completed` / ' +
        '`export.failed`. The objects of `kind` created in ' +
        ("[`created_gte`, `created_lt`) (ISO 8601 with a time zone; `member_balances`: every member's " +
          'balances as of `created_lt`), one row per object ') +
        '(`ledger_entries`: one row per line), as `csv` (default, a header row) or `jsonl`. The file is kept 7 days.',
      tags,
      body: Type.Object({
        kind: Type.Union(exportKinds.map((k) => Type.Literal(k))),
        created_gte: Time,
        created_lt: Time,
        format: Type.Optional(Type.Union([Type.Literal('csv'), Type.Literal('jsonl')])),
      }),
      response: { 201: ExportRequest },
    }),
    async ({ principal, body, write }) => write((trx) => createExport(trx, ctx.clock, principal, body)),
  );

  route.get(
    '/v1/exports',
    readList({
      scope: 'exports:read',
      principal: 'merchant',
      operationId: 'listExports',
      summary: "The merchant's exports",
      description: 'Newest first, cursor pages.',
      tags,
      query: PageQuery,
      item: Export,
    }),
    async ({ principal, query }) => listExports(ctx.db, principal, query),
  );

  route.get(
    '/v1/exports/:id',
    {
      access: { scope: 'exports:read' },
      errors: exportErrors.get,
      schema: { operationId: 'getExport', summary: 'Get an export', tags, params: IdParams, response: { 200: Export } },
    },
    async ({ principal, params }) => getExport(ctx.db, principal, params.id),
  );

  mount(
    app,
    ctx,
    'GET',
    '/v1/exports/:id/file',
    {
      config: { access: { scope: 'exports:read', errors: [...exportErrors.get] } },
      schema: {
        operationId: 'downloadExport',
        summary: "Download an export's file",
        description:
          '`text/csv` or `application/x-ndjson`, streamed. `not_found` (with the reason) while it is ' +
          'pending, when it failed, and after its 7 days.',
        tags,
        params: IdParams,
        response: {
          200: {
            content: {
              'text/csv': { schema: Type.String({ title: 'ExportCsvFile', description: 'CSV with a header row' }) },
              'application/x-ndjson': {
                schema: Type.String({ title: 'ExportJsonLinesFile', description: 'one JSON object per line' }),
              },
            },
          },
        } as never,
      },
    },
    (req, reply) => ({ req, reply }),
    async ({ req, reply }) => {
      const auth = req.auth;
      if (!auth) throw new ApiError('not_found', 'No such export.');
      const file = await openExportFile(
        ctx.db,
        ctx.clock,
        { merchantId: auth.merchantId, environment: auth.environment },
        (req.params as { id: string }).id,
      );
      return reply.code(200).headers(exportFileHeaders(file)).send(file.body);
    },
  );
}
