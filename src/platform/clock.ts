import { sql, type RawBuilder } from 'kysely';
import type { Database, Environment, Db } from '../db/schema.js';

/** Whose time a rule runs on: each sandbox merchant has a clock of its own (extensions 8). */
export interface ClockScope {
  merchantId: string;
  environment: Environment;
}

/**
 * The one clock every time-dependent rule reads (ticket and challenge expiry, quote expiry,
 * locks, accrual, executors, retries). Production runs on real time; in the sandbox a merchant's
 * time is real time plus the offset its `POST /v1/sandbox/clock/advance` calls have added, so it
 * only moves forward. The offset lives in the database, so every process sees the same time.
 * The request-security windows (token expiry, `x-timestamp`, nonces, rate limits, idempotency)
 * never read this clock: they stay on real time (`ServiceContext.requestClock`).
 */
export interface Clock {
  /** Real time. */
  real(): Date;
  /** The scope's time, read in the caller's transaction when one is given. */
  now(db: Db, scope: ClockScope): Promise<Date>;
  /** The scope's offset from real time in milliseconds (0 in production and for a merchant never advanced). */
  offsetMs(db: Db, scope: ClockScope): Promise<bigint>;
}

export function createClock(realNow: () => number = Date.now): Clock {
  const clock: Clock = {
    real: () => new Date(realNow()),
    async offsetMs(db, scope) {
      if (scope.environment !== 'sandbox') return 0n;
      const row = await db
        .selectFrom('sandbox_clocks')
        .select('offset_ms')
        .where('merchant_id', '=', scope.merchantId)
        .executeTakeFirst();
      return row ? BigInt(row.offset_ms) : 0n;
    },
    async now(db, scope) {
      const offset = await clock.offsetMs(db, scope);
      return new Date(realNow() + Number(offset));
    },
  };
  return clock;
}

/** Moves a sandbox merchant's clock forward by `ms` (never back) and answers the new offset. */
export async function addSandboxOffset(db: Db, merchantId: string, ms: bigint): Promise<bigint> {
  if (ms < 0n) throw new RangeError('the sandbox clock only moves forward');
  const { rows } = await sql<{ offset_ms: string }>`
    INSERT INTO sandbox_clocks (merchant_id, offset_ms) VALUES (${merchantId}, ${ms.toString()})
    ON CONFLICT (merchant_id) DO UPDATE SET offset_ms = sandbox_clocks.offset_ms + excluded.offset_ms, updated_at =
      now()
    RETURNING offset_ms
  `.execute(db);
  return BigInt(rows[0]!.offset_ms);
}

/**
 * Raises a sandbox merchant's offset to at least `ms` (never lowers it): the advance steps the
 * clock to each due time with it. Answers the offset in force.
 */
export async function raiseSandboxOffset(db: Db, merchantId: string, ms: bigint): Promise<bigint> {
  if (ms < 0n) throw new RangeError('the sandbox clock only moves forward');
  const { rows } = await sql<{ offset_ms: string }>`
    INSERT INTO sandbox_clocks (merchant_id, offset_ms) VALUES (${merchantId}, ${ms.toString()})
    ON CONFLICT (merchant_id) DO UPDATE SET offset_ms = GREATEST(sandbox_clocks.offset_ms, excluded.offset_ms),
      updated_at = now()
    RETURNING offset_ms
  `.execute(db);
  return BigInt(rows[0]!.offset_ms);
}

/**
 * The scope's time as a SQL expression, for statements that compare or compute on the database's
 * side (`expires_at > ${scopeNowSql(...)}`): the database's `now()` plus the merchant's sandbox
 * offset. Pass values, or column references (`sql.ref('d.merchant_id')`) to read each row's own
 * merchant's time in a statement over many merchants. A reference must name its table: a bare
 * `merchant_id` would mean the subquery's own `sandbox_clocks.merchant_id`.
 */
export function scopeNowSql(
  merchantId: string | RawBuilder<unknown>,
  environment: string | RawBuilder<unknown>,
): RawBuilder<Date> {
  return scopeTimeSql(sql`now()`, merchantId, environment);
}

/**
 * `scopeNowSql` read when the statement reaches it (`clock_timestamp()`), not when the
 * transaction began: for a time that must follow whatever the transaction waited for before it
 * (a lock).
 */
export function scopeClockSql(
  merchantId: string | RawBuilder<unknown>,
  environment: string | RawBuilder<unknown>,
): RawBuilder<Date> {
  return scopeTimeSql(sql`clock_timestamp()`, merchantId, environment);
}

function scopeTimeSql(
  base: RawBuilder<unknown>,
  merchantId: string | RawBuilder<unknown>,
  environment: string | RawBuilder<unknown>,
): RawBuilder<Date> {
  const m = typeof merchantId === 'string' ? sql.val(merchantId) : merchantId;
  const e = typeof environment === 'string' ? sql.val(environment) : environment;
  return sql<Date>`(${base} + COALESCE((SELECT sc.offset_ms FROM sandbox_clocks sc WHERE sc.merchant_id = ${m}::text
    AND ${e}::text = 'sandbox'), 0) * interval '1 millisecond')`;
}
