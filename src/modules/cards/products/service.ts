import type { Transaction } from 'kysely';
import type { Database, Environment } from '../../../db/schema.js';
import { ApiError } from '../../../platform/errors.js';
import { formatStored, parseAmount } from '../../../money/index.js';
import { lockProductBySeq, productId, productsFor, productSeqOf, updateProductRow } from './queries.js';
import { assetScale, getAsset } from '../../assets/index.js';
import { type Db } from '../shared/queries.js';
import type { CardProductRow } from './tables.js';

/** `GET /v1/cards/products` item: exactly the reference's fields. */
export function productView(p: CardProductRow) {
  return {
    id: productId(p.seq),
    form_factor: p.form_factor,
    currency: p.currency,
    bin: p.bin,
    scheme: p.scheme,
    card_types: p.card_types,
  };
}

export async function listProducts(db: Db, merchantId: string, environment: Environment) {
  const rows = await productsFor(db, merchantId, environment);
  return { data: rows.map(productView), next_cursor: null, has_more: false };
}

/** The operator's view: every setting, amounts as decimal strings in the card currency. */
export async function operatorProductView(db: Db, p: CardProductRow) {
  const scale = await assetScale(db, p.currency);
  const amount = (v: string) => formatStored(v, scale);
  return {
    ...productView(p),
    environment: p.environment,
    source_assets: p.source_assets,
    opening_fee: amount(p.opening_fee),
    topup_min: amount(p.topup_min),
    topup_max_single: amount(p.topup_max_single),
    max_single: amount(p.max_single),
    max_daily: amount(p.max_daily),
    max_monthly: amount(p.max_monthly),
    billing_address_updatable: p.billing_address_updatable,
    card_lists_supported: p.card_lists_supported,
    enabled: p.enabled,
    replacement_fee: amount(p.replacement_fee),
    postage_fee: amount(p.postage_fee),
  };
}

export interface ProductPatch {
  enabled?: boolean;
  source_assets?: string[];
  opening_fee?: string;
  topup_min?: string;
  topup_max_single?: string;
  max_single?: string;
  max_daily?: string;
  max_monthly?: string;
  billing_address_updatable?: boolean;
  card_lists_supported?: boolean;
  replacement_fee?: string;
  postage_fee?: string;
}

const amountKeys = [
  'opening_fee',
  'topup_min',
  'topup_max_single',
  'max_single',
  'max_daily',
  'max_monthly',
  'replacement_fee',
  'postage_fee',
] as const;

/** Operator: changes a product's settings (amounts in the card currency). */
export async function updateProduct(trx: Transaction<Database>, id: string, patch: ProductPatch, now: Date) {
  const seq = productSeqOf(id);
  const row = seq ? await lockProductBySeq(trx, seq) : undefined;
  if (!row) throw new ApiError('not_found', 'No such card product.');
  const scale = await assetScale(trx, row.currency);
  const set: Record<string, unknown> = { updated_at: now };
  for (const k of amountKeys) if (patch[k] !== undefined) set[k] = parseAmount(patch[k]!, scale, k).toString();
  if (patch.source_assets) {
    // Codes of the catalogue only: an unknown one was stored, and the replacement executor (which
    // reads the scale of every source asset) then failed each security replacement of the product.
    const codes = patch.source_assets.map((a) => a.toUpperCase());
    const known = new Set<string>();
    for (const code of codes) if (await getAsset(trx, code)) known.add(code);
    const unknown = codes.flatMap((c, i) =>
      known.has(c) ? [] : [{ key: `source_assets[${i}]`, reason: 'unknown_asset' }],
    );
    if (unknown.length > 0)
      throw new ApiError('invalid_fields', 'source_assets names an asset the catalogue does not have.', {
        fields: unknown,
        reason: 'validation_failed',
      });
    set.source_assets = JSON.stringify(codes);
  }
  for (const k of ['enabled', 'billing_address_updatable', 'card_lists_supported'] as const)
    if (patch[k] !== undefined) set[k] = patch[k];
  const merged = { ...row, ...set } as Record<string, unknown>;
  const v = (k: string) => BigInt(merged[k] as string);
  if (!(
    v('topup_min') > 0n &&
    v('topup_max_single') >= v('topup_min') &&
    v('max_single') > 0n &&
    v('max_daily') >= v('max_single') &&
    v('max_monthly') >= v('max_daily')
  )) {
    throw new ApiError(
      'invalid_fields',
      'Amounts must satisfy 0 < topup_min <= topup_max_single and 0 < max_single <= max_daily <= max_monthly.',
      { fields: [{ key: 'max_single', reason: 'inconsistent' }], reason: 'validation_failed' },
    );
  }
  const updated = await updateProductRow(trx, row.seq, set);
  return operatorProductView(trx, updated);
}
