/**
 * The exchange directions catalogue (operator API, docs/exchange.md "Directions"): per environment
 * and ordered pair, whether it is enabled, its minimum KYC level, fee (side, basis points, fixed),
 * spread, amount range, member's daily amount and count, quote lock window, step-up threshold,
 * and whether it is also a merchant conversion pair. Amounts are decimal strings at the
 * from-asset's scale (the fixed fee at the fee asset's), stored in minor units; null: no limit.
 */
import type { Transaction } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import { ApiError, positiveAmount } from '../../platform/errors.js';
import { type PageParams } from '../../platform/routes/pagination.js';
import { keysetPage, viewPage } from '../../db/keyset-page.js';
import { formatStored, minorFromDb, parseAmount } from '../../money/index.js';
import {
  allDirectionsQuery,
  assetExists,
  directionById,
  directionsQuery,
  findDirection,
  insertDirection,
  scaleOf,
  updateDirectionRow,
  type Db,
} from './queries.js';
import { getAsset } from '../assets/index.js';
import type { DirectionRow, FeeSide } from './tables.js';

export interface DirectionSettings {
  enabled?: boolean;
  min_kyc_level?: number;
  fee_side?: FeeSide;
  fee_bps?: number;
  fee_fixed?: string;
  spread_bps?: number;
  min_amount?: string;
  max_amount?: string | null;
  member_daily_amount?: string | null;
  member_daily_count?: number | null;
  quote_lock_seconds?: number;
  step_up_threshold?: string | null;
  merchant_conversion?: boolean;
}

const opt = (v: string | bigint | null, scale: number): string | null => (v === null ? null : formatStored(v, scale));

export async function directionView(db: Db, d: DirectionRow) {
  const fromScale = await scaleOf(db, d.from_asset);
  const feeScale = d.fee_side === 'from' ? fromScale : await scaleOf(db, d.to_asset);
  return {
    id: d.id,
    environment: d.environment,
    from_asset: d.from_asset,
    to_asset: d.to_asset,
    enabled: d.enabled,
    min_kyc_level: d.min_kyc_level,
    fee_side: d.fee_side,
    fee_asset: d.fee_side === 'from' ? d.from_asset : d.to_asset,
    fee_bps: d.fee_bps,
    fee_fixed: formatStored(d.fee_fixed, feeScale),
    spread_bps: d.spread_bps,
    min_amount: formatStored(d.min_amount, fromScale),
    max_amount: opt(d.max_amount, fromScale),
    member_daily_amount: opt(d.member_daily_amount, fromScale),
    member_daily_count: d.member_daily_count,
    quote_lock_seconds: d.quote_lock_seconds,
    step_up_threshold: opt(d.step_up_threshold, fromScale),
    merchant_conversion: d.merchant_conversion,
  };
}

async function columnsOf(db: Db, from: string, to: string, feeSide: FeeSide, s: DirectionSettings) {
  const fromScale = await scaleOf(db, from);
  const feeScale = feeSide === 'from' ? fromScale : await scaleOf(db, to);
  const amount = (v: string | null | undefined, field: string) =>
    v === undefined
      ? undefined
      : v === null
        ? null
        : positiveAmount(parseAmount(v, fromScale, field), field).toString();
  return {
    ...(s.enabled !== undefined ? { enabled: s.enabled } : {}),
    ...(s.min_kyc_level !== undefined ? { min_kyc_level: s.min_kyc_level } : {}),
    ...(s.fee_side !== undefined ? { fee_side: s.fee_side } : {}),
    ...(s.fee_bps !== undefined ? { fee_bps: s.fee_bps } : {}),
    ...(s.fee_fixed !== undefined ? { fee_fixed: parseAmount(s.fee_fixed, feeScale, 'fee_fixed').toString() } : {}),
    ...(s.spread_bps !== undefined ? { spread_bps: s.spread_bps } : {}),
    ...(s.min_amount !== undefined ? { min_amount: amount(s.min_amount, 'min_amount')! } : {}),
    ...(s.max_amount !== undefined ? { max_amount: amount(s.max_amount, 'max_amount') } : {}),
    ...(s.member_daily_amount !== undefined
      ? { member_daily_amount: amount(s.member_daily_amount, 'member_daily_amount') }
      : {}),
    ...(s.member_daily_count !== undefined ? { member_daily_count: s.member_daily_count } : {}),
    ...(s.quote_lock_seconds !== undefined ? { quote_lock_seconds: s.quote_lock_seconds } : {}),
    ...(s.step_up_threshold !== undefined
      ? {
          step_up_threshold:
            s.step_up_threshold === null
              ? null
              : parseAmount(s.step_up_threshold, fromScale, 'step_up_threshold').toString(),
        }
      : {}),
    ...(s.merchant_conversion !== undefined ? { merchant_conversion: s.merchant_conversion } : {}),
  };
}

export async function listDirections(db: Db, query: PageParams & { environment?: Environment }) {
  return viewPage(await keysetPage(allDirectionsQuery(db, query.environment), query), (row) => directionView(db, row));
}

export async function getDirection(db: Db, id: string) {
  const d = await directionById(db, id);
  if (!d) throw new ApiError('not_found', 'No such exchange direction.');
  return directionView(db, d);
}

export async function createDirection(
  trx: Transaction<Database>,
  body: DirectionSettings & {
    environment: Environment;
    from_asset: string;
    to_asset: string;
    fee_side: FeeSide;
    min_amount: string;
  },
  now: Date,
) {
  const from = body.from_asset.toUpperCase();
  const to = body.to_asset.toUpperCase();
  if (from === to)
    throw new ApiError('invalid_fields', 'to_asset must differ from from_asset.', {
      fields: [{ key: 'to_asset', reason: 'same_as_from' }],
    });
  for (const code of [from, to]) {
    if (!(await assetExists(trx, code))) {
      throw new ApiError('invalid_fields', `Unknown asset ${code}.`, {
        fields: [{ key: code === from ? 'from_asset' : 'to_asset', reason: 'unknown_asset' }],
      });
    }
  }
  if (await findDirection(trx, body.environment, from, to))
    throw new ApiError('duplicate_resource', 'That direction exists; change it with PATCH.');
  const cols = await columnsOf(trx, from, to, body.fee_side, body);
  const row = await insertDirection(trx, {
    id: `exd_${body.environment === 'sandbox' ? 's' : 'p'}_${from.toLowerCase()}_${to.toLowerCase()}`,
    environment: body.environment,
    from_asset: from,
    to_asset: to,
    min_kyc_level: 1,
    fee_side: body.fee_side,
    fee_bps: 0,
    fee_fixed: '0',
    spread_bps: 0,
    min_amount: '1',
    quote_lock_seconds: 60,
    ...cols,
    updated_at: now,
  });
  refuseEmptyRange(row);
  return directionView(trx, row);
}

/**
 * A range no amount fits (`max_amount` below `min_amount`, either changed alone) would refuse every
 * order of the direction: refused, in the transaction that would have stored it.
 */
function refuseEmptyRange(row: Pick<DirectionRow, 'min_amount' | 'max_amount'>): void {
  if (row.max_amount !== null && minorFromDb(row.max_amount) < minorFromDb(row.min_amount)) {
    throw new ApiError('invalid_fields', 'max_amount is below min_amount: no order would fit.', {
      fields: [{ key: 'max_amount', reason: 'below_min_amount' }],
    });
  }
}

export async function updateDirection(trx: Transaction<Database>, id: string, body: DirectionSettings, now: Date) {
  const d = await directionById(trx, id);
  if (!d) throw new ApiError('not_found', 'No such exchange direction.');
  // The fixed fee is stored in minor units of the fee asset: moved to the other side, the stored
  // number would be read in the other asset at its scale (0.5 USDT became 5000.00 EUR). A non-zero
  // fixed fee must be restated in the new fee asset with the move.
  if (
    body.fee_side !== undefined &&
    body.fee_side !== d.fee_side &&
    body.fee_fixed === undefined &&
    minorFromDb(d.fee_fixed) !== 0n
  ) {
    throw new ApiError(
      'invalid_fields',
      'Moving the fee to the other side needs fee_fixed restated in the new fee asset.',
      {
        fields: [{ key: 'fee_fixed', reason: 'required_with_fee_side' }],
      },
    );
  }
  const cols = await columnsOf(trx, d.from_asset, d.to_asset, body.fee_side ?? d.fee_side, body);
  const row = await updateDirectionRow(trx, d.id, { ...cols, updated_at: now });
  refuseEmptyRange(row);
  return directionView(trx, row);
}

/**
 * The merchant conversion pairs (`GET /v1/merchant/conversion-pairs`): enabled directions marked
 * for conversion whose two assets are enabled (a disabled asset's pair would only answer
 * `asset_not_allowed`).
 */
export async function conversionPairs(db: Db, environment: Environment) {
  const rows = await directionsQuery(db, environment)
    .where('enabled', '=', true)
    .where('merchant_conversion', '=', true)
    .orderBy('seq')
    .execute();
  const data = [];
  for (const d of rows) {
    const [from, to] = [await getAsset(db, d.from_asset), await getAsset(db, d.to_asset)];
    if (!from?.enabled || !to?.enabled) continue;
    const v = await directionView(db, d);
    data.push({
      from_asset: v.from_asset,
      to_asset: v.to_asset,
      fee_asset: v.fee_asset,
      fee_bps: v.fee_bps,
      fee_fixed: v.fee_fixed,
      min_amount: v.min_amount,
      max_amount: v.max_amount,
      ledger_scale_from: await scaleOf(db, d.from_asset),
      ledger_scale_to: await scaleOf(db, d.to_asset),
    });
  }
  return data;
}
