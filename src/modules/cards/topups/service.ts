/**
 * Card top-ups (docs/cards.md "Card money"): the quote (a pure estimate, nothing stored), the
 * order (`POST /v1/cards/{id}/topups`: amount + fee frozen, `pending`), its dispatch to the card
 * issuer by a job (dispatch.ts), and the answer applied exactly once through the shared order lifecycle
 * (src/provider-orders/store.ts), as remittance does: `credited` (the card bucket grows, the freeze
 * is released to the issuer, `card.topup.credited`) or `failed` (the freeze back to available,
 * `card.topup.failed`); an unknown outcome stays frozen until reconciliation learns it.
 */
import type { ServiceContext } from '../../../service-context.js';
import { ApiError, type ErrorCode } from '../../../platform/errors.js';
import { type PageParams } from '../../../platform/routes/pagination.js';
import { keysetPage, viewPage } from '../../../db/keyset-page.js';
import { accountBalance, minorFromDb, parseAmount } from '../../../money/index.js';
import { assetScale, getAsset } from '../../assets/index.js';
import { payingAsset, priceTopUp, type SourceCandidate, type TopUpPrice, type TopUpPricing } from './rules.js';

import { type CardCaller, type Db, type MemberCardCaller } from '../shared/queries.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { rateAfterSpread } from '../../../money/index.js';
import { cardOrNotFound } from '../cards/queries.js';
import { productRowBySeq } from '../products/queries.js';
import { replacementInFlight } from '../replacements/queries.js';
import { findTopUp, topUpsOfCard } from './queries.js';
import { topUpView } from './views.js';
import type { CardProductRow } from '../products/tables.js';
import type { CardRow } from '../cards/tables.js';

export const topUpErrors = {
  quote: ['product_not_available', 'state_invalid', 'not_found', 'amount_out_of_range', 'invalid_request'],
  create: [
    'product_not_available',
    'state_invalid',
    'not_found',
    'amount_out_of_range',
    'invalid_request',
    'insufficient_balance',
    'upstream_error',
  ],
  get: ['not_found'],
} as const satisfies Record<string, readonly ErrorCode[]>;

/** Card states in which money may not be put on a card. */
const notLoadable = new Set(['closing', 'closed', 'expired', 'replaced']);

export const topUpDispatchJobKind = 'card.topup_dispatch';

export interface TopUpBody {
  amount: string;
  source_asset?: string;
}

export interface Priced {
  card: CardRow;
  product: CardProductRow;
  asset: string;
  sourceScale: number;
  cardScale: number;
  price: TopUpPrice;
}

/** Why money may not be put on the card now, its product and replacements read (undefined: it may be). */
export function unloadable(card: CardRow, product: CardProductRow, replacing: boolean): ApiError | undefined {
  if (!product.enabled) return new ApiError('product_not_available', "The card's product is withdrawn.");
  if (notLoadable.has(card.status)) return new ApiError('state_invalid', `The card is ${card.status}.`);
  // A security replacement froze it and returned its balance: it never spends again.
  if (card.frozen_at !== null) return new ApiError('state_invalid', 'The card is frozen by a security replacement.');
  // A replacement in flight returns the card's balance and ends the card: nothing more is loaded onto it.
  if (replacing) return new ApiError('state_invalid', 'A replacement of the card is in flight.');
  return undefined;
}

async function loadableCard(
  db: Db,
  caller: MemberCardCaller,
  id: string,
): Promise<{ card: CardRow; product: CardProductRow }> {
  const card = await cardOrNotFound(db, caller, id);
  const product = await productRowBySeq(db, card.product_seq);
  const refusal =
    unloadable(card, product, false) ??
    unloadable(card, product, await replacementInFlight(db, card.id, ['requested', 'processing']));
  if (refusal) throw refusal;
  return { card, product };
}

/** The product's top-up terms, minor units. */
export const pricingOf = (product: CardProductRow): TopUpPricing => ({
  feeBps: product.topup_fee_bps,
  feeFixed: minorFromDb(product.topup_fee_fixed),
  topupMin: minorFromDb(product.topup_min),
  topupMaxSingle: minorFromDb(product.topup_max_single),
});

/** The price in one source asset, or its refusal thrown (`amount_out_of_range`; `invalid_request` for a malformed
 * amount). */
export function priceOrRefuse(amount: string, sourceScale: number, cardScale: number, pricing: TopUpPricing) {
  const priced = priceTopUp(parseAmount(amount, sourceScale), sourceScale, cardScale, pricing);
  if ('kind' in priced) {
    const text = {
      below_minimum: "below the product's minimum top-up",
      above_single_cap: "above the product's single top-up cap",
      converts_to_nothing: 'too small',
    }[priced.which];
    throw new ApiError('amount_out_of_range', `The amount is ${text}.`, { reason: priced.which });
  }
  return priced;
}

/**
 * The top-up priced in the asset really charged: the member's preference when usable, otherwise
 * the payment priority (`payingAsset`). The amount is read at each candidate's scale (too many
 * places: `invalid_request`); out of the product's range: `amount_out_of_range` (extensions 6).
 */
export async function priceFor(db: Db, caller: MemberCardCaller, id: string, body: TopUpBody): Promise<Priced> {
  const { card, product } = await loadableCard(db, caller, id);
  const cardScale = await assetScale(db, card.currency);
  const pricing = pricingOf(product);
  const candidates: Array<SourceCandidate & { scale: number; price?: TopUpPrice }> = [];
  for (const code of product.source_assets) {
    const asset = await getAsset(db, code);
    if (!asset) {
      candidates.push({ code, enabled: false, available: 0n, total: 0n, scale: 0 });
      continue;
    }
    let price: TopUpPrice | undefined;
    try {
      const p = priceTopUp(parseAmount(body.amount, asset.scale), asset.scale, cardScale, pricing);
      price = 'kind' in p ? undefined : p;
    } catch {
      price = undefined;
    }
    const available = await accountBalance(
      db,
      caller.environment,
      { owner: 'member', memberId: caller.memberId, bucket: 'available' },
      code,
    );
    candidates.push({
      code,
      enabled: asset.enabled,
      available,
      total: price?.customerTotal ?? 0n,
      scale: asset.scale,
      price,
    });
  }
  const chosen = payingAsset(
    body.source_asset,
    candidates.map((c) => ({ ...c, available: c.price ? c.available : -1n })),
  );
  if (!chosen) throw new ApiError('product_not_available', "No source asset of the card's product can be used now.");
  const c = candidates.find((x) => x.code === chosen)!;
  const price = priceOrRefuse(body.amount, c.scale, cardScale, pricing);
  return { card, product, asset: chosen, sourceScale: c.scale, cardScale, price };
}

/** `POST /v1/cards/{id}/topup-quotes`: the reference's quote, smallest-unit integer strings; nothing stored, no issuer
 * call. */
export async function quoteTopUp(db: Db, caller: MemberCardCaller, id: string, body: TopUpBody) {
  const q = await priceFor(db, caller, id, body);
  const crossCurrency = q.asset !== q.card.currency;
  return {
    customer_total: q.price.customerTotal.toString(),
    arrival_amount: q.price.arrivalEstimate.toString(),
    fee: q.price.fee.toString(),
    source_asset: q.asset,
    ledger_scale: q.sourceScale,
    card_currency: q.card.currency,
    card_scale: q.cardScale,
    note: crossCurrency
      ? `Estimated 1:1 from ${q.asset} to ${q.card.currency}; the arrival amount is final only when the top-up ` +
        `is executed, at the rate fixed then.`
      : 'Same currency: the arrival amount is the amount.',
  };
}

// ---------------------------------------------------------------------------------------------
// The order

/** The real rate, source asset → card currency, asked of the one rate service before the write (read-only). */
export async function rateFor(
  ctx: ServiceContext,
  caller: MemberCardCaller,
  id: string,
  body: TopUpBody,
): Promise<{ asset: string; rate: string } | undefined> {
  let q: Priced;
  try {
    q = await priceFor(ctx.db, caller, id, body);
  } catch {
    return undefined;
  } // the write answers the refusal
  if (q.asset === q.card.currency) return { asset: q.asset, rate: '1' };
  const answer = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.rates.mid(caller, q.asset, q.card.currency),
  );
  if (answer.kind === 'timeout' || answer.kind === 'unknown')
    throw new ApiError('upstream_error', 'The rate service did not answer; retry with the same key.');
  if (answer.kind !== 'rate')
    throw new ApiError('product_not_available', `${q.asset} cannot be converted to ${q.card.currency} now.`);
  return { asset: q.asset, rate: rateAfterSpread(answer.rate, q.product.topup_fx_markup_bps) };
}

export async function getTopUp(db: Db, caller: CardCaller, cardId: string | undefined, id: string) {
  const row = await findTopUp(db, caller, cardId, id);
  if (!row) throw new ApiError('not_found', 'No such top-up.');
  return topUpView(db, row);
}

/** A card's top-ups, newest first (cursor). Another member's card, or none: not_found. */
export async function listTopUps(db: Db, caller: CardCaller, cardId: string, page: PageParams) {
  const card = await cardOrNotFound(db, caller, cardId);
  return viewPage(await keysetPage(topUpsOfCard(db, card.id), page), (row) => topUpView(db, row));
}
