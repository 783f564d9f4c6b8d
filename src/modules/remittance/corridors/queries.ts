/**
 * The corridor catalogue's SQL: the reads of the payee and order paths, and the operator's list
 * and writes (checked by service.ts). A corridor is the four segments (country, currency, payment method, clearing
 * system as sent) in one environment, with its field contract per entity type, policy, fees and
 * limits.
 */
import { sql, type Transaction } from 'kysely';
import type { Database, Environment, Db } from '../../../db/schema.js';
import { minorFromDb } from '../../../money/index.js';
import type { FieldSpec } from './contracts.js';
import type { CorridorLimits, CorridorPolicy } from './rules.js';
import type { CorridorRow, EntityType, PaymentMethod } from './tables.js';

export type { Db } from '../../../db/schema.js';

export const entityTypes: readonly EntityType[] = ['INDIVIDUAL', 'COMPANY'];
export const paymentMethods: readonly PaymentMethod[] = ['LOCAL', 'SWIFT'];

export interface Corridor {
  id: string;
  environment: Environment;
  country: string;
  currency: string;
  paymentMethod: PaymentMethod;
  clearingSystem: string;
  enabled: boolean;
  contracts: Partial<Record<EntityType, FieldSpec[]>>;
  policy: CorridorPolicy;
  minKycLevel: number;
  feeBps: number;
  feeFixed: bigint;
  fxSpreadBps: number;
  limits: CorridorLimits;
}

const minorOrNull = (v: string | bigint | null) => (v === null ? null : minorFromDb(v));

export function corridorOf(row: CorridorRow): Corridor {
  return {
    id: row.id,
    environment: row.environment,
    country: row.country,
    currency: row.currency,
    paymentMethod: row.payment_method,
    clearingSystem: row.clearing_system,
    enabled: row.enabled,
    contracts: row.contracts,
    policy: {
      enabled: row.enabled,
      restrictedJurisdictions: row.restricted_jurisdictions,
      confirmableRoutingTypes: row.confirmable_routing_types,
    },
    minKycLevel: row.min_kyc_level,
    feeBps: row.fee_bps,
    feeFixed: minorFromDb(row.fee_fixed),
    fxSpreadBps: row.fx_spread_bps,
    limits: {
      payoutMin: minorFromDb(row.payout_min),
      memberSingleMax: minorOrNull(row.member_single_max),
      memberDailyMax: minorOrNull(row.member_daily_max),
      merchantSingleMax: minorOrNull(row.merchant_single_max),
      merchantDailyMax: minorOrNull(row.merchant_daily_max),
    },
  };
}

/** Entity types a corridor serves: those with a contract. */
export const servedEntityTypes = (c: Corridor): EntityType[] =>
  entityTypes.filter((e) => (c.contracts[e]?.length ?? 0) > 0);

export interface SegmentFilter {
  country?: string;
  currency?: string;
  paymentMethod?: string;
  clearingSystem?: string;
}

/** The corridors of an environment matching the given segments (all of them when none), in a stable order. */
export async function findCorridors(
  db: Db,
  environment: Environment,
  f: SegmentFilter,
  options: { enabledOnly?: boolean } = {},
): Promise<Corridor[]> {
  let q = db.selectFrom('remit_corridors').selectAll().where('environment', '=', environment);
  if (f.country !== undefined) q = q.where('country', '=', f.country);
  if (f.currency !== undefined) q = q.where('currency', '=', f.currency);
  if (f.paymentMethod !== undefined) q = q.where('payment_method', '=', f.paymentMethod as PaymentMethod);
  if (f.clearingSystem !== undefined) q = q.where('clearing_system', '=', f.clearingSystem);
  if (options.enabledOnly) q = q.where('enabled', '=', true);
  // Bounded: the catalogue is the operator's, a few hundred rows at most.
  const rows = await q
    .orderBy('country')
    .orderBy('currency')
    .orderBy('payment_method')
    .orderBy('clearing_system')
    .limit(1000)
    .execute();
  return rows.map(corridorOf);
}

export async function corridorById(db: Db, id: string): Promise<Corridor | undefined> {
  const row = await db.selectFrom('remit_corridors').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? corridorOf(row) : undefined;
}

/** Corridors by id (a batch of orders'), one statement. */
export async function corridorsByIds(db: Db, ids: readonly string[]): Promise<Map<string, Corridor>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('remit_corridors')
    .selectAll()
    .where('id', '=', sql<string>`ANY(${[...new Set(ids)]}::text[])`)
    .execute();
  return new Map(rows.map((r) => [r.id, corridorOf(r)]));
}

// ---------------------------------------------------------------------------------------------
// The operator's writes (service.ts)

/** Every corridor (of one environment, one country, when asked), for the operator's paged list. */
export function allCorridorsQuery(db: Db, filter: { environment?: Environment; country?: string }) {
  let q = db.selectFrom('remit_corridors').selectAll();
  if (filter.environment) q = q.where('environment', '=', filter.environment);
  if (filter.country) q = q.where('country', '=', filter.country);
  return q;
}

/**
 * A new corridor; undefined when one with the same four segments exists in the environment.
 * `values` are the table's columns, the settings as the service built them.
 */
export function insertCorridor(
  trx: Transaction<Database>,
  values: Record<string, unknown>,
): Promise<CorridorRow | undefined> {
  return trx
    .insertInto('remit_corridors')
    .values(values as never)
    .onConflict((oc) =>
      oc.columns(['environment', 'country', 'currency', 'payment_method', 'clearing_system']).doNothing(),
    )
    .returningAll()
    .executeTakeFirst();
}

/** Changes a corridor's settings (`cols`: the columns the service built), stamped now. */
export function updateCorridorRow(
  trx: Transaction<Database>,
  id: string,
  cols: Record<string, unknown>,
): Promise<CorridorRow> {
  return trx
    .updateTable('remit_corridors')
    .set({ ...cols, updated_at: sql<Date>`now()` } as never)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
