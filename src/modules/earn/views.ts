/** Earn's answers: a product, an order and a position (an order seen as the member's holding). */
import { formatStored } from '../../money/index.js';
import { isoOrNull } from '../../platform/dates.js';
import type { Db } from '../../db/schema.js';
import { scaleOf } from './queries.js';
import { aprText } from './rules.js';
import type { EarnOrderRow, EarnProductRow } from './tables.js';

export function productView(p: EarnProductRow, scale: number) {
  return {
    id: p.id,
    asset: p.asset,
    type: p.type,
    term_days: p.term_days,
    apr: aprText(p.apr_bps),
    min_amount: formatStored(p.min_amount, scale),
    max_amount: p.max_amount === null ? null : formatStored(p.max_amount, scale),
    enabled: p.enabled,
  };
}

export function orderView(o: EarnOrderRow, scale: number) {
  return {
    id: o.id,
    position_id: o.position_id,
    product_id: o.product_id,
    asset: o.asset,
    type: o.type,
    term_days: o.term_days,
    apr: aprText(o.apr_bps),
    amount: formatStored(o.amount, scale),
    status: o.status,
    status_version: o.status_version,
    interest_accrued: formatStored(o.accrued, scale),
    interest_paid: formatStored(o.interest_paid, scale),
    started_at: isoOrNull(o.started_at)!,
    matures_at: isoOrNull(o.matures_at),
    settled_at: isoOrNull(o.settled_at),
    redeemed_at: isoOrNull(o.redeemed_at),
    created_at: isoOrNull(o.created_at)!,
  };
}

export function positionView(o: EarnOrderRow, scale: number) {
  return {
    id: o.position_id,
    order_id: o.id,
    product_id: o.product_id,
    asset: o.asset,
    type: o.type,
    principal: formatStored(o.amount, scale),
    interest_accrued: formatStored(o.accrued, scale),
    interest_paid: formatStored(o.interest_paid, scale),
    status: o.status === 'active' ? 'active' : 'closed',
    redeemable: o.status === 'active' && o.type === 'flexible',
    started_at: isoOrNull(o.started_at)!,
    matures_at: isoOrNull(o.matures_at),
    next_accrual_at: isoOrNull(o.next_accrual_at),
  };
}

export const viewOrder = async (db: Db, o: EarnOrderRow) => orderView(o, await scaleOf(db, o.asset));
export const viewPosition = async (db: Db, o: EarnOrderRow) => positionView(o, await scaleOf(db, o.asset));
