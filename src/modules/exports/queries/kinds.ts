// Over 300 lines: the catalogue of export kinds, each kind's columns beside the statement that reads its rows.
import { sql, type Kysely } from 'kysely';
import type { Database, Environment } from '../../../db/schema.js';
import { inScope } from '../../../db/owned-by.js';
import { formatStored } from '../../../money/index.js';
import { isoOrNull } from '../../../platform/dates.js';
import { memberBalances } from '../../balances/index.js';
import { lineView, linesOf, publicEntryId, type EntryRow } from '../../ledger-entries/index.js';

/**
 * What each export kind writes (extensions 13, docs/exports.md): its columns, in order, and how
 * its rows are read in keyset batches of the merchant's rows by `seq` (oldest first), each batch
 * its own statement. Amounts are decimal strings at their asset's scale, times ISO 8601; the
 * column names are those of the object read through the API.
 */

export const exportKinds = [
  'deposits',
  'withdrawals',
  'remittances',
  'exchange_orders',
  'earn_orders',
  'qrpay_payments',
  'card_transactions',
  'ledger_entries',
  'member_balances',
] as const;
export type ExportKind = (typeof exportKinds)[number];

export type Cell = string | number | null;
export type Record_ = Record<string, Cell>;

export interface Window {
  merchantId: string;
  environment: Environment;
  createdGte: Date;
  createdLt: Date;
}

export interface KindSpec {
  columns: readonly string[];
  /** Rows after `after` (a seq, or for members an external id; undefined: from the first), at most `limit`, oldest
   * first; `seq` is the batch's cursor. */
  batch(
    db: Kysely<Database>,
    w: Window,
    after: string | undefined,
    limit: number,
  ): Promise<{ seq: string; records: Record_[] }>;
}

/**
 * An amount column: the minor units as text and the scale of its asset; a currency outside the
 * catalogue (a remittance payout) has 2 places, as the API prints it (`remittance/orders/queries#scaleOf`).
 */
const amount = (col: string, assetExpr: string, as: string) =>
  `${col}::text AS ${as}, COALESCE((SELECT s.scale FROM assets s WHERE s.code = ${assetExpr}), 2) AS ${as}__scale`;
const fmt = (r: Record<string, unknown>, as: string): string | null =>
  r[as] === null || r[as] === undefined ? null : formatStored(String(r[as]), Number(r[`${as}__scale`]));

interface TableKind {
  table: string;
  columns: readonly string[];
  /** The select list (the table is `t`). */
  select: string;
  record(r: Record<string, unknown>): Record_;
}

function tableKind(k: TableKind): KindSpec {
  return {
    columns: k.columns,
    async batch(db, w, after, limit) {
      const { rows } = await sql<Record<string, unknown>>`
        SELECT t.seq::text AS seq, ${sql.raw(k.select)} FROM ${sql.table(k.table)} t
        WHERE t.merchant_id = ${w.merchantId} AND t.environment = ${w.environment}
          AND t.created_at >= ${w.createdGte} AND t.created_at < ${w.createdLt}
          ${after === undefined ? sql`` : sql`AND t.seq > ${after}::bigint`}
        ORDER BY t.seq LIMIT ${limit}`.execute(db);
      return { seq: rows.length ? String(rows[rows.length - 1]!.seq) : (after ?? ''), records: rows.map(k.record) };
    },
  };
}

const text = (v: unknown): Cell => (v === null || v === undefined ? null : String(v));

const kinds: Record<ExportKind, KindSpec> = {
  deposits: tableKind({
    table: 'deposits',
    columns: ['id', 'member_id', 'asset', 'network', 'amount', 'tx_hash', 'status', 'created_at'],
    select:
      `t.id, t.member_id, t.asset, t.network, ${amount('t.amount', 't.asset', 'amount')}, t.tx_hash, t.status, ` +
      `t.created_at`,
    record: (r) => ({
      id: text(r.id),
      member_id: text(r.member_id),
      asset: text(r.asset),
      network: text(r.network),
      amount: fmt(r, 'amount'),
      tx_hash: text(r.tx_hash),
      status: text(r.status),
      created_at: isoOrNull(r.created_at as Date | string | null),
    }),
  }),
  withdrawals: tableKind({
    table: 'withdrawals',
    columns: ['id', 'member_id', 'asset', 'network', 'address', 'amount', 'fee', 'status', 'created_at', 'updated_at'],
    select:
      `t.id, t.member_id, t.asset, t.network, ` +
      `t.address, ${amount('t.amount', 't.asset', 'amount')}, ${amount('t.fee', 't.asset', 'fee')}, t.status, ` +
      `t.created_at, t.updated_at`,
    record: (r) => ({
      id: text(r.id),
      member_id: text(r.member_id),
      asset: text(r.asset),
      network: text(r.network),
      address: text(r.address),
      amount: fmt(r, 'amount'),
      fee: fmt(r, 'fee'),
      status: text(r.status),
      created_at: isoOrNull(r.created_at as Date | string | null),
      updated_at: isoOrNull(r.updated_at as Date | string | null),
    }),
  }),
  remittances: tableKind({
    table: 'remit_orders',
    columns: [
      'id',
      'member_id',
      'source_asset',
      'source_amount',
      'fee',
      'payout_currency',
      'payout_amount',
      'rate',
      'status',
      'created_at',
    ],
    select:
      `t.id, t.member_id, ` +
      `t.source_asset, ${amount('t.source_amount', 't.source_asset', 'source_amount')}, ` +
      `${amount('t.fee', 't.source_asset', 'fee')}, ` +
      (`t.payout_currency, ${amount('t.payout_amount', 't.payout_currency', 'payout_amount')}, t.rate, ` +
        `t.status, t.created_at`),
    record: (r) => ({
      id: text(r.id),
      member_id: text(r.member_id),
      source_asset: text(r.source_asset),
      source_amount: fmt(r, 'source_amount'),
      fee: fmt(r, 'fee'),
      payout_currency: text(r.payout_currency),
      payout_amount: fmt(r, 'payout_amount'),
      rate: text(r.rate),
      status: text(r.status),
      created_at: isoOrNull(r.created_at as Date | string | null),
    }),
  }),
  exchange_orders: tableKind({
    table: 'exchange_orders',
    columns: [
      'id',
      'member_id',
      'status',
      'from_asset',
      'to_asset',
      'from_amount',
      'to_amount',
      'fee_asset',
      'fee_amount',
      'rate',
      'created_at',
    ],
    select:
      `t.id, t.member_id, t.status, t.from_asset, ` +
      `t.to_asset, ${amount('t.from_amount', 't.from_asset', 'from_amount')}, ` +
      `${amount('t.to_amount', 't.to_asset', 'to_amount')}, ` +
      `t.fee_asset, ${amount('t.fee_amount', 't.fee_asset', 'fee_amount')}, t.rate, t.created_at`,
    record: (r) => ({
      id: text(r.id),
      member_id: text(r.member_id),
      status: text(r.status),
      from_asset: text(r.from_asset),
      to_asset: text(r.to_asset),
      from_amount: fmt(r, 'from_amount'),
      to_amount: fmt(r, 'to_amount'),
      fee_asset: text(r.fee_asset),
      fee_amount: fmt(r, 'fee_amount'),
      rate: text(r.rate),
      created_at: isoOrNull(r.created_at as Date | string | null),
    }),
  }),
  earn_orders: tableKind({
    table: 'earn_orders',
    columns: ['id', 'position_id', 'member_id', 'product_id', 'asset', 'type', 'amount', 'status', 'created_at'],
    select:
      `t.id, t.position_id, t.member_id, t.product_id, t.asset, ` +
      `t.type, ${amount('t.amount', 't.asset', 'amount')}, t.status, t.created_at`,
    record: (r) => ({
      id: text(r.id),
      position_id: text(r.position_id),
      member_id: text(r.member_id),
      product_id: text(r.product_id),
      asset: text(r.asset),
      type: text(r.type),
      amount: fmt(r, 'amount'),
      status: text(r.status),
      created_at: isoOrNull(r.created_at as Date | string | null),
    }),
  }),
  qrpay_payments: tableKind({
    table: 'qrpay_orders',
    columns: ['id', 'member_id', 'asset', 'amount', 'merchant_name', 'status', 'created_at'],
    select:
      `t.id, t.member_id, t.asset, ${amount('t.amount', 't.asset', 'amount')}, t.merchant_name, t.status, ` +
      `t.created_at`,
    record: (r) => ({
      id: text(r.id),
      member_id: text(r.member_id),
      asset: text(r.asset),
      amount: fmt(r, 'amount'),
      merchant_name: text(r.merchant_name),
      status: text(r.status),
      created_at: isoOrNull(r.created_at as Date | string | null),
    }),
  }),
  card_transactions: tableKind({
    table: 'card_transactions',
    columns: [
      'id',
      'card_id',
      'member_id',
      'type',
      'status',
      'amount',
      'currency',
      'merchant_name',
      'mcc',
      'created_at',
    ],
    select:
      `t.id, t.card_id, t.member_id, t.type, t.status, ${amount('t.amount', 't.currency', 'amount')}, ` +
      `t.currency, t.merchant_name, t.mcc, t.created_at`,
    record: (r) => ({
      id: text(r.id),
      card_id: text(r.card_id),
      member_id: text(r.member_id),
      type: text(r.type),
      status: text(r.status),
      amount: fmt(r, 'amount'),
      currency: text(r.currency),
      merchant_name: text(r.merchant_name),
      mcc: text(r.mcc),
      created_at: isoOrNull(r.created_at as Date | string | null),
    }),
  }),
  // One row per line (posting) of each entry: the entry's fields repeated on its lines.
  ledger_entries: {
    columns: [
      'entry_id',
      'created_at',
      'kind',
      'reference_object',
      'reference_id',
      'account_owner',
      'account_owner_id',
      'bucket',
      'asset',
      'debit',
      'credit',
    ],
    async batch(db, w, after, limit) {
      const { rows } = await sql<EntryRow & { seq: string }>`
        SELECT e.seq::text AS seq, e.id, e.created_at, e.kind, e.reference_type, e.reference_id, e.asset FROM
          journal_entries e
        WHERE e.merchant_id = ${w.merchantId} AND e.environment = ${w.environment} AND e.created_at >= ${w.createdGte}
          AND e.created_at < ${w.createdLt}
          ${after === undefined ? sql`` : sql`AND e.seq > ${after}::bigint`}
        ORDER BY e.seq LIMIT ${limit}`.execute(db);
      const byEntry = await linesOf(
        db,
        rows.map((r) => r.id),
      );
      const records = rows.flatMap((e) =>
        (byEntry.get(e.id) ?? []).map((l) => {
          const v = lineView(w.merchantId, e.asset, l);
          return {
            entry_id: publicEntryId(e.id),
            created_at: isoOrNull(e.created_at as Date | string | null),
            kind: e.kind,
            reference_object: e.reference_type,
            reference_id: e.reference_id,
            account_owner: v.account.owner,
            account_owner_id: v.account.owner_id,
            bucket: v.account.bucket,
            asset: v.asset,
            debit: v.debit,
            credit: v.credit,
          };
        }),
      );
      return { seq: rows.length ? rows[rows.length - 1]!.seq : (after ?? ''), records };
    },
  },
  // Each member's balances as of `created_lt` (GET /v1/balances?as_of=): one row per member and asset.
  member_balances: {
    columns: [
      'member_id',
      'external_member_id',
      'asset',
      'available',
      'frozen',
      'withdrawing',
      'earn',
      'card',
      'total',
      'as_of',
    ],
    async batch(db, w, after, limit) {
      // By external id: the unique (merchant_id, environment, external_member_id) index is the walk (migration 049).
      const members = await db
        .selectFrom('members')
        .select(['id', 'external_member_id'])
        .where(inScope(w))
        .$if(after !== undefined, (q) => q.where('external_member_id', '>', after!))
        .orderBy('external_member_id')
        .limit(Math.max(1, Math.floor(limit / 10)))
        .execute();
      const records: Record_[] = [];
      for (const m of members) {
        for (const b of await memberBalances(db, w.environment, m.id, w.createdLt)) {
          records.push({
            member_id: m.id,
            external_member_id: m.external_member_id,
            ...b,
            as_of: w.createdLt.toISOString(),
          });
        }
      }
      return { seq: members.length ? members[members.length - 1]!.external_member_id : (after ?? ''), records };
    },
  },
};

/** Whether a batch answered nothing more: the walk is over. */
export const exhausted = (after: string | undefined, seq: string): boolean => seq === '' || seq === after;

export function kindSpec(kind: ExportKind): KindSpec {
  return kinds[kind];
}
