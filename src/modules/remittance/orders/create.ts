// Over 300 lines: one batch's gates, limits and writes sharing one state (as exchange/market-orders.ts).
/**
 * The creation of remittance orders (`POST /v1/remittances`) as a batch effect (group commit,
 * docs/write-model.md): orders of any merchants in a handful of statements whatever their number,
 * every gate of one order in its order for each (docs/remittance.md, "Orders"). A member's second
 * order in one call, and an order whose merchant's daily limit depends on whether an earlier order
 * of the call posts, are written alone (`writeAlone`): their gates depend on the earlier ones'
 * outcome (the balance, the day's totals).
 */
import type { Transaction } from 'kysely';
import { enqueueDispatches, pendingOrderColumns } from '../../../provider-orders/index.js';
import type { Database, Environment } from '../../../db/schema.js';
import { ownerColumns } from '../../../db/owned-by.js';
import type { ServiceContext } from '../../../service-context.js';
import { ApiError } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { writeAlone, type WriteMode } from '../../../platform/writes/write-batch.js';
import { parseAmount, postEntries, remitEntryKinds, remitFreezeLines, rowReference } from '../../../money/index.js';
import { getAsset, type Asset } from '../../assets/index.js';
import { highValueRefusals, minKycLevel } from '../../kyc/index.js';
import { corridorsByIds, type Corridor } from '../corridors/queries.js';
import { corridorRefusal, payeeRefusal } from '../corridors/rules.js';
import { findActivePayees, payeeIdsOf, type MemberCaller } from '../payees/queries.js';
import type { PayeeRow } from '../payees/tables.js';
import { dailyTotals, insertOrders, lockDailyTotals, membersOf, scaleOf, type OrderDay } from './queries.js';
import { limitBreach, priceOrder, remitReferenceType, type LimitBreach, type Price } from './rules.js';
import { publicStatus } from './state.js';
import { dispatchJobKind, type Market, type OrderInput } from './service.js';
import {
  checkEach,
  headOfCall,
  keepPassing,
  postedOnly,
  type BatchAnswer,
  type BatchItem,
} from '../../../platform/writes/batch-answers.js';
import { orderView } from './views.js';

/** An order to write: the member it is for, the body, and what the providers said before the transaction. */
export interface OrderPlan {
  principal: MemberCaller;
  body: OrderInput;
  market: Market;
}

type OrderView = ReturnType<typeof orderView>;
type Answer = BatchAnswer<OrderView>;

/** An order that passed the gates read so far. */
interface Pending extends BatchItem {
  plan: OrderPlan;
  link: PayeeRow;
  corridor: Corridor;
  externalMemberId: string;
  asset: Asset;
  amount: bigint;
  payoutScale?: number;
  price?: Price;
  now?: Date;
  day?: string;
}

/**
 * Creates the orders of `plans` in order; one answer each (its view or its refusal, with nothing
 * of it written), up to the first that must be written alone. One statement each reads the
 * payees, the corridors, the members, the high-value thresholds, the clocks, takes the daily
 * totals' locks and reads the totals (plus one per environment for its `remittance` KYC level and
 * one per payout currency that is not an asset); one posts the freezes with their events, one
 * inserts the rows of those that posted, one queues their dispatch jobs.
 */
export async function createOrders(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  plans: readonly OrderPlan[],
  mode: WriteMode,
): Promise<Answer[]> {
  const answers: Answer[] = [];
  const call = headOfCall(plans, answers, ({ principal }) => [principal.memberId]);
  const orders = call.head;
  let end = call.end;

  let pending = await orderGates(trx, orders, answers);
  const refused = await highValueRefusals(
    trx,
    pending.map((p) => ({
      environment: p.plan.principal.environment,
      memberId: p.plan.principal.memberId,
      asset: p.asset.code,
      amount: p.amount,
    })),
  );
  const scales = new Map<string, number>();
  for (const currency of new Set(pending.map((p) => p.corridor.currency)))
    scales.set(currency, await scaleOf(trx, currency));
  pending = keepPassing(pending, answers, (p, k) => {
    if (refused[k]) throw new ApiError('kyc_required');
    p.payoutScale = scales.get(p.corridor.currency)!;
    p.price = priceOrder({
      sourceAmount: p.amount,
      sourceScale: p.asset.scale,
      payoutScale: p.payoutScale,
      midRate: p.plan.market.midRate!,
      fxSpreadBps: p.asset.code === p.corridor.currency ? 0 : p.corridor.fxSpreadBps,
      feeBps: p.corridor.feeBps,
      feeFixedPayout: p.corridor.feeFixed,
    });
    if (p.price.payoutAmount <= 0n) throw new ApiError('amount_out_of_range', 'The amount converts to nothing.');
  });

  // Daily limits on the merchant's clock: the day the order counts against is its own day.
  const nows = await ctx.clock.nowOfEach(
    trx,
    pending.map((p) => p.plan.principal),
  );
  const days: OrderDay[] = pending.map((p, k) => {
    p.now = nows[k]!;
    p.day = p.now.toISOString().slice(0, 10);
    const { memberId, merchantId } = p.plan.principal;
    return { corridorId: p.corridor.id, memberId, merchantId, day: p.day };
  });
  await lockDailyTotals(trx, days);
  const totals = await dailyTotals(trx, days);

  // In order: an order's limits with what its day holds. The merchant's daily total also counts the
  // earlier orders of this call that reach their posting; when the answer depends on whether they
  // post (a shortfall there writes nothing), the order is written alone after them.
  const accepted: Pending[] = [];
  const earlier = new Map<string, bigint>();
  for (const [k, p] of pending.entries()) {
    if (p.i >= end) break;
    const payout = p.price!.payoutAmount;
    const dayKey = `${days[k]!.corridorId}|${days[k]!.merchantId}|${days[k]!.day}`;
    const before = earlier.get(dayKey) ?? 0n;
    const breach = limitBreach(payout, p.corridor.limits, totals[k]!);
    const ifAllPost = limitBreach(payout, p.corridor.limits, {
      member: totals[k]!.member,
      merchant: totals[k]!.merchant + before,
    });
    if (!sameBreach(breach, ifAllPost)) {
      answers[p.i] = writeAlone;
      end = p.i + 1;
      break;
    }
    if (breach?.kind === 'amount_out_of_range')
      answers[p.i] = new ApiError('amount_out_of_range', "The payout is below the corridor's minimum.");
    else if (breach)
      answers[p.i] = new ApiError('limit_exceeded', undefined, {
        limit_type: breach.limit_type,
        limit_scope: breach.limit_scope,
      });
    else {
      accepted.push(p);
      earlier.set(dayKey, before + payout);
    }
  }

  const payeeIds = await payeeIdsOf(trx);
  for (const { p, row } of await writeOrders(trx, accepted, answers))
    answers[p.i] = orderView(payeeIds, row, p.asset.scale, p.payoutScale!);
  return answers.slice(0, end);
}

const sameBreach = (a: LimitBreach | undefined, b: LimitBreach | undefined) =>
  JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * Each order's payee, KYC level (the corridor's and the `remittance` business's), corridor,
 * asset, rate and amount, in that order (one statement each for the payees, the corridors and the
 * members, one per environment for the business level).
 */
async function orderGates(
  trx: Transaction<Database>,
  orders: readonly OrderPlan[],
  answers: Answer[],
): Promise<Pending[]> {
  const links = await findActivePayees(
    trx,
    orders.map((o) => ({ caller: o.principal, id: o.body.payee_id })),
  );
  const corridors = await corridorsByIds(
    trx,
    links.flatMap((l) => (l ? [l.corridor_id] : [])),
  );
  const members = await membersOf(
    trx,
    orders.map((o) => o.principal.memberId),
  );
  const levels = new Map<Environment, number>();
  for (const environment of new Set(orders.map((o) => o.principal.environment)))
    levels.set(environment, await minKycLevel(trx, environment, 'remittance'));
  return checkEach(orders, answers, async (plan, i): Promise<Omit<Pending, 'i'>> => {
    const { principal: caller, body, market } = plan;
    const link = links[i];
    if (!link) throw new ApiError('resource_not_found', 'No such payee for this member.');
    const corridor = corridors.get(link.corridor_id);
    if (!corridor) throw new Error(`remittance: corridor ${link.corridor_id} of payee ${link.seq} missing`);
    const member = members.get(caller.memberId);
    if (member?.merchant_id !== caller.merchantId || member.environment !== caller.environment)
      throw new Error(`no member ${caller.memberId}`);
    // Both gates hold: the corridor's own level and the service-wide `remittance` requirement.
    if (member.kyc_level < Math.max(corridor.minKycLevel, levels.get(caller.environment)!))
      throw new ApiError('kyc_required');
    const contract = corridor.contracts[link.entity_type];
    const refusal =
      corridorRefusal(corridor.policy, contract) ??
      payeeRefusal(corridor.policy, contract!, link.fields, corridor.country);
    if (refusal) throw new ApiError('corridor_not_supported', `The corridor cannot serve this payee now (${refusal}).`);
    const asset = await getAsset(trx, body.source_asset.toUpperCase());
    if (!asset || !asset.enabled) throw new ApiError('asset_not_allowed');
    if (market.midRate === undefined)
      throw new ApiError('asset_not_allowed', `${asset.code} cannot be converted to ${corridor.currency}.`);
    const amount = parseAmount(body.source_amount, asset.scale, 'source_amount');
    if (amount <= 0n) throw new ApiError('invalid_request', 'source_amount must be greater than zero.');
    return { plan, link, corridor, externalMemberId: member.external_member_id, asset, amount };
  });
}

/**
 * The accepted orders' money and rows: every freeze with its `remittance.order.pending` event in
 * one statement (a shortfall refuses its order alone, writing nothing of it), the rows of those
 * that posted in one, their dispatch jobs in one. The orders written, with their rows.
 */
async function writeOrders(trx: Transaction<Database>, accepted: readonly Pending[], answers: Answer[]) {
  const rows = accepted.map((p) => ({
    id: newId('rmt'),
    ...ownerColumns(p.plan.principal),
    payee_seq: p.link.seq,
    entity_id: p.link.entity_id,
    corridor_id: p.corridor.id,
    source_asset: p.asset.code,
    source_amount: p.amount.toString(),
    fee: p.price!.fee.toString(),
    payout_currency: p.corridor.currency,
    payout_amount: p.price!.payoutAmount.toString(),
    rate: p.price!.rate,
    value_day: p.day!,
    payout_date: p.plan.market.payoutDate ?? null,
    ...pendingOrderColumns,
    completed_at: null,
    failed_at: null,
    returned_at: null,
    created_at: p.now!,
    updated_at: p.now!,
  }));
  const status = publicStatus(pendingOrderColumns.status);
  const outcomes = await postEntries(
    trx,
    accepted.map((p, k) => {
      const { memberId, merchantId } = p.plan.principal;
      const row = rows[k]!;
      return {
        entry: {
          ...rowReference(row, remitReferenceType),
          kind: remitEntryKinds.freeze,
          asset: p.asset.code,
          lines: remitFreezeLines({ memberId, merchantId, amount: p.amount, fee: p.price!.fee }),
        },
        event: {
          merchantId: row.merchant_id,
          environment: row.environment,
          type: `remittance.order.${status}` as const,
          object: 'remittance_order',
          objectId: row.id,
          externalMemberId: p.externalMemberId,
          status,
          statusVersion: row.status_version,
        },
      };
    }),
  );
  const posted = postedOnly(accepted, outcomes, answers).map(({ item, k }) => ({ p: item, values: rows[k]! }));
  const inserted = await insertOrders(
    trx,
    posted.map((x) => x.values),
  );
  await enqueueDispatches(
    trx,
    dispatchJobKind,
    'order_id',
    inserted.map((row) => row.id),
  );
  return posted.map(({ p }, n) => ({ p, row: inserted[n]! }));
}
