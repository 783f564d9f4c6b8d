/**
 * Merchant conversions (docs/exchange.md "Merchant conversions"): the merchant converts between
 * its own prepaid balances, priced at execution by the same rules and rate service as member
 * exchange, on the pairs the catalogue marks `merchant_conversion`. A `quote_id` is refused with
 * `quote_lock_unsupported` (this endpoint prices at execution; the reference's code table).
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError, type ErrorCode } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import {
  conversionBuyLines,
  conversionSellLines,
  formatAmount,
  parseAmount,
  conversionEntryKinds,
  rowReference,
} from '../../money/index.js';
import type { RateOutcome } from '../../upstreams/rates/port.js';
import { getAsset } from '../assets/index.js';
import { findDirection, insertConversion, limitsOf } from './queries.js';
import { conversionReferenceType, limitBreach } from './rules.js';
import { priceAtDirection, usableMid } from './pricing.js';
import { sidesOf } from './requests.js';
import { postSellThenBuy } from './service.js';
import type { MerchantScope } from '../../platform/caller.js';

export const conversionErrors = {
  create: [
    'invalid_request',
    'quote_lock_unsupported',
    'asset_not_allowed',
    'service_unavailable',
    'amount_out_of_range',
    'merchant_insufficient_funds',
  ],
} as const satisfies Record<string, readonly ErrorCode[]>;

/** A conversion to write: the merchant, its body, and the rate asked for it before the write. */
export interface ConversionPlan {
  principal: MerchantScope;
  body: ConversionBody;
  rate: RateOutcome;
}

export interface ConversionBody {
  from_asset: string;
  to_asset: string;
  from_amount: string;
  quote_id?: unknown;
}

/** Before anything else: a quote id means the caller expects a lock this endpoint does not give. */
export function refuseQuoteId(body: { quote_id?: unknown }): void {
  if (body.quote_id !== undefined)
    throw new ApiError('quote_lock_unsupported', 'This endpoint prices at execution; remove quote_id.');
}

export async function createConversion(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  scope: MerchantScope,
  body: ConversionBody,
  rate: RateOutcome,
) {
  refuseQuoteId(body);
  const sides = sidesOf(body);
  const [a, b] = [await getAsset(trx, sides.from), await getAsset(trx, sides.to)];
  if (!a || !b) throw new ApiError('invalid_request', `Unknown asset ${!a ? sides.from : sides.to}.`);
  if (!a.enabled || !b.enabled) throw new ApiError('asset_not_allowed');
  const direction = await findDirection(trx, scope.environment, sides.from, sides.to);
  if (!direction || !direction.enabled || !direction.merchant_conversion)
    throw new ApiError('service_unavailable', `Conversion from ${sides.from} to ${sides.to} is not available.`);
  const amount = parseAmount(body.from_amount, a.scale, 'from_amount');
  if (amount <= 0n) throw new ApiError('invalid_request', 'from_amount must be greater than zero.');
  const now = await ctx.clock.now(trx, scope);
  const mid = usableMid(rate, now);
  const price = priceAtDirection(direction, amount, a.scale, b.scale, mid);
  if ('refusal' in price) throw new ApiError('amount_out_of_range', 'The amount is too small to convert.');
  const range = limitBreach(
    amount,
    { ...limitsOf(direction), memberDailyAmount: null, memberDailyCount: null },
    { amount: 0n, count: 0 },
  );
  if (range) throw new ApiError('amount_out_of_range');
  const feeAsset = price.feeSide === 'from' ? sides.from : sides.to;
  const row = await insertConversion(trx, {
    id: newId('cnv'),
    merchant_id: scope.merchantId,
    environment: scope.environment,
    direction_id: direction.id,
    status: 'completed',
    from_asset: sides.from,
    to_asset: sides.to,
    from_amount: amount.toString(),
    to_amount: price.toAmount.toString(),
    fee_amount: price.fee.toString(),
    fee_asset: feeAsset,
    rate: price.rate,
    created_at: now,
  });
  const money = {
    merchantId: scope.merchantId,
    fromAmount: amount,
    toAmount: price.toAmount,
    fee: price.fee,
    feeSide: price.feeSide,
  };
  await postSellThenBuy(
    trx,
    rowReference(row, conversionReferenceType),
    { kind: conversionEntryKinds.sell, asset: sides.from, lines: conversionSellLines(money) },
    { kind: conversionEntryKinds.buy, asset: sides.to, lines: conversionBuyLines(money) },
  );
  return {
    id: row.id,
    status: row.status,
    from_asset: row.from_asset,
    to_asset: row.to_asset,
    from_amount: formatAmount(amount, a.scale),
    to_amount: formatAmount(price.toAmount, b.scale),
    rate: price.rate,
    fee_amount: formatAmount(price.fee, price.feeSide === 'from' ? a.scale : b.scale),
    fee_asset: feeAsset,
    ledger_scale_from: a.scale,
    ledger_scale_to: b.scale,
    created_at: now.toISOString(),
  };
}
