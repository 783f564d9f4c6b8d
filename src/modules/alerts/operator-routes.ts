import { Type } from 'typebox';
import { OperatorEnvironment, Time, TimeOrNull } from '../../platform/routes/operator-route.js';
import { operatorRoutes } from '../../platform/routes/route-module.js';
import { operatorList, operatorUpdate, orNotFound } from '../../platform/routes/route-kinds.js';
import { PageQuery, mapPage } from '../../platform/routes/pagination.js';
import { alertPage, resolveAlert } from './queries.js';

const Alert = Type.Object(
  {
    id: Type.String(),
    kind: Type.String(),
    merchant_id: Type.Union([Type.String(), Type.Null()]),
    environment: Type.Union([OperatorEnvironment, Type.Null()]),
    object: Type.String(),
    object_id: Type.String(),
    message: Type.String(),
    resolved_at: TimeOrNull,
    created_at: Time,
  },
  { title: 'Alert' },
);

/** Operator calls of alerts: list and resolve. */
export const alertOperatorRoutes = operatorRoutes((route, ctx) => {
  route.get(
    '/admin/v1/alerts',
    operatorList({
      operationId: 'listAlerts',
      query: Type.Object({
        ...PageQuery.properties,
        kind: Type.Optional(Type.String({ maxLength: 100 })),
        merchant_id: Type.Optional(Type.String({ maxLength: 100 })),
        state: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('resolved'), Type.Literal('all')])),
      }),
      item: Alert,
    }),
    async ({ query }) => {
      const page = await alertPage(
        ctx.db,
        { state: query.state ?? 'open', kind: query.kind, merchantId: query.merchant_id },
        query,
      );
      return mapPage(page, (r) => ({
        id: r.id,
        kind: r.kind,
        merchant_id: r.merchant_id,
        environment: r.environment,
        object: r.object,
        object_id: r.object_id,
        message: r.message,
        resolved_at: r.resolved_at ? new Date(r.resolved_at).toISOString() : null,
        created_at: new Date(r.created_at).toISOString(),
      }));
    },
  );

  route.post(
    '/admin/v1/alerts/:id/resolve',
    operatorUpdate({
      operationId: 'resolveAlert',
      params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
      response: Type.Object({ id: Type.String(), resolved: Type.Boolean() }),
    }),
    async ({ params, write }) => {
      const row = orNotFound(await write((trx) => resolveAlert(trx, params.id, ctx.clock.real())), 'No such alert.');
      return { id: row.id, resolved: true };
    },
  );
});
