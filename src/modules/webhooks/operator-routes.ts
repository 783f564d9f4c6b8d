import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { operatorReadOne, orNotFound } from '../../platform/routes/route-kinds.js';
import { attemptsOf, deliveryById } from './queries/deliveries.js';
import { endpointForOperator } from './queries/endpoints.js';
import {
  OperatorEnvironment,
  OperatorIdParams,
  TimeOrNull,
  operatorRouter,
} from '../../platform/routes/operator-route.js';
import { isoOrNull } from '../../platform/dates.js';

/** Attempts shown per delivery (newest first). */
export const operatorAttemptsMax = 100;

const Delivery = Type.Object(
  {
    id: Type.String(),
    merchant_id: Type.String(),
    environment: OperatorEnvironment,
    event_id: Type.String(),
    event_type: Type.String(),
    endpoint_id: Type.Union([Type.String(), Type.Null()]),
    status: Type.String(),
    attempts: Type.Integer(),
    round_attempts: Type.Integer(),
    generation: Type.Integer(),
    last_http_status: Type.Integer(),
    last_error: Type.String(),
    next_attempt_at: TimeOrNull,
    lease_until: TimeOrNull,
    created_at: TimeOrNull,
    updated_at: TimeOrNull,
    endpoint: Type.Union([
      Type.Object({
        id: Type.String(),
        url: Type.String(),
        status: Type.String(),
        disabled_reason: Type.String(),
        failing_since: TimeOrNull,
      }),
      Type.Null(),
    ]),
    attempt_log: Type.Array(
      Type.Object({
        attempt: Type.Integer(),
        generation: Type.Integer(),
        outcome: Type.String(),
        http_status: Type.Integer(),
        error: Type.String(),
        started_at: TimeOrNull,
        finished_at: TimeOrNull,
      }),
    ),
  },
  { title: 'OperatorWebhookDelivery' },
);

/** Operator view of one delivery: the record with its internals, its endpoint (never the secret) and its attempts. */
export async function webhookOperatorRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  operatorRouter(app, ctx).get(
    '/admin/v1/webhooks/deliveries/:id',
    operatorReadOne({ operationId: 'getWebhookDelivery', params: OperatorIdParams, response: Delivery }),
    async ({ params }) => {
      const d = orNotFound(await deliveryById(ctx.db, params.id), 'No such webhook delivery.');
      const endpoint = d.endpoint_id ? await endpointForOperator(ctx.db, d.endpoint_id) : undefined;
      const attempts = await attemptsOf(ctx.db, d.id, operatorAttemptsMax);
      return {
        id: d.id,
        merchant_id: d.merchant_id,
        environment: d.environment,
        event_id: d.event_id,
        event_type: d.event_type,
        endpoint_id: d.endpoint_id,
        status: d.status,
        attempts: d.attempts,
        round_attempts: d.round_attempts,
        generation: d.generation,
        last_http_status: d.last_http_status,
        last_error: d.last_error,
        next_attempt_at: isoOrNull(d.next_attempt_at),
        lease_until: isoOrNull(d.lease_until),
        created_at: isoOrNull(d.created_at),
        updated_at: isoOrNull(d.updated_at),
        endpoint: endpoint ? { ...endpoint, failing_since: isoOrNull(endpoint.failing_since) } : null,
        attempt_log: attempts.map((a) => ({
          attempt: a.attempt,
          generation: a.generation,
          outcome: a.outcome,
          http_status: a.http_status,
          error: a.error,
          started_at: isoOrNull(a.started_at),
          finished_at: isoOrNull(a.finished_at),
        })),
      };
    },
  );
}
