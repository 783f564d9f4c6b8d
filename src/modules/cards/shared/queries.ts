import { sql, type Kysely, type SelectQueryBuilder, type Transaction } from 'kysely';
import type { Database, Environment } from '../../../db/schema.js';
import type { CardApplicationRow } from '../applications/tables.js';
import type { CardProductRow } from '../products/tables.js';
import type { CardRow } from '../cards/tables.js';

export type Db = Kysely<Database> | Transaction<Database>;

/** Who asks: the merchant, and the member when the call is on its behalf. */
export interface CardCaller {
  merchantId: string;
  environment: Environment;
  memberId?: string;
}

export interface MemberCardCaller extends CardCaller {
  memberId: string;
}

export const productId = (seq: string | bigint): string => `cpd_${seq}`;

/** `cpd_<number>` (or the bare number) as the product's seq, or undefined. */
export function productSeqOf(id: string): string | undefined {
  const m = /^(?:cpd_)?([1-9][0-9]{0,17})$/.exec(id);
  return m?.[1];
}

export async function productBySeq(db: Db, environment: Environment, seq: string): Promise<CardProductRow | undefined> {
  return db.selectFrom('card_products').selectAll().where('seq', '=', seq).where('environment', '=', environment).executeTakeFirst();
}

/** The BINs a merchant may issue; empty means all (the reference: no authorisation rows, all BINs allowed). */
export async function authorisedBins(db: Db, merchantId: string, environment: Environment): Promise<string[]> {
  const rows = await db.selectFrom('card_bin_authorizations').select('bin').where('merchant_id', '=', merchantId).where('environment', '=', environment).execute();
  return rows.map((r) => r.bin);
}

export function binAllowed(bins: readonly string[], bin: string): boolean {
  return bins.length === 0 || bins.includes(bin);
}

/** Enabled products the merchant may issue, in catalogue order. */
export async function productsFor(db: Db, merchantId: string, environment: Environment): Promise<CardProductRow[]> {
  const bins = await authorisedBins(db, merchantId, environment);
  const rows = await db.selectFrom('card_products').selectAll().where('environment', '=', environment).where('enabled', '=', true).orderBy('seq').execute();
  return rows.filter((r) => binAllowed(bins, r.bin));
}

/** Accepts `<prefix>_<uuid>` or the bare uuid (the prefix is optional in paths). */
export function withIdPrefix(prefix: string, id: string): string {
  return id.startsWith(`${prefix}_`) ? id : `${prefix}_${id}`;
}

export async function findApplication(db: Db, caller: CardCaller, id: string, forUpdate = false): Promise<CardApplicationRow | undefined> {
  let q = db.selectFrom('card_applications').selectAll()
    .where('id', '=', withIdPrefix('cap', id)).where('merchant_id', '=', caller.merchantId).where('environment', '=', caller.environment);
  if (caller.memberId) q = q.where('member_id', '=', caller.memberId);
  return forUpdate ? q.forNoKeyUpdate().executeTakeFirst() : q.executeTakeFirst();
}

export async function findCard(db: Db, caller: CardCaller, id: string, forUpdate = false): Promise<CardRow | undefined> {
  let q = db.selectFrom('cards').selectAll()
    .where('id', '=', withIdPrefix('crd', id)).where('merchant_id', '=', caller.merchantId).where('environment', '=', caller.environment);
  if (caller.memberId) q = q.where('member_id', '=', caller.memberId);
  return forUpdate ? q.forNoKeyUpdate().executeTakeFirst() : q.executeTakeFirst();
}

export function cardsQuery(db: Db, caller: MemberCardCaller) {
  return db.selectFrom('cards').selectAll()
    .where('merchant_id', '=', caller.merchantId).where('environment', '=', caller.environment).where('member_id', '=', caller.memberId);
}

export async function externalIdOf(db: Db, memberId: string): Promise<string> {
  const row = await db.selectFrom('members').select('external_member_id').where('id', '=', memberId).executeTakeFirstOrThrow();
  return row.external_member_id;
}

export async function scaleOf(db: Db, code: string): Promise<number> {
  const row = await db.selectFrom('assets').select('scale').where('code', '=', code).executeTakeFirstOrThrow();
  return row.scale;
}

/** Scopes a card ticker looks at per tick (a bound). */
const scopesPerTickMax = 200;

/** Due work of the card tickers: its scope and `ahead`, its due time less its scope's own now (≤ 0). */
export type DueWork = SelectQueryBuilder<Database, any, { merchant_id: string; environment: Environment; ahead: Date }>;

/**
 * The scopes of `due`, the longest overdue first, at most `scopesPerTickMax`: a bound over scopes
 * merely waiting, or over due ones in no order while more than the bound stay due, could leave due
 * ones out tick after tick.
 */
export function longestOverdueScopes(db: Kysely<Database>, due: DueWork) {
  return db.selectFrom(due.as('due')).select(['due.merchant_id', 'due.environment'])
    .groupBy(['due.merchant_id', 'due.environment']).orderBy(sql`min(due.ahead)`).limit(scopesPerTickMax).execute();
}
