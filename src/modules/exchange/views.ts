/** The answers of member exchange: an exchange order and a quote, their amounts at their assets' scales. */
import { formatAmount, formatStored } from '../../money/index.js';
import { isoOrNull } from '../../platform/dates.js';
import { scaleOf, type Db } from './queries.js';
import type { Priced } from './pricing.js';
import type { ExchangeOrderRow } from './tables.js';

export function orderView(row: ExchangeOrderRow, fromScale: number, toScale: number) {
  const feeScale = row.fee_asset === row.from_asset ? fromScale : toScale;
  return {
    id: row.id,
    type: row.kind,
    status: row.status,
    status_version: row.status_version,
    from_asset: row.from_asset,
    to_asset: row.to_asset,
    from_amount: formatStored(row.from_amount, fromScale),
    to_amount: formatStored(row.to_amount, toScale),
    rate: row.rate,
    fee_amount: formatStored(row.fee_amount, feeScale),
    fee_asset: row.fee_asset,
    ledger_scale_from: fromScale,
    ledger_scale_to: toScale,
    quote_expires_at: isoOrNull(row.quote_expires_at),
    executed_at: isoOrNull(row.executed_at),
    expired_at: isoOrNull(row.expired_at),
    created_at: isoOrNull(row.created_at)!,
  };
}

export async function viewOf(db: Db, row: ExchangeOrderRow) {
  return orderView(row, await scaleOf(db, row.from_asset), await scaleOf(db, row.to_asset));
}

export function quoteView(p: Priced, sides: { from: string; to: string }, lock?: { id: string; expiresAt: Date }) {
  const feeAsset = p.price.feeSide === 'from' ? sides.from : sides.to;
  return {
    from_asset: sides.from,
    to_asset: sides.to,
    from_amount: formatAmount(p.amount, p.fromScale),
    to_amount: formatAmount(p.price.toAmount, p.toScale),
    rate: p.price.rate,
    fee_amount: formatAmount(p.price.fee, p.price.feeSide === 'from' ? p.fromScale : p.toScale),
    fee_asset: feeAsset,
    ...(lock ? { quote_id: lock.id, quote_expires_at: lock.expiresAt.toISOString() } : {}),
    quote_ttl_sec: p.direction.quote_lock_seconds,
    ledger_scale_from: p.fromScale,
    ledger_scale_to: p.toScale,
  };
}
