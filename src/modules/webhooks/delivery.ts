import type { ClockScope } from '../../platform/clock.js';
import type { ServiceContext } from '../../service-context.js';
import { reportFailure } from '../../jobs/failures.js';
import { raiseAlert } from '../alerts/index.js';
import { decideOutcome, failingTooLong, type AttemptResult } from './state.js';
import { envelope, signatureHeader, signingSecrets } from './signature.js';
import { allowsPrivateTargets, resolveTarget } from './ssrf.js';
import { postOnce } from './http-post.js';
import {
  claimDue,
  recordOutcomes,
  type ClaimedAttempt,
  type EndpointAfter,
  type RecordedOutcome,
  type StreakChange,
} from './queries/claims.js';
import { claiming, laneReleased, releaseLane } from './lanes.js';
import { recordEndpointChange } from './queries/fan-out.js';
import { disableEnabledEndpoint } from './queries/endpoints.js';
import { nextAttemptDue } from './queries/deliveries.js';
import { tracing } from '../../platform/telemetry/telemetry.js';

/**
 * Sending attempts: a claimed batch is grouped by endpoint, each endpoint's address is checked,
 * each attempt signed and posted over the endpoint's keep-alive pool, and the outcomes recorded
 * together (queries/claims.ts holds the statements; delivery-worker.ts is the background loop;
 * fan-out.ts makes the records).
 *
 * Times: a record's schedule, the endpoint's failing streak and its secret overlap are on the
 * merchant's clock (each record's merchant's time, read by the statements); the attempt lease, the
 * attempt log and the `webhook-timestamp` header are real time: they are about the HTTP request
 * itself, and the receiver checks the timestamp against its own clock.
 */

/** An attempt's lease outlives its request by a margin, so two processes never send one record at once. */
export const attemptLeaseMs = (timeoutMs: number): number => timeoutMs + Math.max(2_000, 2 * timeoutMs);

export const userAgent = 'MerchantWalletAPI-Webhooks/1.0';

/** A finished attempt, ready to record. */
export interface Finished {
  attempt: ClaimedAttempt;
  result: AttemptResult;
}

/** Builds, signs and sends one attempt to the address already checked. */
function post(
  ctx: ServiceContext,
  a: ClaimedAttempt,
  url: URL,
  address: { address: string; family: 4 | 6 },
): Promise<AttemptResult> {
  const body = Buffer.from(envelope(a.event), 'utf8');
  const timestamp = Math.floor(ctx.clock.real().getTime() / 1000);
  const headers = {
    'content-type': 'application/json',
    'user-agent': userAgent,
    'webhook-id': a.event.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(signingSecrets(a, a.now), a.event.id, timestamp, body),
  };
  const t = tracing();
  if (t === undefined) return postOnce(url, address, headers, body, ctx.config.webhookDeliveryTimeoutMs, a.endpoint_id);
  // With tracing on, a client span per attempt (telemetry.ts); the URL without its query or credentials.
  return t.inSpan(
    'webhook delivery',
    'client',
    {
      'http.request.method': 'POST',
      'url.full': `${url.origin}${url.pathname}`,
      'server.address': url.hostname,
      'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
      'mwa.merchant_id': a.merchant_id,
      'mwa.environment': a.environment,
      'mwa.webhook.endpoint_id': a.endpoint_id,
      'mwa.webhook.attempt': a.attempts,
      'mwa.event.id': a.event.id,
      'mwa.event.type': a.event.type,
    },
    async (span) => {
      const result = await postOnce(url, address, headers, body, ctx.config.webhookDeliveryTimeoutMs, a.endpoint_id);
      if (result.kind === 'response') span.setAttribute('http.response.status_code', result.httpStatus);
      const failed =
        result.kind === 'response'
          ? (result.httpStatus < 200 || result.httpStatus > 299) && String(result.httpStatus)
          : result.kind;
      if (failed)
        t.markFailed(
          span,
          failed,
          result.kind === 'network' ? result.error : result.kind === 'refused' ? result.reason : undefined,
        );
      return result;
    },
  );
}

/**
 * Sends the claimed attempts of one endpoint, all at once (the claim gave no more than its free
 * lanes). The address is checked right before they go (once for the group: they leave together);
 * a refused check sends nothing and each attempt counts as failed (`refused`). `done` is called
 * for each attempt as it finishes; never rejects.
 */
export async function sendToEndpoint(
  ctx: ServiceContext,
  group: readonly ClaimedAttempt[],
  done: (f: Finished) => void | Promise<void>,
): Promise<void> {
  const first = group[0];
  if (!first) return;
  let target: Awaited<ReturnType<typeof resolveTarget>>;
  try {
    target = await resolveTarget(first.url, allowsPrivateTargets(ctx.config, first.environment));
  } catch (err) {
    target = { ok: false, reason: `check failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 200) };
  }
  await Promise.all(
    group.map(async (attempt) => {
      let result: AttemptResult;
      if (!target.ok) result = { kind: 'refused', reason: target.reason };
      else {
        try {
          result = await post(ctx, attempt, target.url, target.address);
        } catch (err) {
          result = { kind: 'network', error: (err instanceof Error ? err.message : String(err)).slice(0, 200) };
        }
      }
      await done({ attempt, result });
    }),
  );
}

/** Claimed attempts by endpoint, in claim order. */
export function byEndpoint(claimed: readonly ClaimedAttempt[]): ClaimedAttempt[][] {
  const groups = new Map<string, ClaimedAttempt[]>();
  for (const c of claimed) {
    const g = groups.get(c.endpoint_id);
    if (g) g.push(c);
    else groups.set(c.endpoint_id, [c]);
  }
  return [...groups.values()];
}

/** The record and attempt-log values of a finished attempt (the pure state machine decides). */
export function toRecorded(ctx: ServiceContext, f: Finished): RecordedOutcome & { endpointGone: boolean } {
  const { attempt, result } = f;
  const outcome = decideOutcome(
    result,
    attempt.round_attempts,
    ctx.config.webhookRetryScheduleMs,
    attempt.last_http_status,
  );
  return {
    id: attempt.id,
    generation: attempt.generation,
    attempt: attempt.attempts,
    status: outcome.status,
    attemptOutcome: outcome.attemptOutcome,
    httpStatus: result.kind === 'response' ? result.httpStatus : 0,
    lastHttpStatus: outcome.lastHttpStatus,
    error: outcome.error,
    retryInMs: outcome.retryInMs ?? 0,
    endpointGone: outcome.endpointGone,
  };
}

/** Each endpoint's streak change after its outcomes, in the order they finished. */
export function streakChanges(
  outcomes: ReadonlyArray<{ endpointId: string; success: boolean }>,
): Map<string, StreakChange> {
  const seen = new Map<string, { hadSuccess: boolean; lastSuccess: boolean }>();
  for (const o of outcomes) {
    const s = seen.get(o.endpointId) ?? { hadSuccess: false, lastSuccess: false };
    seen.set(o.endpointId, { hadSuccess: s.hadSuccess || o.success, lastSuccess: o.success });
  }
  const changes = new Map<string, StreakChange>();
  for (const [id, s] of seen) changes.set(id, s.lastSuccess ? 'ok' : s.hadSuccess ? 'restart' : 'failing');
  return changes;
}

/** Tries to write a batch of outcomes this many times before the records are left to their lease (then sent again). */
export const recordTriesMax = 3;

/**
 * Records finished attempts in one statement (retried on an error, e.g. a deadlock or a lost
 * connection), then disables the endpoints that answered 410 or whose streak is too long. Never
 * rejects: a batch that cannot be written is reported, and its records are taken again when their
 * lease ends (at least once).
 */
export async function recordFinished(ctx: ServiceContext, finished: readonly Finished[]): Promise<void> {
  if (finished.length === 0) return;
  const outcomes = finished.map((f) => toRecorded(ctx, f));
  const streaks = streakChanges(
    finished.map((f, i) => ({ endpointId: f.attempt.endpoint_id, success: outcomes[i]!.status === 'sent' })),
  );
  const gone = new Set(finished.filter((_, i) => outcomes[i]!.endpointGone).map((f) => f.attempt.endpoint_id));
  let endpoints: EndpointAfter[] = [];
  for (let tryNo = 1; tryNo <= recordTriesMax; tryNo++) {
    try {
      endpoints = (await recordOutcomes(ctx.db, outcomes, streaks)).endpoints;
      break;
    } catch (err) {
      if (tryNo === recordTriesMax) {
        reportFailure(
          ctx,
          { job: 'webhook.deliver', step: 'record', attempt: tryNo, attemptsMax: recordTriesMax },
          err,
          `the outcomes of ${outcomes.length} webhook attempts could not be recorded; their records are ` +
            `attempted again when their lease ends`,
        );
        return;
      }
      await new Promise((r) => setTimeout(r, 50 * tryNo));
    }
  }
  for (const o of outcomes)
    ctx.metrics.jobRuns.inc({
      job: 'webhook.deliver',
      outcome: o.status === 'sent' ? 'ok' : o.status === 'failed' ? 'later' : 'dead',
    });
  for (const e of endpoints) {
    if (e.change === 'ok' || e.status !== 'enabled') continue;
    const isGone = gone.has(e.id);
    if (!isGone && !failingTooLong(e.failing_since, e.now, ctx.config.webhookDisableAfterFailingMs)) continue;
    try {
      await disableEndpoint(ctx, e, isGone);
    } catch (err) {
      reportFailure(
        ctx,
        { job: 'webhook.deliver', step: 'disable' },
        err,
        'a webhook endpoint to be disabled could not be; its next failed attempt tries again',
      );
    }
  }
}

/** A 410, or a streak too long: the endpoint is disabled (once) with an operator alert. */
async function disableEndpoint(ctx: ServiceContext, endpoint: EndpointAfter, gone: boolean): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const disabled = await disableEnabledEndpoint(trx, endpoint.id, gone ? 'gone' : 'failing', endpoint.now);
    if (!disabled) return;
    await recordEndpointChange(trx, disabled, { status: 'enabled', event_types: disabled.event_types });
    await raiseAlert(trx, {
      kind: 'webhook.endpoint_disabled',
      merchantId: endpoint.merchant_id,
      environment: endpoint.environment,
      object: 'webhook_endpoint',
      objectId: endpoint.id,
      message: gone
        ? 'The endpoint answered 410 Gone; it was disabled. The merchant can re-enable it (PATCH status ' +
          'enabled) and requeue dead deliveries.'
        : `Every attempt to the endpoint has failed ` +
          `for ${Math.round(ctx.config.webhookDisableAfterFailingMs / 60_000)} minutes; it was disabled.`,
    });
  });
}

/** Records of a merchant claimed per batch by the clock's process, and batches (or waits for a lane) per run (named
 * bounds). */
export const clockRetryBatch = 100;
export const clockRetryBatchesMax = 50;
/** While a due record's endpoint has no free lane (the background worker is sending to it), the clock's process waits
 * this long at most for one. */
const laneWaitMs = 200;

/**
 * Every attempt of a merchant's records due at or before `now` (its clock), earliest first, in
 * bounded batches: the sandbox clock's `webhook.retry` process. The same claim and record
 * statements as the background worker, waiting for records another claim has locked instead of
 * skipping them; each batch is sent and recorded before the next is claimed.
 */
export async function attemptDue(ctx: ServiceContext, scope: ClockScope, now: Date): Promise<void> {
  const leaseMs = attemptLeaseMs(ctx.config.webhookDeliveryTimeoutMs);
  for (let batch = 0; batch < clockRetryBatchesMax; batch++) {
    const claimed = await claiming((lanes) =>
      claimDue(ctx.db, { limit: clockRetryBatch, lanes, leaseMs, scope, dueBy: now, skipLocked: false }),
    );
    if (claimed.length === 0) {
      const due = await nextAttemptDue(ctx.db, scope);
      if (due === null || due.getTime() > now.getTime()) return;
      // Due, but its endpoint's lanes are all in use here: wait for one.
      await laneReleased(laneWaitMs);
      continue;
    }
    const finished: Finished[] = [];
    try {
      await Promise.all(byEndpoint(claimed).map((group) => sendToEndpoint(ctx, group, (f) => void finished.push(f))));
      await recordFinished(ctx, finished);
    } finally {
      for (const c of claimed) releaseLane(c.endpoint_id);
    }
  }
}
