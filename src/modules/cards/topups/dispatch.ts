// Over 300 lines: a top-up's dispatch claim, its credit and failure (sharing the card lock and the ledger posting) and
// its reconciliation, beside the lifecycle decisions they apply.
/**
 * A card top-up's dispatch to the card issuer, the issuer's answers and the reconciliation of
 * unknown outcomes, through the shared provider-order lifecycle (docs/cards.md "Card money").
 */
import { rowScope } from '../../../db/owned-by.js';
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import {
  minorFromDb,
  postEntries,
  rowReference,
  topUpCreditLines,
  topUpFailLines,
  topUpSettleLines,
  cardMoneyEntryKinds,
  type EntryLine,
} from '../../../money/index.js';
import { rowEnvelope } from '../../../events/index.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import {
  decisionApplier,
  claimDispatches,
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

import { replacementInFlight, replacementsInFlight } from '../replacements/queries.js';
import { lockCardsOfTopUps, pendingTopUpIds } from './queries.js';
import { externalIdOf } from '../shared/queries.js';
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

/**
 * The top-up's ledger entries (`[kind, asset, lines]`, each once per top-up: referenced by it) and its
 * `card.topup.<status>` event (the member named by `externalMemberId`), in one statement (`postEntries`): a
 * refused entry throws its refusal (the caller's transaction rolls back, as a refused `postEntry` would have it).
 */
async function postWithEvent(
  trx: Transaction<Database>,
  row: CardTopupRow,
  entries: readonly (readonly [kind: string, asset: string, lines: EntryLine[]])[],
  status: 'credited' | 'failed',
  externalMemberId: string,
): Promise<void> {
  const reported = {
    event: {
      ...rowEnvelope(row),
      type: `card.topup.${status}` as const,
      object: 'card_topup',
      status,
      externalMemberId,
    },
  };
  const outcomes = await postEntries(
    trx,
    entries.map(([kind, asset, lines], i) => ({
      entry: { ...rowReference(row, topUpReferenceType), kind, asset, lines },
      ...(i === entries.length - 1 ? reported : {}),
    })),
  );
  const refused = outcomes.find((o) => o instanceof Error);
  if (refused) throw refused;
}

/**
 * Credited once: the source-asset side and the card-currency side, the state change and the event
 * in the caller's transaction. The card row is locked first (as every stopping action locks it
 * while it returns the balance): a card that stopped before (`cardStopped`: closing, closed,
 * replaced, expired, frozen; or under a replacement that has returned its balance) gets nothing, the arrival goes to
 * the member's available balance in
 * the card currency; a card stopping after returns this arrival with the rest of its balance.
 */
async function creditIn(
  trx: Transaction<Database>,
  id: string,
  fields: Record<string, unknown>,
): Promise<CardTopupRow | undefined> {
  const [card] = await lockCardsOfTopUps(trx, [id], false);
  if (!card) throw new Error(`no card top-up ${id}`);
  const row = await claimMove<CardTopupRow>(trx, cardTopUps, id, {
    to: 'credited',
    from: ['processing', 'suspended'],
    at: 'credited_at',
    fields,
  });
  if (!row) return undefined;
  // A non-security replacement returns the balance of a card that is not frozen: `processing` says it has.
  const stopped =
    cardStopped({ status: card.status, frozenAt: card.frozen_at }) ||
    (await replacementInFlight(trx, row.card_id, ['processing']));
  const to = stopped ? ('available' as const) : ('card' as const);
  await postWithEvent(
    trx,
    row,
    [
      [cardMoneyEntryKinds.topUpSettle, row.source_asset, topUpSettleLines(moneyOf(row))],
      [cardMoneyEntryKinds.topUpCredit, row.card_currency, topUpCreditLines(moneyOf(row), to)],
    ],
    'credited',
    card.external_member_id,
  );
  return row;
}

/** Failed once: the freeze back to available and the event, in the caller's transaction; the moved row, or undefined
 * (not in a state it may fail from). `member`: the member's external id when the caller knows it (read and kept
 * there otherwise). */
async function failIn(
  trx: Transaction<Database>,
  id: string,
  reason: string,
  fields: Record<string, unknown>,
  from: readonly TopUpStatus[] = ['pending', 'processing', 'suspended'],
  member: { externalId?: string } = {},
): Promise<CardTopupRow | undefined> {
  const row = await claimMove<CardTopupRow>(trx, cardTopUps, id, {
    to: 'failed',
    from,
    at: 'failed_at',
    fields: { ...fields, failure_reason: reason, next_check_at: null },
  });
  if (!row) return undefined;
  await postWithEvent(
    trx,
    row,
    [[cardMoneyEntryKinds.topUpFail, row.source_asset, topUpFailLines(moneyOf(row))]],
    'failed',
    (member.externalId ??= await externalIdOf(trx, row)),
  );
  return row;
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
  // One card, one member: its external id read once, by the first top-up failed here.
  const member = {};
  for (const { id } of pending) if (await failIn(trx, id, reason, {}, ['pending'], member)) failed++;
  return failed;
}

/** Applies a decision that ends the top-up (exactly once by the claims), in the caller's transaction: the moved row,
 * or undefined when the claim was lost (nothing written). */
function settleIn(
  trx: Transaction<Database>,
  id: string,
  d: Settlement<TopUpDecision>,
): Promise<CardTopupRow | undefined> {
  switch (d.kind) {
    case 'complete':
      return creditIn(trx, id, { upstream_outcome: 'accepted', ...providerFields(d), next_check_at: null });
    case 'reversed':
      return failIn(trx, id, 'upstream_reversed', providerFields(d));
    case 'fail':
      return failIn(trx, id, d.reason, providerFields(d));
  }
}

const settles = (d: TopUpDecision): d is Settlement<TopUpDecision> =>
  d.kind === 'complete' || d.kind === 'reversed' || d.kind === 'fail';

/** The shared lifecycle's `decisionApplier`: the decision applied, the row read again and an open one scheduled. */
const applyAndReschedule = decisionApplier<CardTopupRow, TopUpDecision>(cardTopUps, providerFields, settleIn);

/**
 * Applies a decision to a top-up in one transaction (`applyTopUpDecisions` for a list of one); what
 * applying it threw is thrown.
 */
export async function applyTopUpDecision(
  ctx: Parameters<typeof applyAndReschedule>[0],
  id: string,
  decision: TopUpDecision,
  source: 'call' | 'query',
): Promise<CardTopupRow> {
  const [applied] = await applyTopUpDecisions(ctx, [{ id, decision }], source);
  if ('failed' in applied!) throw applied.failed;
  return applied!;
}

/**
 * Applies decisions to top-ups. A settlement whose claim is won ends the top-up (credited or
 * failed: not open, nothing to schedule) in a transaction of its own and answers the moved row as
 * is; every other decision, and a settlement whose claim was lost (it wrote nothing), goes through
 * the shared lifecycle's `decisionApplier` (the `wait`s of a run together). Each top-up's row, or
 * what applying its decision threw (`{ failed }`), in order.
 */
export async function applyTopUpDecisions(
  ctx: Parameters<typeof applyAndReschedule>[0],
  decisions: readonly { id: string; decision: TopUpDecision }[],
  source: 'call' | 'query',
): Promise<(CardTopupRow | { failed: unknown })[]> {
  const answers: (CardTopupRow | { failed: unknown } | undefined)[] = decisions.map(() => undefined);
  await Promise.all(
    decisions.map(async ({ id, decision }, i) => {
      if (!settles(decision)) return;
      try {
        answers[i] = (await ctx.db.transaction().execute((trx) => settleIn(trx, id, decision))) ?? undefined;
      } catch (failed) {
        answers[i] = { failed };
      }
    }),
  );
  const rest = [...decisions.keys()].filter((i) => answers[i] === undefined);
  const applied = await applyAndReschedule.many(
    ctx,
    rest.map((i) => decisions[i]!),
    source,
  );
  rest.forEach((i, k) => (answers[i] = applied[k]));
  return answers as (CardTopupRow | { failed: unknown })[];
}

/**
 * The dispatch claim of many top-ups, one transaction with their cards locked first (in id order, as
 * every stopping action and `creditIn` lock a card): a card that stopped meanwhile
 * (`topUpDispatchProblem`) gets no load, its top-up fails and its freeze goes back; the others move
 * `pending` → `processing` in one statement. The stop and the claim exclude each other, so a top-up
 * is either failed before it is sent or sent once. Top-ups no longer pending are left alone.
 */
async function claimOrStop(
  ctx: ServiceContext,
  ids: readonly string[],
): Promise<{ claimed: CardTopupRow; cardRef: string }[]> {
  return ctx.db.transaction().execute(async (trx) => {
    const cards = await lockCardsOfTopUps(trx, ids, true);
    const stateOf = (card: (typeof cards)[number]) => ({ status: card.status, frozenAt: card.frozen_at });
    // A stopped card's reason does not depend on its replacements: they are read only for cards still loadable.
    const replacing = await replacementsInFlight(
      trx,
      cards.filter((c) => topUpDispatchProblem(stateOf(c), false) === undefined).map((c) => c.card_id),
      ['processing'],
    );
    const loadable: typeof cards = [];
    for (const card of cards) {
      const problem = topUpDispatchProblem(stateOf(card), replacing.has(card.card_id));
      if (problem) await failIn(trx, card.id, problem, {}, ['pending'], { externalId: card.external_member_id });
      else loadable.push(card);
    }
    const claimed = await claimDispatches<CardTopupRow>(
      ctx,
      trx,
      cardTopUps,
      loadable.map((c) => c.id),
    );
    const refs = new Map(loadable.map((c) => [c.id, c.upstream_ref]));
    return claimed.map((row) => ({ claimed: row, cardRef: refs.get(row.id)! }));
  });
}

/** Asks the issuer to load a claimed top-up (its id the idempotency key): what its answer decides. */
async function load(ctx: ServiceContext, claimed: CardTopupRow, cardRef: string): Promise<TopUpDecision> {
  const answer: CallOutcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.topUp(rowScope(claimed), {
      requestId: claimed.id,
      cardRef,
      currency: claimed.card_currency,
      amountMinor: minorFromDb(claimed.arrival_amount),
    }),
  );
  return decideOnCallAnswer(answer, 'reversed');
}

/**
 * The dispatch jobs a poll took, together (a batch job handler): the top-ups claimed in one
 * transaction (`claimOrStop`), then each load asked of the issuer, at once, and the answers applied
 * together (`applyTopUpDecisions`).
 * Each top-up's outcome in order: undefined when done (sent, failed because its card stopped, or no
 * longer pending), or what its load threw.
 */
export async function dispatchTopUps(ctx: ServiceContext, ids: readonly string[]): Promise<unknown[]> {
  let claimed: { claimed: CardTopupRow; cardRef: string }[];
  try {
    claimed = await claimOrStop(ctx, ids);
  } catch (err) {
    return ids.map(() => err);
  }
  const outcomes = new Map<string, unknown>();
  const decided: { id: string; decision: TopUpDecision }[] = [];
  await Promise.all(
    claimed.map(async (c) => {
      try {
        decided.push({ id: c.claimed.id, decision: await load(ctx, c.claimed, c.cardRef) });
      } catch (err) {
        outcomes.set(c.claimed.id, err);
      }
    }),
  );
  const applied = await applyTopUpDecisions(ctx, decided, 'call');
  applied.forEach((a, k) => {
    if ('failed' in a) outcomes.set(decided[k]!.id, a.failed);
  });
  return ids.map((id) => outcomes.get(id));
}

/** Whether the issuer call may still be running (real time: a network call an advance does not end). */
export function callInFlight(ctx: ServiceContext, row: CardTopupRow): boolean {
  return orderCallInFlight(ctx, row, row.dispatch_started_at);
}

/** What the issuer's answer to a status query asked now means for an open top-up (nothing applied). */
export async function queryDecision(ctx: ServiceContext, row: CardTopupRow): Promise<TopUpDecision> {
  const answer: StatusOutcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.status(rowScope(row), row.id),
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
