import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ClockScope } from '../../platform/clock.js';
import { scopeNowSql } from '../../platform/clock.js';
import type { ServiceContext } from '../../service-context.js';
import type { Ticker, TimedProcess } from '../../jobs/types.js';

/**
 * Retention (extensions 11, docs/events.md): an event is kept `EVENT_RETENTION_DAYS` on its
 * merchant's clock, then pruned with its delivery records (their attempts go with them, ON
 * DELETE CASCADE). Never an event a delivery still needs: one not yet fanned out, or with a
 * record `pending` or `failed` (retries to come) is kept until its records end `sent`, `dead` or
 * `no_subscriber`. A timed process (a sandbox merchant's advance runs it as its clock passes
 * the due time) and a ticker (production, and every merchant's own time) with the same claim.
 */

const day = 86_400_000;
/** Events pruned per statement; a run repeats while a batch comes back full. */
export const pruneBatchMax = 1_000;
/** Batches per ticker run and scope, so that one run stays short. */
const batchesPerRun = 20;

/** Nothing a delivery still needs (alias `e`). */
const prunableSql = sql<boolean>`e.webhook_dispatched_at IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status IN ('pending', 'failed'))`;

/**
 * Deletes one batch of prunable events matching `where` (over `events e`) and their records, in
 * one statement: the events claimed (SKIP LOCKED: another process takes the next ones), their
 * records deleted, then the events (the foreign key is checked at the statement's end). A record
 * queued again meanwhile is not deleted: its event then cannot go either, and the statement
 * fails, to be tried again at the next run, when the event is no longer prunable.
 */
async function pruneBatch(db: Kysely<Database>, where: RawBuilder<boolean>): Promise<number> {
  const result = await sql`
    WITH doomed AS (
      SELECT e.id FROM events e WHERE ${where} AND ${prunableSql}
      ORDER BY e.created_at LIMIT ${pruneBatchMax}
      FOR UPDATE SKIP LOCKED
    ), records AS (
      DELETE FROM webhook_deliveries d USING doomed WHERE d.event_id = doomed.id AND d.status NOT IN ('pending',
        'failed')
    )
    DELETE FROM events e USING doomed WHERE e.id = doomed.id
  `.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

const retentionMs = (ctx: { config: { eventRetentionDays: number } }) => ctx.config.eventRetentionDays * day;

/** The scope's prunable events created at or before `now - retention` (`now`: the scope's time). */
export async function pruneScope(
  ctx: ServiceContext,
  scope: ClockScope,
  now: Date,
  batches = Number.POSITIVE_INFINITY,
): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionMs(ctx));
  let pruned = 0;
  for (let i = 0; i < batches; i++) {
    // To the millisecond, as `nextDue` reads `created_at` (a Date): an event at 12.3456 s is due at
    // 12.345 s + the retention, and must go when the advance stops there.
    const n = await pruneBatch(
      ctx.db,
      sql<boolean>`e.merchant_id = ${scope.merchantId} AND e.environment = ${scope.environment}
      AND e.created_at < ${cutoff}::timestamptz + interval '1 millisecond'`,
    );
    pruned += n;
    if (n < pruneBatchMax) break;
  }
  return pruned;
}

export const eventRetentionProcess: TimedProcess = {
  name: 'events.retention',
  async nextDue(db, scope) {
    const row = await db
      .selectFrom('events as e')
      .select((eb) => eb.fn.min('e.created_at').as('at'))
      .where('e.merchant_id', '=', scope.merchantId)
      .where('e.environment', '=', scope.environment)
      .where(prunableSql)
      .executeTakeFirst();
    // The process has no context here: the retention is read when it runs; the due time uses the
    // configured days through `retentionDaysForDue`, set by the routes at start-up.
    // Rounded up to the next whole day (UTC): the events of one day go in one step of a sandbox
    // advance, not one step each (a year's advance otherwise doubled its steps). Kept "at least"
    // the retention, as extensions 11 says: at most a day longer.
    return row?.at
      ? new Date(Math.ceil((new Date(row.at as unknown as string).getTime() + retentionDaysForDue * day) / day) * day)
      : null;
  },
  async runDue(ctx, scope, now) {
    await pruneScope(ctx, scope, now);
  },
};

/**
 * The retention in days the timed process's `nextDue` answers with (it is given the database
 * only): the configuration's, recorded by `useRetention` when the service starts.
 */
let retentionDaysForDue = 30;
export function useRetention(days: number): void {
  retentionDaysForDue = days;
}

/**
 * The ticker: everything older than real time minus the retention (every merchant's time is at
 * least real time: sandbox offsets only grow), then each sandbox merchant whose clock was
 * advanced, on its own time.
 */
export const eventRetentionTicker: Ticker = {
  name: 'events.retention',
  intervalMs: 60_000,
  async run(ctx) {
    for (let i = 0; i < batchesPerRun; i++) {
      if (
        (await pruneBatch(
          ctx.db,
          sql<boolean>`e.created_at <= now() - ${retentionMs(ctx)} * interval '1 millisecond'`,
        )) < pruneBatchMax
      )
        break;
    }
    const advanced = await ctx.db
      .selectFrom('sandbox_clocks')
      .select('merchant_id')
      .where('offset_ms', '>', '0' as never)
      .execute();
    for (const { merchant_id } of advanced) {
      for (let i = 0; i < batchesPerRun; i++) {
        const where = sql<boolean>`e.merchant_id = ${merchant_id} AND e.environment = 'sandbox'
          AND e.created_at <= ${scopeNowSql(merchant_id, 'sandbox')} - ${retentionMs(ctx)} * interval '1 millisecond'`;
        if ((await pruneBatch(ctx.db, where)) < pruneBatchMax) break;
      }
    }
  },
};
