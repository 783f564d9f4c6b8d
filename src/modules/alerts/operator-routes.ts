import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError } from '../../platform/errors.js';
import { PageQuery, mapPage } from '../../platform/pagination.js';
import { alertPage, resolveAlert } from './queries.js';

/** Operator calls of alerts: list and resolve. */
export async function alertOperatorRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  app.get('/admin/v1/alerts', {
    schema: {
      querystring: Type.Object({
        ...PageQuery.properties,
        kind: Type.Optional(Type.String({ maxLength: 100 })),
        merchant_id: Type.Optional(Type.String({ maxLength: 100 })),
        state: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('resolved'), Type.Literal('all')])),
      }),
    },
  }, async (req) => {
    const page = await alertPage(ctx.db, { state: req.query.state ?? 'open', kind: req.query.kind, merchantId: req.query.merchant_id }, req.query);
    return mapPage(page, (r) => ({
      id: r.id, kind: r.kind, merchant_id: r.merchant_id, environment: r.environment, object: r.object, object_id: r.object_id,
      message: r.message, resolved_at: r.resolved_at ? new Date(r.resolved_at).toISOString() : null, created_at: new Date(r.created_at).toISOString(),
    }));
  });

  app.post('/admin/v1/alerts/:id/resolve', { schema: { params: Type.Object({ id: Type.String({ maxLength: 100 }) }) } }, async (req) => {
    const row = await resolveAlert(ctx.db, req.params.id);
    if (!row) throw new ApiError('not_found', 'No such alert.');
    return { id: row.id, resolved: true };
  });
}
