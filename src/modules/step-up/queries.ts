import { sql, type Transaction } from 'kysely';
import type { Database, Environment, Db } from '../../db/schema.js';
import { inScope } from '../../db/owned-by.js';
import { inRows } from '../../db/in-rows.js';
import { minorFromDb } from '../../money/index.js';

export interface ThresholdScope {
  merchantId: string;
  environment: Environment;
}

export interface Threshold {
  action: string;
  asset: string;
  minAmount: bigint;
}

/** The amount (minor units) at or above which `action` on `asset` needs step-up; undefined: never. */
export async function findThreshold(
  db: Db,
  scope: ThresholdScope,
  action: string,
  asset: string,
): Promise<bigint | undefined> {
  const row = await db
    .selectFrom('step_up_thresholds')
    .select('min_amount')
    .where(inScope(scope))
    .where('action', '=', action)
    .where('asset', '=', asset)
    .executeTakeFirst();
  return row ? minorFromDb(row.min_amount) : undefined;
}

/**
 * `findThreshold` for many (scope, action, asset) at once, keyed `merchant|environment|action|asset`;
 * one statement.
 */
export async function findThresholds(
  db: Db,
  demands: readonly (ThresholdScope & { action: string; asset: string })[],
): Promise<Map<string, bigint>> {
  if (demands.length === 0) return new Map();
  const rows = await db
    .selectFrom('step_up_thresholds')
    .select(['merchant_id', 'environment', 'action', 'asset', 'min_amount'])
    .where(
      inRows(
        ['merchant_id', 'environment', 'action', 'asset'],
        demands.map((d) => [d.merchantId, d.environment, d.action, d.asset]),
      ),
    )
    .execute();
  return new Map(
    rows.map((r) => [thresholdKey(r.merchant_id, r.environment, r.action, r.asset), minorFromDb(r.min_amount)]),
  );
}

export const thresholdKey = (merchantId: string, environment: string, action: string, asset: string) =>
  `${merchantId}|${environment}|${action}|${asset}`;

/** A merchant's thresholds in one environment, by action then asset (a bounded list: actions × assets). */
export async function listThresholds(db: Db, scope: ThresholdScope): Promise<Threshold[]> {
  const rows = await db
    .selectFrom('step_up_thresholds')
    .select(['action', 'asset', 'min_amount'])
    .where(inScope(scope))
    .orderBy('action')
    .orderBy('asset')
    .execute();
  return rows.map((r) => ({ action: r.action, asset: r.asset, minAmount: minorFromDb(r.min_amount) }));
}

/** Sets (`minAmount` given) or removes (null) one threshold. */
export async function putThreshold(
  trx: Transaction<Database>,
  scope: ThresholdScope,
  action: string,
  asset: string,
  minAmount: bigint | null,
): Promise<void> {
  const key = { merchant_id: scope.merchantId, environment: scope.environment, action, asset };
  if (minAmount === null) {
    await trx
      .deleteFrom('step_up_thresholds')
      .where((eb) => eb.and(key))
      .execute();
    return;
  }
  await trx
    .insertInto('step_up_thresholds')
    .values({ ...key, min_amount: minAmount.toString() })
    .onConflict((oc) =>
      oc
        .columns(['merchant_id', 'environment', 'action', 'asset'])
        .doUpdateSet({ min_amount: minAmount.toString(), updated_at: sql<Date>`now()` }),
    )
    .execute();
}

/** Consumes a completed challenge: `completed` → `used`, once (the row is locked by the caller). */
export async function markChallengeUsed(trx: Transaction<Database>, id: string, now: Date): Promise<boolean> {
  const row = await trx
    .updateTable('hosted_tickets')
    .set({ status: 'used', used_at: now })
    .where('id', '=', id)
    .where('status', '=', 'completed')
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** A step-up ticket's wrong codes so far. */
export async function setFailedAttempts(db: Db, ticketId: string, failedAttempts: number): Promise<void> {
  await db.updateTable('hosted_tickets').set({ failed_attempts: failedAttempts }).where('id', '=', ticketId).execute();
}
