import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/schema.js';
import { readRowsByKey } from '../../db/direct.js';

/** The statements and SQL expressions of the clock (platform/clock.ts): sandbox offsets. */

const sandboxOffsetsSql =
  'select "merchant_id", "offset_ms" from "sandbox_clocks" where "merchant_id" = any($1::text[])';

/**
 * A sandbox merchant's offset from real time in milliseconds (0 for a merchant never advanced).
 * Outside a transaction the reads of one turn of the event loop share a statement (`readRowsByKey`):
 * every provider call and rate a sandbox request asks reads its merchant's clock, as fresh as a
 * read of its own.
 */
export async function selectSandboxOffset(db: Db, merchantId: string): Promise<bigint> {
  const [row] = await readRowsByKey<{ merchant_id: string; offset_ms: string | bigint }>(
    db,
    sandboxOffsetsSql,
    [],
    merchantId,
    'merchant_id',
  );
  return row ? BigInt(row.offset_ms) : 0n;
}

/** The offsets of many sandbox merchants' clocks, by merchant (one never advanced has none). */
export async function selectSandboxOffsets(db: Db, merchantIds: readonly string[]): Promise<Map<string, bigint>> {
  const rows = await db
    .selectFrom('sandbox_clocks')
    .select(['merchant_id', 'offset_ms'])
    .where('merchant_id', '=', sql<string>`ANY(${[...new Set(merchantIds)]}::text[])`)
    .execute();
  return new Map(rows.map((r) => [r.merchant_id, BigInt(r.offset_ms)]));
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
