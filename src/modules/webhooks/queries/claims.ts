// Over 300 lines: the two statements of batched delivery (claim, record outcomes), one lease protocol.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database, Environment } from '../../../db/schema.js';
import type { ClockScope } from '../../../platform/clock.js';
import { scopeNowSql } from '../../../platform/queries/clock.js';
import type { EnvelopeEvent } from '../signature.js';
import type { LaneLimits } from '../lanes.js';

/**
 * The two statements of batched delivery (docs/webhooks.md, "Delivery"): one claims due records
 * under a lease, writes their attempt rows and returns what the requests need; one records the
 * outcomes of many attempts and the endpoints' failing streaks. A record is the queue item: no
 * job row, no per-attempt transaction.
 *
 * Times: `next_attempt_at` and `updated_at` are on each record's merchant's clock (the database's
 * `now()` plus its sandbox offset, `scopeNowSql`); the lease and the attempt log are real time.
 */

/** `subscribes` (state.ts) in SQL: an endpoint's `event_types` (jsonb) take `*` or the type. */
export function subscribesSql(eventTypes: string, type: string): RawBuilder<boolean> {
  return sql<boolean>`(${sql.ref(eventTypes)} @> '["*"]'::jsonb OR ${sql.ref(eventTypes)} @>
    jsonb_build_array(${sql.ref(type)}))`;
}

export interface ClaimedAttempt {
  id: string;
  generation: number;
  /** The attempt number (every attempt ever made, this one included). */
  attempts: number;
  /** This attempt's place in its round of the schedule. */
  round_attempts: number;
  last_http_status: number;
  merchant_id: string;
  environment: Environment;
  endpoint_id: string;
  /** The merchant's time at the claim (the secret overlap is judged on it). */
  now: Date;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  event: EnvelopeEvent;
}

export interface ClaimOptions {
  /** Records to claim at most. */
  limit: number;
  lanes: LaneLimits;
  /** The attempt lease (real time). */
  leaseMs: number;
  /** Only this merchant's records (the sandbox clock's process). */
  scope?: ClockScope;
  /** Due at or before this time on the scope's clock (with `scope`); otherwise due on each record's own merchant's
   * time. */
  dueBy?: Date;
  /** Skip records another claim has locked (the background worker); false waits for it (the clock's process must not
   * miss one). */
  skipLocked: boolean;
}

/** Candidate records read (unlocked) per claim, to rank per endpoint before the few claimed are locked. */
const candidatesFor = (limit: number) => Math.min(limit * 2, limit + 200);

const recordNow = (alias: string) => scopeNowSql(sql.ref(`${alias}.merchant_id`), sql.ref(`${alias}.environment`));

/** A record an attempt may take now: pending or failed, due, not held by a live lease. */
function dueCondition(o: ClaimOptions): RawBuilder<unknown> {
  const due =
    o.dueBy !== undefined
      ? // `dueBy` has milliseconds, the stored times microseconds (the database's clock): a record due
        // within the millisecond `dueBy` names is due, as `nextAttemptDue` (also in milliseconds) said
        // it was. Otherwise an advance stepped to that millisecond claimed nothing, waited for a lane
        // 50 times and left the record to the background worker.
        sql`d.next_attempt_at < ${o.dueBy}::timestamptz + interval '1 millisecond'`
      : sql`d.next_attempt_at <= now() + (SELECT COALESCE(max(offset_ms), 0) FROM sandbox_clocks) * interval
        '1 millisecond'
        AND d.next_attempt_at <= ${recordNow('d')}`;
  const scope = o.scope
    ? sql`AND d.merchant_id = ${o.scope.merchantId} AND d.environment = ${o.scope.environment}`
    : sql``;
  return sql`d.status IN ('pending', 'failed') AND ${due} AND (d.lease_until IS NULL OR d.lease_until < now())
    ${scope}`;
}

/** A claimed record as the statement answers it: its times as the driver gives them, its event's columns flat. */
interface ClaimRow extends Omit<ClaimedAttempt, 'now' | 'previous_secret_expires_at' | 'event'> {
  now: Date | string;
  previous_secret_expires_at: Date | string | null;
  event_id: string;
  event_type: string;
  event_created_at: Date | string;
  event_merchant_id: string;
  livemode: boolean;
  object: string;
  object_id: string;
  external_member_id: string;
  event_status: string;
  status_version: number;
}

/**
 * Claims up to `limit` due records in one statement, earliest first, no more per endpoint than
 * its free lanes: each gets `attempts` and `round_attempts` + 1, a lease, and an attempt row
 * (`in_flight`; an attempt still in flight from a lease that ended is marked `abandoned`). A record
 * whose endpoint is disabled or deleted, or no longer subscribes to its event's type, goes `dead` without a request
 * (its attempt left in flight by a lease that ended is marked `abandoned` too). Candidates are ranked
 * unlocked; only the records claimed are locked (`FOR UPDATE`, re-checked once locked), so a
 * concurrent claim of another process skips or re-checks them and never takes one twice.
 */
export async function claimDue(db: Kysely<Database>, o: ClaimOptions): Promise<ClaimedAttempt[]> {
  if (o.limit <= 0) return [];
  const capIds = [...o.lanes.partial.keys()];
  const capFree = capIds.map((id) => o.lanes.partial.get(id)!);
  const lock = o.skipLocked ? sql`FOR UPDATE OF d SKIP LOCKED` : sql`FOR UPDATE OF d`;
  const { rows } = await sql<ClaimRow>`
    WITH candidates AS (
      SELECT d.id, d.endpoint_id, d.next_attempt_at, d.seq FROM webhook_deliveries d
      WHERE ${dueCondition(o)} AND NOT (d.endpoint_id = ANY(${sql.val(o.lanes.full)}::text[]))
      -- The order of the index on next_attempt_at (records of one time in the order they were
      -- written), so that the scan stops after the candidates instead of sorting every due record.
      ORDER BY d.next_attempt_at
      LIMIT ${candidatesFor(o.limit)}
    ), ranked AS (
      SELECT c.id, c.next_attempt_at, c.seq, COALESCE(cap.free, ${o.lanes.perEndpointMax}) AS free,
        row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.next_attempt_at, c.seq) AS rn
      FROM candidates c LEFT JOIN unnest(${sql.val(capIds)}::text[], ${sql.val(capFree)}::int[]) AS cap(endpoint_id,
        free) ON cap.endpoint_id = c.endpoint_id
    ), picked AS (
      SELECT id FROM ranked WHERE rn <= free ORDER BY next_attempt_at, seq LIMIT ${o.limit}
    ), locked AS (
      -- An endpoint whose event_types no longer take the event's type (narrowed by PATCH) counts as
      -- unavailable for it, as fan-out would not have planned the record (state.ts, subscribes).
      SELECT d.id, CASE
          WHEN w.status IS NULL THEN 'missing'
          WHEN w.status <> 'enabled' THEN w.status
          WHEN NOT ${subscribesSql('w.event_types', 'ev.type')} THEN 'unsubscribed'
          ELSE 'enabled' END AS endpoint_status
      FROM webhook_deliveries d LEFT JOIN webhook_endpoints w ON w.id = d.endpoint_id LEFT JOIN events ev ON ev.id =
        d.event_id
      WHERE d.id IN (SELECT id FROM picked) AND ${dueCondition(o)}
      ${lock}
    ), unavailable AS (
      UPDATE webhook_deliveries d
      SET status = 'dead', next_attempt_at = NULL, updated_at = ${recordNow('d')},
        last_error = CASE l.endpoint_status WHEN 'unsubscribed' THEN 'endpoint no longer subscribes to the event type'
          ELSE 'endpoint ' || l.endpoint_status END
      FROM locked l WHERE d.id = l.id AND l.endpoint_status <> 'enabled'
    ), claimed AS (
      UPDATE webhook_deliveries d
      SET attempts = d.attempts + 1, round_attempts = d.round_attempts + 1,
        lease_until = now() + ${o.leaseMs} * interval '1 millisecond', updated_at = ${recordNow('d')}
      FROM locked l WHERE d.id = l.id AND l.endpoint_status = 'enabled'
      RETURNING d.id, d.generation, d.attempts, d.round_attempts, d.last_http_status, d.merchant_id, d.environment,
        d.event_id, d.endpoint_id, d.updated_at
    ), abandoned AS (
      -- Every record taken, claimed or gone dead on its endpoint: an attempt cut with its process
      -- never stays in flight.
      UPDATE webhook_delivery_attempts a
      SET outcome = 'abandoned', error = 'no outcome recorded before the lease ended', finished_at = now()
      FROM locked l WHERE a.delivery_id = l.id AND a.outcome = 'in_flight'
    ), logged AS (
      INSERT INTO webhook_delivery_attempts (delivery_id, generation, attempt, finished_at)
      SELECT id, generation, attempts, NULL FROM claimed
    )
    SELECT c.id, c.generation, c.attempts, c.round_attempts, c.last_http_status, c.merchant_id, c.environment,
      c.endpoint_id, c.updated_at AS now,
      w.url, w.secret, w.previous_secret, w.previous_secret_expires_at,
      e.id AS event_id, e.type AS event_type, e.created_at AS event_created_at, e.merchant_id AS event_merchant_id,
        e.livemode,
      e.object, e.object_id, e.external_member_id, e.status AS event_status, e.status_version
    FROM claimed c JOIN webhook_endpoints w ON w.id = c.endpoint_id JOIN events e ON e.id = c.event_id
  `.execute(db);
  return rows.map(toClaimed);
}

const asDate = (v: Date | string) => (v instanceof Date ? v : new Date(v));

function toClaimed(r: ClaimRow): ClaimedAttempt {
  return {
    id: r.id,
    generation: Number(r.generation),
    attempts: Number(r.attempts),
    round_attempts: Number(r.round_attempts),
    last_http_status: Number(r.last_http_status),
    merchant_id: r.merchant_id,
    environment: r.environment,
    endpoint_id: r.endpoint_id,
    now: asDate(r.now),
    url: r.url,
    secret: r.secret,
    previous_secret: r.previous_secret,
    previous_secret_expires_at: r.previous_secret_expires_at === null ? null : asDate(r.previous_secret_expires_at),
    event: {
      id: r.event_id,
      type: r.event_type,
      created_at: asDate(r.event_created_at),
      merchant_id: r.event_merchant_id,
      livemode: r.livemode,
      object: r.object,
      object_id: r.object_id,
      external_member_id: r.external_member_id,
      status: r.event_status,
      status_version: Number(r.status_version),
    },
  };
}

/** One attempt's outcome, as the record and the attempt log take it. */
export interface RecordedOutcome {
  id: string;
  generation: number;
  attempt: number;
  status: 'sent' | 'failed' | 'dead';
  attemptOutcome: 'sent' | 'failed' | 'refused';
  httpStatus: number;
  lastHttpStatus: number;
  error: string;
  /** Milliseconds to the next attempt (on the merchant's clock) when `failed`; 0 otherwise. */
  retryInMs: number;
}

/**
 * An endpoint's streak after a batch of its outcomes, in the order they came: `ok` (the last one
 * succeeded: the streak ends), `restart` (a success, then failures: a new streak starts now),
 * `failing` (only failures: the streak starts now unless it had started).
 */
export type StreakChange = 'ok' | 'restart' | 'failing';

export interface EndpointAfter {
  id: string;
  merchant_id: string;
  environment: Environment;
  status: string;
  failing_since: Date | null;
  /** The merchant's time when the streak was written. */
  now: Date;
  change: StreakChange;
}

/**
 * Writes many outcomes in one statement: each attempt row; each record, only if the attempt
 * still holds it (same generation and attempt count, still pending or failed); the failing
 * streak of each endpoint (rows locked in id order, records in seq order, as requeue does, so
 * two writers never deadlock). Answers the ids of the records written and the endpoints whose
 * streak was written (an `ok` endpoint that had no streak is not touched).
 */
export async function recordOutcomes(
  db: Kysely<Database>,
  outcomes: readonly RecordedOutcome[],
  streaks: ReadonlyMap<string, StreakChange>,
): Promise<{ recorded: Set<string>; endpoints: EndpointAfter[] }> {
  if (outcomes.length === 0) return { recorded: new Set(), endpoints: [] };
  const col = <T>(f: (o: RecordedOutcome) => T) => sql.val(outcomes.map(f));
  const endpointIds = [...streaks.keys()];
  const changes = endpointIds.map((id) => streaks.get(id)!);
  const { rows } = await sql<{
    kind: 'record' | 'endpoint';
    id: string;
    merchant_id: string | null;
    environment: Environment | null;
    status: string | null;
    failing_since: Date | string | null;
    now: Date | string | null;
    change: StreakChange | null;
  }>`
    WITH o AS (
      SELECT * FROM unnest(
        ${col((o) => o.id)}::text[], ${col((o) => o.generation)}::int[], ${col((o) => o.attempt)}::int[],
          ${col((o) => o.status)}::text[],
        ${col((o) => o.attemptOutcome)}::text[], ${col((o) => o.httpStatus)}::int[],
          ${col((o) => o.lastHttpStatus)}::int[],
        ${col((o) => o.error.slice(0, 500))}::text[], ${col((o) => o.retryInMs)}::bigint[]
      ) AS o(id, generation, attempt, status, outcome, http_status, last_http_status, error, retry_ms)
    ), logged AS (
      UPDATE webhook_delivery_attempts a
      SET outcome = o.outcome, http_status = o.http_status, error = o.error, finished_at = now()
      FROM o WHERE a.delivery_id = o.id AND a.attempt = o.attempt
    ), recorded AS (
      UPDATE webhook_deliveries d
      SET status = o.status, last_http_status = o.last_http_status, last_error = o.error,
        next_attempt_at = CASE WHEN o.status = 'failed' THEN ${recordNow('d')} + o.retry_ms * interval '1 millisecond'
          END,
        lease_until = NULL, updated_at = ${recordNow('d')}
      FROM o
      WHERE d.id = o.id AND d.generation = o.generation AND d.attempts = o.attempt AND d.status IN ('pending', 'failed')
        AND d.id IN (SELECT x.id FROM webhook_deliveries x WHERE x.id = ANY(${col((o) => o.id)}::text[]) ORDER BY
          x.seq FOR UPDATE)
      RETURNING d.id
    ), s AS (
      SELECT * FROM unnest(${sql.val(endpointIds)}::text[], ${sql.val(changes)}::text[]) AS s(id, change)
    ), streaks AS (
      UPDATE webhook_endpoints w
      SET failing_since = CASE s.change WHEN 'ok' THEN NULL WHEN 'restart' THEN ${recordNow('w')} ELSE
        COALESCE(w.failing_since, ${recordNow('w')}) END
      FROM s
      WHERE w.id = s.id AND w.id IN (
        SELECT x.id FROM webhook_endpoints x JOIN s AS sx ON sx.id = x.id
        WHERE sx.change <> 'ok' OR x.failing_since IS NOT NULL
        ORDER BY x.id FOR UPDATE OF x
      )
      RETURNING w.id, w.merchant_id, w.environment, w.status, w.failing_since, ${recordNow('w')} AS now, s.change
    )
    SELECT 'record' AS kind, id, NULL::text AS merchant_id, NULL::text AS environment, NULL::text AS status,
      NULL::timestamptz AS failing_since, NULL::timestamptz AS now, NULL::text AS change FROM recorded
    UNION ALL
    SELECT 'endpoint', id, merchant_id, environment, status, failing_since, now, change FROM streaks
  `.execute(db);
  const recorded = new Set<string>();
  const endpoints: EndpointAfter[] = [];
  for (const r of rows) {
    if (r.kind === 'record') recorded.add(r.id);
    else {
      endpoints.push({
        id: r.id,
        merchant_id: r.merchant_id!,
        environment: r.environment!,
        status: r.status!,
        failing_since: r.failing_since === null ? null : asDate(r.failing_since),
        now: asDate(r.now!),
        change: r.change!,
      });
    }
  }
  return { recorded, endpoints };
}
