import { inScope } from '../../../db/owned-by.js';
import type { Environment } from '../../../db/schema.js';
import type { Db } from '../shared/queries.js';
import type { CardProductRow } from './tables.js';

/** Reads of the card products and the merchant's BIN authorisations. */

export const productId = (seq: string | bigint): string => `cpd_${seq}`;

/** `cpd_<number>` (or the bare number) as the product's seq, or undefined. */
export function productSeqOf(id: string): string | undefined {
  const m = /^(?:cpd_)?([1-9][0-9]{0,17})$/.exec(id);
  return m?.[1];
}

export async function productBySeq(db: Db, environment: Environment, seq: string): Promise<CardProductRow | undefined> {
  return db
    .selectFrom('card_products')
    .selectAll()
    .where('seq', '=', seq)
    .where('environment', '=', environment)
    .executeTakeFirst();
}

/** The BINs a merchant may issue; empty means all (the reference: no authorisation rows, all BINs allowed). */
export async function authorisedBins(db: Db, merchantId: string, environment: Environment): Promise<string[]> {
  const rows = await db
    .selectFrom('card_bin_authorizations')
    .select('bin')
    .where(inScope({ merchantId, environment }))
    .execute();
  return rows.map((r) => r.bin);
}

export function binAllowed(bins: readonly string[], bin: string): boolean {
  return bins.length === 0 || bins.includes(bin);
}

/** Enabled products the merchant may issue, in catalogue order. */
export async function productsFor(db: Db, merchantId: string, environment: Environment): Promise<CardProductRow[]> {
  const bins = await authorisedBins(db, merchantId, environment);
  const rows = await db
    .selectFrom('card_products')
    .selectAll()
    .where('environment', '=', environment)
    .where('enabled', '=', true)
    .orderBy('seq')
    .execute();
  return rows.filter((r) => binAllowed(bins, r.bin));
}

/** A product by its seq alone (a card's own product). */
export function productRowBySeq(db: Db, seq: string): Promise<CardProductRow> {
  return db.selectFrom('card_products').selectAll().where('seq', '=', seq).executeTakeFirstOrThrow();
}

/** A product by its seq, locked for a change of its settings. */
export function lockProductBySeq(db: Db, seq: string): Promise<CardProductRow | undefined> {
  return db.selectFrom('card_products').selectAll().where('seq', '=', seq).forNoKeyUpdate().executeTakeFirst();
}

export function updateProductRow(db: Db, seq: string, set: Record<string, unknown>): Promise<CardProductRow> {
  return db.updateTable('card_products').set(set).where('seq', '=', seq).returningAll().executeTakeFirstOrThrow();
}

/** Every product (the operator's list), in catalogue order. */
export function allProducts(db: Db, environment: Environment | undefined): Promise<CardProductRow[]> {
  let q = db.selectFrom('card_products').selectAll().orderBy('seq');
  if (environment) q = q.where('environment', '=', environment);
  return q.execute();
}

export function binAuthorizationsOf(db: Db, merchantId: string, environment: Environment) {
  return db
    .selectFrom('card_bin_authorizations')
    .select(['bin', 'created_at'])
    .where(inScope({ merchantId, environment }))
    .orderBy('bin')
    .execute();
}

export async function authorizeBin(db: Db, merchantId: string, environment: Environment, bin: string): Promise<void> {
  await db
    .insertInto('card_bin_authorizations')
    .values({ merchant_id: merchantId, environment, bin })
    .onConflict((oc) => oc.columns(['merchant_id', 'environment', 'bin']).doNothing())
    .execute();
}

export async function withdrawBin(db: Db, merchantId: string, environment: Environment, bin: string): Promise<void> {
  await db
    .deleteFrom('card_bin_authorizations')
    .where(inScope({ merchantId, environment }))
    .where('bin', '=', bin)
    .execute();
}
