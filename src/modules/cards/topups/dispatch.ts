/**
 * A card top-up's dispatch to the card issuer, the issuer's answers and the reconciliation of
 * unknown outcomes, through the shared provider-order lifecycle (docs/cards.md "Card money").
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import {
  minorFromDb,
  topUpCreditLines,
  topUpFailLines,
  topUpSettleLines,
  cardMoneyEntryKinds,
} from '../../../money/index.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import {
  decisionApplier,
  postOrderEntry,
  claimDispatch,
  claimMove,
  decideOnCallAnswer,
  decideOnQueryAnswer,
  isOpenOrder,
  openOrderFacts,
  orderCallInFlight,
  providerFields,
  reconcilePass,
  type LifecycleDecision,
  type OrderStore,
  type Settlement,
} from '../../../provider-orders/index.js';
import type { CallOutcome, StatusOutcome } from '../../../upstreams/port.js';
import { raiseAlert } from '../../alerts/index.js';
import { moneyOf, topUpDispatchProblem, topUpReferenceType, type TopUpStopReason } from './rules.js';
import type { CardTopupRow, TopUpStatus } from './tables.js';

import { replacementInFlight } from '../replacements/queries.js';
import { cardIdOfTopUp, pendingTopUpIds, topUpById, topUpCardAndStatus } from './queries.js';
import { scopeOf } from '../shared/queries.js';
import { emitCardEvent } from '../shared/events.js';
import { cardUpstreamRefOf, lockCardState } from '../cards/queries.js';
import { cardStopped } from '../cards/state.js';

/** Card top-ups as the shared lifecycle sees them. */
export const cardTopUps: OrderStore = {
  table: 'card_topups',
  object: 'card_topup',
  label: 'Card top-up',
  providerHolds: 'a load',
  raiseAlert,
};

/** The issuer reversed a load we still had open: nothing stays on the card, so it is a failure (freeze released). */
export type TopUpDecision =
  | LifecycleDecision<'reversed'>
  | { kind: 'fail'; reason: 'operator'; providerOrderId?: undefined; providerStatus?: undefined };

/** `card.topup.<status>`. */
const emit = (trx: Transaction<Database>, row: CardTopupRow, status: 'credited' | 'failed') =>
  emitCardEvent(trx, row, { type: `card.topup.${status}`, object: 'card_topup', status });

/**
 * Credited once: the source-asset side and the card-currency side, the state change and the event
 * in the caller's transaction. The card row is locked first (as every stopping action locks it
 * while it returns the balance): a card that stopped before (`cardStopped`: closing, closed,
 * replaced, expired, frozen; or under a replacement that has returned its balance) gets nothing, the arrival goes to
 * the member's available balance in
 * the card currency; a card stopping after returns this arrival with the rest of its balance.
 */
async function creditIn(trx: Transaction<Database>, id: string, fields: Record<string, unknown>): Promise<void> {
  const card = await lockCardState(trx, await cardIdOfTopUp(trx, id));
  const row = await claimMove<CardTopupRow>(trx, cardTopUps, id, {
    to: 'credited',
    from: ['processing', 'suspended'],
    at: 'credited_at',
    fields,
  });
  if (!row) return;
  // A non-security replacement returns the balance of a card that is not frozen: `processing` says it has.
  const stopped =
    cardStopped({ status: card.status, frozenAt: card.frozen_at }) ||
    (await replacementInFlight(trx, row.card_id, ['processing']));
  const to = stopped ? ('available' as const) : ('card' as const);
  await postOrderEntry(trx, row, {
    referenceType: topUpReferenceType,
    kind: cardMoneyEntryKinds.topUpSettle,
    asset: row.source_asset,
    lines: topUpSettleLines(moneyOf(row)),
  });
  await postOrderEntry(trx, row, {
    referenceType: topUpReferenceType,
    kind: cardMoneyEntryKinds.topUpCredit,
    asset: row.card_currency,
    lines: topUpCreditLines(moneyOf(row), to),
  });
  await emit(trx, row, 'credited');
}

async function failIn(
  trx: Transaction<Database>,
  id: string,
  reason: string,
  fields: Record<string, unknown>,
  from: readonly TopUpStatus[] = ['pending', 'processing', 'suspended'],
): Promise<boolean> {
  const row = await claimMove<CardTopupRow>(trx, cardTopUps, id, {
    to: 'failed',
    from,
    at: 'failed_at',
    fields: { ...fields, failure_reason: reason, next_check_at: null },
  });
  if (!row) return false;
  await postOrderEntry(trx, row, {
    referenceType: topUpReferenceType,
    kind: cardMoneyEntryKinds.topUpFail,
    asset: row.source_asset,
    lines: topUpFailLines(moneyOf(row)),
  });
  await emit(trx, row, 'failed');
  return true;
}

/** Top-ups of one card cancelled per call (a bound; a card has few pending at once, the dispatch check catches any
 * left). */
const pendingCancelMax = 100;

/**
 * A card stops (closing, expired, frozen or voided by a replacement): its top-ups not yet sent to
 * the issuer (`pending`) are failed with `reason` in the caller's transaction (the one that
 * changes the card's state, with the card row locked), their freeze back to available
 * (`card.topup_fail`, once: the move from `pending` has one winner, against the dispatch's claim)
 * and `card.topup.failed`. Top-ups already dispatched keep going: an issuer that confirms them
 * later credits available (`creditIn`); an unknown outcome stays frozen until reconciliation.
 * Answers how many were failed.
 */
export async function failPendingTopUps(
  trx: Transaction<Database>,
  cardId: string,
  reason: TopUpStopReason,
): Promise<number> {
  const pending = await pendingTopUpIds(trx, cardId, pendingCancelMax);
  let failed = 0;
  for (const { id } of pending) if (await failIn(trx, id, reason, {}, ['pending'])) failed++;
  return failed;
}

/** Applies a decision that ends the top-up (exactly once by the claims), in the caller's transaction. */
async function settleIn(trx: Transaction<Database>, id: string, d: Settlement<TopUpDecision>): Promise<void> {
  switch (d.kind) {
    case 'complete':
      return creditIn(trx, id, { upstream_outcome: 'accepted', ...providerFields(d), next_check_at: null });
    case 'reversed':
      await failIn(trx, id, 'upstream_reversed', providerFields(d));
      return;
    case 'fail':
      await failIn(trx, id, d.reason, providerFields(d));
      return;
  }
}

/** Applies a decision to a top-up in one transaction (the shared lifecycle's `decisionApplier`). */
export const applyTopUpDecision = decisionApplier<CardTopupRow, TopUpDecision>(cardTopUps, providerFields, settleIn);

/**
 * The dispatch claim, one transaction with the card row locked first (as every stopping action
 * and `creditIn` lock it): a card that stopped meanwhile (`topUpDispatchProblem`) gets no load,
 * the top-up fails and its freeze goes back; otherwise `pending` → `processing`. The stop and the
 * claim exclude each other, so a top-up is either failed before it is sent or sent once.
 */
async function claimOrStop(ctx: ServiceContext, id: string): Promise<CardTopupRow | undefined> {
  return ctx.db.transaction().execute(async (trx) => {
    const open = await topUpCardAndStatus(trx, id);
    if (!open || open.status !== 'pending') return undefined;
    const card = await lockCardState(trx, open.card_id);
    const problem = topUpDispatchProblem(
      { status: card.status, frozenAt: card.frozen_at },
      await replacementInFlight(trx, open.card_id, ['processing']),
    );
    if (problem) {
      await failIn(trx, id, problem, {}, ['pending']);
      return undefined;
    }
    return claimDispatch<CardTopupRow>(ctx, trx, cardTopUps, id);
  });
}

/** The dispatch job: the issuer is asked to load the card with the top-up id as its idempotency key; the answer applied
 * once. */
export async function dispatchTopUp(ctx: ServiceContext, id: string): Promise<CardTopupRow | undefined> {
  const claimed = await claimOrStop(ctx, id);
  if (!claimed) return topUpById(ctx.db, id);
  const card = await cardUpstreamRefOf(ctx.db, claimed.card_id);
  const answer: CallOutcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.topUp(scopeOf(claimed), {
      requestId: claimed.id,
      cardRef: card.upstream_ref,
      currency: claimed.card_currency,
      amountMinor: minorFromDb(claimed.arrival_amount),
    }),
  );
  return applyTopUpDecision(ctx, claimed.id, decideOnCallAnswer(answer, 'reversed'), 'call');
}

/** Whether the issuer call may still be running (real time: a network call an advance does not end). */
export function callInFlight(ctx: ServiceContext, row: CardTopupRow): boolean {
  return orderCallInFlight(ctx, row, row.dispatch_started_at);
}

/** What the issuer's answer to a status query asked now means for an open top-up (nothing applied). */
export async function queryDecision(ctx: ServiceContext, row: CardTopupRow): Promise<TopUpDecision> {
  const answer: StatusOutcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.status(scopeOf(row), row.id),
  );
  return decideOnQueryAnswer(
    openOrderFacts(ctx, row, row.dispatch_started_at),
    answer,
    ctx.config.upstreamNotFoundGraceMs,
    'reversed',
  );
}

export async function reconcileTopUp(ctx: ServiceContext, row: CardTopupRow): Promise<CardTopupRow> {
  if (!isOpenOrder(row.status) || callInFlight(ctx, row)) return row;
  return applyTopUpDecision(ctx, row.id, await queryDecision(ctx, row), 'query');
}

export const topUpReconcileJobName = 'card.topup_reconcile';

/** One reconciliation pass (the shared one): due open top-ups re-queried with the issuer. */
export function reconcileDueTopUps(ctx: ServiceContext, batchMax = 50): Promise<number> {
  return reconcilePass<CardTopupRow>(
    ctx,
    cardTopUps,
    {
      job: topUpReconcileJobName,
      batchMax,
      leaseSeconds: 60,
      failureMessage: (row) => `card top-up ${row.id}: reconciliation failed; retried after the lease`,
    },
    (row) => reconcileTopUp(ctx, row),
  );
}
