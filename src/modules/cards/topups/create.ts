/**
 * Card top-up creation (`POST /v1/cards/{id}/topups`) as a batch effect (group commit,
 * docs/write-model.md): the top-ups of any merchants in a handful of statements whatever their
 * number, each with the checks and refusals, in their order, of a top-up written alone: the cards
 * (locked, in id order), their products and replacements in flight, the clocks read in one
 * statement each; the freezes (amount + fee, available → frozen; `insufficient_balance`) posted in
 * one, the rows of those that posted inserted in one, their dispatch jobs queued in one.
 *
 * Lock order (docs/locking.md): the cards first, then each merchant's write lock at the posting,
 * as every transaction that locks a card takes them (a card's close, an authorisation). The route
 * says so (`locksRowsFirst`): its batch takes no merchant's lock before the cards. The card lock
 * makes a card stopping meanwhile (close, expiry, replacement) stop before this top-up
 * (`state_invalid`) or after it (and fail it with its other pending top-ups).
 *
 * A card's or member's second top-up in one call is written alone (`writeAlone`): it is priced
 * and paid after the first's outcome, as it would have been alone. The first call locks the cards
 * of all its plans, so the calls after a `writeAlone` (the item alone, then the rest), which come
 * after its postings, only find their cards locked already. The route's writes are batched only
 * with each other (the group committer's lane): no other write's posting comes before the cards.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import { ownerColumns } from '../../../db/owned-by.js';
import type { ServiceContext } from '../../../service-context.js';
import { ApiError } from '../../../platform/errors.js';
import { newId, withPrefix } from '../../../platform/ids.js';
import type { WriteMode } from '../../../platform/writes/write-batch.js';
import { cardMoneyEntryKinds, postEntries, topUpFreezeLines, type EntryInput } from '../../../money/index.js';
import { enqueueDispatches, pendingOrderColumns } from '../../../provider-orders/index.js';
import { assetScale, getAsset } from '../../assets/index.js';
import type { MemberCardCaller } from '../shared/queries.js';
import type { CardRow } from '../cards/tables.js';
import type { CardProductRow } from '../products/tables.js';
import { cardsReplacing, insertTopUps, lockOwnedCards, productRowsBySeq } from './queries.js';
import { arrivalAt, topUpReferenceType, type TopUpPrice } from './rules.js';
import { priceFor, priceOrRefuse, pricingOf, topUpDispatchJobKind, unloadable, type TopUpBody } from './service.js';
import {
  headOfCall,
  checkEach,
  postedOnly,
  type BatchAnswer,
  type BatchItem,
} from '../../../platform/writes/batch-answers.js';
import { topUpView } from './views.js';

/** A top-up to write: who asks, the card, the body, and the rate fixed by `prepare` (undefined: it found a refusal). */
export interface TopUpPlan {
  principal: MemberCardCaller;
  cardId: string;
  body: TopUpBody;
  market: { asset: string; rate: string } | undefined;
}

type TopUpView = Awaited<ReturnType<typeof topUpView>>;
type Answer = BatchAnswer<TopUpView>;

interface Accepted extends BatchItem {
  plan: TopUpPlan;
  card: CardRow;
  asset: string;
  price: TopUpPrice;
  arrival: bigint;
  rate: string;
}

const ownerKey = (id: string, c: { merchantId: string; environment: string; memberId: string }) =>
  `${id}|${c.merchantId}|${c.environment}|${c.memberId}`;

/**
 * Creates the plans' top-ups in order; one answer each (its view, `pending`, or its refusal with
 * nothing of it written), up to a card's or member's second top-up (`writeAlone`).
 */
export async function createTopUps(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  plans: readonly TopUpPlan[],
  _mode: WriteMode, // a list of one is written the same way
): Promise<Answer[]> {
  const answers: Answer[] = [];
  const { head: batch, end } = headOfCall(plans, answers, ({ principal, cardId }) => [
    `card:${withPrefix('crd', cardId)}`,
    `member:${principal.memberId}`,
  ]);

  // Every plan's card, those after a `writeAlone` too: the calls for them come after this call's
  // postings took the merchants' write locks, and must lock no card then (only re-lock these).
  const locked = await lockOwnedCards(
    trx,
    plans.map(({ principal, cardId }) => ({ id: withPrefix('crd', cardId), ...principal })),
  );
  const found = new Map(
    locked.map((c) => [
      ownerKey(c.id, { merchantId: c.merchant_id, environment: c.environment, memberId: c.member_id }),
      c,
    ]),
  );
  const products = new Map(
    (await productRowsBySeq(trx, [...new Set(locked.map((c) => c.product_seq))])).map((p) => [p.seq, p]),
  );
  const replacing = await cardsReplacing(
    trx,
    locked.map((c) => c.id),
  );

  const accepted = await checkEach(batch, answers, async (plan): Promise<Omit<Accepted, 'i'>> => {
    const card = found.get(ownerKey(withPrefix('crd', plan.cardId), plan.principal));
    if (!card) throw new ApiError('not_found', 'No such card.');
    const product = products.get(card.product_seq)!;
    const refusal = unloadable(card, product, replacing.has(card.id));
    if (refusal) throw refusal;
    const cardScale = await assetScale(trx, card.currency);
    const { asset, sourceScale, price } = await pricedIn(trx, plan, product, cardScale);
    const market = plan.market!;
    const arrival = arrivalAt(price.amount, sourceScale, cardScale, market.rate);
    if (arrival <= 0n)
      throw new ApiError('amount_out_of_range', 'The amount converts to nothing.', { reason: 'converts_to_nothing' });
    return { plan, card, asset, price, arrival, rate: market.rate };
  });
  await writeTopUps(ctx, trx, accepted, answers);
  return answers.slice(0, end);
}

/**
 * The asset the top-up is charged in and its price: the one `prepare` fixed the rate for, when the
 * product still lists it and the catalogue has it enabled (the member's preference stands, no
 * balance read). Otherwise the top-up is refused as alone: the look-ups of one top-up (its
 * payment priority reads the member's balances) answer its refusal, or the asset changed meanwhile.
 */
async function pricedIn(
  trx: Transaction<Database>,
  plan: TopUpPlan,
  product: CardProductRow,
  cardScale: number,
): Promise<{ asset: string; sourceScale: number; price: TopUpPrice }> {
  const { market } = plan;
  const asset = market && product.source_assets.includes(market.asset) ? await getAsset(trx, market.asset) : undefined;
  if (market && asset?.enabled)
    return {
      asset: market.asset,
      sourceScale: asset.scale,
      price: priceOrRefuse(plan.body.amount, asset.scale, cardScale, pricingOf(product)),
    };
  await priceFor(trx, plan.principal, plan.cardId, market ? { ...plan.body, source_asset: market.asset } : plan.body);
  throw new ApiError('product_not_available', 'The source asset changed meanwhile; retry.');
}

/**
 * The accepted top-ups' freezes in one statement (a shortfall refuses its top-up alone), the rows
 * of those that posted in one, their dispatch jobs in one. Each top-up answered: its view, or its
 * refusal.
 */
async function writeTopUps(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  accepted: readonly Accepted[],
  answers: Answer[],
): Promise<void> {
  if (accepted.length === 0) return;
  const nows = await ctx.clock.nowOfEach(
    trx,
    accepted.map((a) => a.plan.principal),
  );
  const rows = accepted.map((a, k) => ({
    id: newId('ctu'),
    ...ownerColumns(a.plan.principal),
    card_id: a.card.id,
    source_asset: a.asset,
    amount: a.price.amount,
    fee: a.price.fee,
    card_currency: a.card.currency,
    arrival_amount: a.arrival,
    rate: a.rate,
    ...pendingOrderColumns,
    credited_at: null,
    failed_at: null,
    created_at: nows[k]!,
    updated_at: nows[k]!,
  }));
  const freezes = await postEntries(
    trx,
    accepted.map((a, k): { entry: EntryInput } => ({
      entry: {
        environment: a.plan.principal.environment,
        merchantId: a.plan.principal.merchantId,
        kind: cardMoneyEntryKinds.topUpFreeze,
        referenceType: topUpReferenceType,
        referenceId: rows[k]!.id,
        asset: a.asset,
        lines: topUpFreezeLines({
          memberId: a.plan.principal.memberId,
          merchantId: a.plan.principal.merchantId,
          cardId: a.card.id,
          amount: a.price.amount,
          fee: a.price.fee,
          arrival: a.arrival,
        }),
      },
    })),
  );
  const posted = postedOnly(accepted, freezes, answers);
  const inserted = await insertTopUps(
    trx,
    posted.map(({ k }) => rows[k]!),
  );
  await enqueueDispatches(
    trx,
    topUpDispatchJobKind,
    'topup_id',
    inserted.map((row) => row.id),
  );
  for (const [n, { item }] of posted.entries()) answers[item.i] = await topUpView(trx, inserted[n]!);
}
