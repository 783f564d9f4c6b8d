import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import { RetryLater, type JobHandler } from '../../jobs/types.js';
import { raiseAlert } from '../alerts/queries.js';
import type { WebhookDeliveriesTable, WebhookEndpointsTable } from './tables.js';
import { decideClaim, decideOutcome, failingTooLong, type AttemptResult } from './state.js';
import { envelope, signatureHeader, signingSecrets } from './signature.js';
import { allowsPrivateTargets, resolveTarget } from './ssrf.js';
import { postOnce } from './http-post.js';

/**
 * Sending one attempt of a delivery record: claim it under a lease, sign and post, record the
 * outcome, keep the endpoint's health. Making records and their jobs is fan-out.ts.
 */

type DeliveryRow = Selectable<WebhookDeliveriesTable>;
type EndpointRow = Selectable<WebhookEndpointsTable>;

/** An attempt's lease outlives its request by a margin, so two processes never send one record at once. */
export const attemptLeaseMs = (timeoutMs: number): number => timeoutMs + Math.max(2_000, 2 * timeoutMs);

export const userAgent = 'MerchantWalletAPI-Webhooks/1.0';

type Claim =
  | { kind: 'done' }
  | { kind: 'wait'; ms: number }
  | {
      kind: 'go';
      delivery: DeliveryRow;
      endpoint: EndpointRow;
      event: Selectable<Database['events']>;
    };

async function claimAttempt(db: Kysely<Database>, id: string, generation: number, timeoutMs: number): Promise<Claim> {
  return db.transaction().execute(async (trx): Promise<Claim> => {
    const delivery = await trx.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    const endpoint = delivery?.endpoint_id
      ? await trx.selectFrom('webhook_endpoints').selectAll().where('id', '=', delivery.endpoint_id).executeTakeFirst()
      : undefined;
    const now = new Date();
    const decision = decideClaim(delivery, endpoint?.status, generation, now);
    if (decision.kind === 'stale') return { kind: 'done' };
    if (decision.kind === 'wait') return { kind: 'wait', ms: decision.ms };
    if (decision.kind === 'endpoint_unavailable') {
      await trx
        .updateTable('webhook_deliveries')
        .set({ status: 'dead', next_attempt_at: null, last_error: decision.reason, updated_at: now })
        .where('id', '=', id)
        .execute();
      return { kind: 'done' };
    }
    const claimed = await trx
      .updateTable('webhook_deliveries')
      .set((eb) => ({
        attempts: eb('attempts', '+', 1),
        round_attempts: eb('round_attempts', '+', 1),
        lease_until: new Date(now.getTime() + attemptLeaseMs(timeoutMs)),
        updated_at: now,
      }))
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    // An attempt still in flight here lost its lease: its process died, or it stalled past the lease.
    await trx
      .updateTable('webhook_delivery_attempts')
      .set({ outcome: 'abandoned', error: 'no outcome recorded before the lease ended', finished_at: now })
      .where('delivery_id', '=', id)
      .where('outcome', '=', 'in_flight')
      .execute();
    await trx
      .insertInto('webhook_delivery_attempts')
      .values({ delivery_id: id, generation: claimed.generation, attempt: claimed.attempts, finished_at: null })
      .execute();
    const event = await trx.selectFrom('events').selectAll().where('id', '=', claimed.event_id).executeTakeFirstOrThrow();
    return { kind: 'go', delivery: claimed, endpoint: endpoint!, event };
  });
}

/** Builds, signs and sends one attempt; checks the address first (no request when it is refused). */
async function attempt(ctx: ServiceContext, endpoint: EndpointRow, event: Selectable<Database['events']>): Promise<AttemptResult> {
  const target = await resolveTarget(endpoint.url, allowsPrivateTargets(ctx.config, endpoint.environment));
  if (!target.ok) return { kind: 'refused', reason: target.reason };
  const body = Buffer.from(envelope(event), 'utf8');
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    'content-type': 'application/json',
    'user-agent': userAgent,
    'webhook-id': event.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(signingSecrets(endpoint, new Date()), event.id, timestamp, body),
  };
  return postOnce(target.url, target.address, headers, body, ctx.config.webhookDeliveryTimeoutMs);
}

/** Writes the attempt's outcome; the record changes only if this attempt still holds it. */
async function recordOutcome(ctx: ServiceContext, claim: Extract<Claim, { kind: 'go' }>, result: AttemptResult) {
  const { delivery, endpoint } = claim;
  const outcome = decideOutcome(result, delivery.round_attempts, ctx.config.webhookRetryScheduleMs, delivery.last_http_status);
  const now = new Date();
  const still = await ctx.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('webhook_delivery_attempts')
      .set({ outcome: outcome.attemptOutcome, http_status: result.kind === 'response' ? result.httpStatus : 0, error: outcome.error.slice(0, 500), finished_at: now })
      .where('delivery_id', '=', delivery.id)
      .where('attempt', '=', delivery.attempts)
      .execute();
    const updated = await trx
      .updateTable('webhook_deliveries')
      .set({
        status: outcome.status,
        last_http_status: outcome.lastHttpStatus,
        last_error: outcome.error.slice(0, 500),
        next_attempt_at: outcome.status === 'failed' ? new Date(now.getTime() + outcome.retryInMs!) : null,
        lease_until: null,
        updated_at: now,
      })
      .where('id', '=', delivery.id)
      .where('generation', '=', delivery.generation)
      .where('attempts', '=', delivery.attempts)
      .where('status', 'in', ['pending', 'failed'])
      .returning('id')
      .executeTakeFirst();
    await updateEndpointHealth(ctx, trx, endpoint, outcome.status === 'sent', outcome.endpointGone, now);
    return updated !== undefined;
  });
  return { still, outcome };
}

/** Success clears the failing streak; a failure starts it, and a streak too long (or a 410) disables the endpoint. */
async function updateEndpointHealth(ctx: ServiceContext, trx: Transaction<Database>, endpoint: EndpointRow, success: boolean, gone: boolean, now: Date) {
  if (success) {
    await trx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', endpoint.id).where('failing_since', 'is not', null).execute();
    return;
  }
  const row = await trx
    .updateTable('webhook_endpoints')
    .set({ failing_since: sql<Date>`COALESCE(failing_since, ${now})` })
    .where('id', '=', endpoint.id)
    .returning(['failing_since', 'status'])
    .executeTakeFirst();
  if (!row || row.status !== 'enabled') return;
  const tooLong = failingTooLong(row.failing_since ? new Date(row.failing_since) : null, now, ctx.config.webhookDisableAfterFailingMs);
  if (!gone && !tooLong) return;
  const reason = gone ? 'gone' : 'failing';
  const disabled = await trx
    .updateTable('webhook_endpoints')
    .set({ status: 'disabled', disabled_reason: reason, updated_at: now })
    .where('id', '=', endpoint.id)
    .where('status', '=', 'enabled')
    .returning('id')
    .executeTakeFirst();
  if (!disabled) return;
  await raiseAlert(trx, {
    kind: 'webhook.endpoint_disabled',
    merchantId: endpoint.merchant_id,
    environment: endpoint.environment,
    object: 'webhook_endpoint',
    objectId: endpoint.id,
    message: gone
      ? 'The endpoint answered 410 Gone; it was disabled. The merchant can re-enable it (PATCH status enabled) and requeue dead deliveries.'
      : `Every attempt to the endpoint has failed for ${Math.round(ctx.config.webhookDisableAfterFailingMs / 60_000)} minutes; it was disabled.`,
  });
}

/**
 * The delivery job (at least once): claim the record under a lease (a conditional update: a
 * record already `sent`, `dead` or redelivered since is left alone, so no job posts after `sent`),
 * send, record. A crash after sending and before recording resends after the lease: at least once.
 */
export const deliverHandler: JobHandler = async (job, ctx) => {
  const id = String(job.payload.delivery_id ?? '');
  const generation = Number(job.payload.generation ?? 0);
  if (id === '') return;
  const claim = await claimAttempt(ctx.db, id, generation, ctx.config.webhookDeliveryTimeoutMs);
  if (claim.kind === 'done') return;
  if (claim.kind === 'wait') throw new RetryLater(claim.ms, 'not due');
  const result = await attempt(ctx, claim.endpoint, claim.event);
  const { still, outcome } = await recordOutcome(ctx, claim, result);
  if (still && outcome.status === 'failed') throw new RetryLater(outcome.retryInMs!, `attempt ${claim.delivery.round_attempts} failed: ${outcome.error}`);
};

