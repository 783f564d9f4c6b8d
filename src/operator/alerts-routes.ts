import { Type } from 'typebox';
import type { AppInstance } from '../platform/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { ApiError } from '../platform/errors.js';
import { PageQuery, keysetPage } from '../platform/pagination.js';

export async function operatorAlertRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
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
    let q = ctx.db.selectFrom('operator_alerts').selectAll();
    const state = req.query.state ?? 'open';
    if (state === 'open') q = q.where('resolved_at', 'is', null);
    if (state === 'resolved') q = q.where('resolved_at', 'is not', null);
    if (req.query.kind) q = q.where('kind', '=', req.query.kind);
    if (req.query.merchant_id) q = q.where('merchant_id', '=', req.query.merchant_id);
    return keysetPage(q, req.query, (r) => ({
      id: r.id, kind: r.kind, merchant_id: r.merchant_id, environment: r.environment, object: r.object, object_id: r.object_id,
      message: r.message, resolved_at: r.resolved_at ? new Date(r.resolved_at).toISOString() : null, created_at: new Date(r.created_at).toISOString(),
    }));
  });

  app.post('/admin/v1/alerts/:id/resolve', { schema: { params: Type.Object({ id: Type.String({ maxLength: 100 }) }) } }, async (req) => {
    const row = await ctx.db.updateTable('operator_alerts').set({ resolved_at: new Date() }).where('id', '=', req.params.id).returning(['id', 'resolved_at']).executeTakeFirst();
    if (!row) throw new ApiError('not_found', 'No such alert.');
    return { id: row.id, resolved: true };
  });
}
