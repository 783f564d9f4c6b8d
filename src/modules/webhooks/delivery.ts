import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { ClockScope } from '../../platform/clock.js';
import type { Database } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import { RetryLater, type JobHandler } from '../../jobs/types.js';
import { raiseAlert } from '../alerts/queries.js';
import type { WebhookDeliveriesTable, WebhookEndpointsTable } from './tables.js';
import { decideClaim, decideOutcome, failingTooLong, type AttemptResult } from './state.js';
import { envelope, signatureHeader, signingSecrets } from './signature.js';
import { allowsPrivateTargets, resolveTarget } from './ssrf.js';
import { connectionsPerEndpointMax, postOnce } from './http-post.js';

/**
 * Sending one attempt of a delivery record: claim it under a lease, sign and post, record the
 * outcome, keep the endpoint's health. Making records and their jobs is fan-out.ts.
 *
 * Times: a record's schedule (next_attempt_at, updated_at), the endpoint's failing streak and its
 * secret overlap are on the merchant's clock (ctx.clock; a sandbox merchant's own time). The
 * attempt lease, the attempt log and the `webhook-timestamp` header are real time: they are about
 * the HTTP request itself, and the receiver checks the timestamp against its own clock.
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
      /** The merchant's time when the attempt was claimed. */
      now: Date;
    };

const scopeOf = (row: { merchant_id: string; environment: ClockScope['environment'] }): ClockScope => ({ merchantId: row.merchant_id, environment: row.environment });

async function claimAttempt(ctx: ServiceContext, id: string, generation: number, timeoutMs: number): Promise<Claim> {
  return ctx.db.transaction().execute(async (trx): Promise<Claim> => {
    const delivery = await trx.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!delivery) return { kind: 'done' };
    const endpoint = delivery.endpoint_id
      ? await trx.selectFrom('webhook_endpoints').selectAll().where('id', '=', delivery.endpoint_id).executeTakeFirst()
      : undefined;
    const now = await ctx.clock.now(trx, scopeOf(delivery));
    const real = ctx.clock.real();
    const decision = decideClaim(delivery, endpoint?.status, generation, now, real);
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
        lease_until: new Date(real.getTime() + attemptLeaseMs(timeoutMs)),
        updated_at: now,
      }))
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    // An attempt still in flight here lost its lease: its process died, or it stalled past the lease.
    await trx
      .updateTable('webhook_delivery_attempts')
      .set({ outcome: 'abandoned', error: 'no outcome recorded before the lease ended', finished_at: real })
      .where('delivery_id', '=', id)
      .where('outcome', '=', 'in_flight')
      .execute();
    await trx
      .insertInto('webhook_delivery_attempts')
      .values({ delivery_id: id, generation: claimed.generation, attempt: claimed.attempts, finished_at: null })
      .execute();
    const event = await trx.selectFrom('events').selectAll().where('id', '=', claimed.event_id).executeTakeFirstOrThrow();
    return { kind: 'go', delivery: claimed, endpoint: endpoint!, event, now };
  });
}

/** Builds, signs and sends one attempt; checks the address first (no request when it is refused). */
async function attempt(ctx: ServiceContext, endpoint: EndpointRow, event: Selectable<Database['events']>, now: Date): Promise<AttemptResult> {
  const target = await resolveTarget(endpoint.url, allowsPrivateTargets(ctx.config, endpoint.environment));
  if (!target.ok) return { kind: 'refused', reason: target.reason };
  const body = Buffer.from(envelope(event), 'utf8');
  const timestamp = Math.floor(ctx.clock.real().getTime() / 1000);
  const headers = {
    'content-type': 'application/json',
    'user-agent': userAgent,
    'webhook-id': event.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(signingSecrets(endpoint, now), event.id, timestamp, body),
  };
  return postOnce(target.url, target.address, headers, body, ctx.config.webhookDeliveryTimeoutMs);
}

/** Writes the attempt's outcome; the record changes only if this attempt still holds it. */
async function recordOutcome(ctx: ServiceContext, claim: Extract<Claim, { kind: 'go' }>, result: AttemptResult) {
  const { delivery, endpoint } = claim;
  const outcome = decideOutcome(result, delivery.round_attempts, ctx.config.webhookRetryScheduleMs, delivery.last_http_status);
  const still = await ctx.db.transaction().execute(async (trx) => {
    const now = await ctx.clock.now(trx, scopeOf(delivery));
    await trx
      .updateTable('webhook_delivery_attempts')
      .set({ outcome: outcome.attemptOutcome, http_status: result.kind === 'response' ? result.httpStatus : 0, error: outcome.error.slice(0, 500), finished_at: ctx.clock.real() })
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
  // Bounded concurrency per endpoint: while its attempts in flight in this process are at the
  // bound, the job steps aside at once (its run not used up) and the runner's slot goes to other
  // endpoints' jobs, so one slow receiver cannot hold them back.
  const endpointId = typeof job.payload.endpoint_id === 'string' ? job.payload.endpoint_id : undefined;
  if (endpointId !== undefined && (attemptsInFlight.get(endpointId) ?? 0) >= connectionsPerEndpointMax) {
    throw new RetryLater(busyEndpointRetryMs, 'endpoint busy: attempts in flight at the bound', false);
  }
  if (endpointId !== undefined) attemptsInFlight.set(endpointId, (attemptsInFlight.get(endpointId) ?? 0) + 1);
  try {
    const done = await deliverOnce(ctx, id, generation);
    if (done.kind === 'wait') throw new RetryLater(done.ms, done.reason);
  } finally {
    if (endpointId !== undefined) {
      const left = (attemptsInFlight.get(endpointId) ?? 1) - 1;
      if (left <= 0) attemptsInFlight.delete(endpointId);
      else attemptsInFlight.set(endpointId, left);
    }
  }
};

/** Delivery jobs running per endpoint in this process (at most `connectionsPerEndpointMax`). */
const attemptsInFlight = new Map<string, number>();
/** A job whose endpoint is busy is looked at again after this long. */
export const busyEndpointRetryMs = 200;

/**
 * One attempt of a record, if it is due: what the delivery job and the sandbox clock's
 * `webhook.retry` process both run. Answers `wait` with the delay (on the merchant's clock) when
 * the record is not due, is held by another attempt, or failed again and waits for its next one.
 */
export async function deliverOnce(ctx: ServiceContext, id: string, generation: number): Promise<{ kind: 'done' } | { kind: 'wait'; ms: number; reason: string }> {
  const claim = await claimAttempt(ctx, id, generation, ctx.config.webhookDeliveryTimeoutMs);
  if (claim.kind === 'done') return claim;
  if (claim.kind === 'wait') return { kind: 'wait', ms: claim.ms, reason: 'not due' };
  const result = await attempt(ctx, claim.endpoint, claim.event, claim.now);
  const { still, outcome } = await recordOutcome(ctx, claim, result);
  if (still && outcome.status === 'failed') return { kind: 'wait', ms: outcome.retryInMs!, reason: `attempt ${claim.delivery.round_attempts} failed: ${outcome.error}` };
  return { kind: 'done' };
}

/** Records of one merchant and environment that an attempt may take now: pending or failed, scheduled, not held by a live lease. */
const retryable = (db: Kysely<Database>, scope: ClockScope) => db
  .selectFrom('webhook_deliveries')
  .where('merchant_id', '=', scope.merchantId)
  .where('environment', '=', scope.environment)
  .where('status', 'in', ['pending', 'failed'])
  .where('next_attempt_at', 'is not', null)
  .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', sql<Date>`now()`)]));

/** The earliest next attempt of a merchant's records that an attempt may take (on its clock), or null. */
export async function nextAttemptDue(db: Kysely<Database>, scope: ClockScope): Promise<Date | null> {
  const row = await retryable(db, scope).select((eb) => eb.fn.min('next_attempt_at').as('due')).executeTakeFirst();
  return row?.due ? new Date(row.due) : null;
}

/** Records of a merchant retried per batch by the clock's process, and batches per run (named bounds). */
export const clockRetryBatch = 100;
export const clockRetryBatchesMax = 50;

/**
 * Every attempt of a merchant's records due at or before `now` (its clock), earliest first, in
 * bounded batches: the sandbox clock's `webhook.retry` process. The records' jobs stay queued and
 * find them sent, or not yet due, when they run.
 */
export async function attemptDue(ctx: ServiceContext, scope: ClockScope, now: Date): Promise<void> {
  for (let batch = 0; batch < clockRetryBatchesMax; batch++) {
    const rows = await retryable(ctx.db, scope)
      .select(['id', 'generation'])
      .where('next_attempt_at', '<=', now)
      .orderBy('next_attempt_at')
      .orderBy('seq')
      .limit(clockRetryBatch)
      .execute();
    if (rows.length === 0) return;
    for (const r of rows) await deliverOnce(ctx, r.id, r.generation);
  }
}

