/**
 * Applying what the provider (or the operator) said to a remittance order: each transition is one
 * conditional UPDATE (the claim), and only the transaction that won it posts the ledger entry
 * (itself unique by order and kind) and writes the `remittance.order.*` event. The claims, the
 * suspension and the re-query schedule are the shared lifecycle's (src/provider-orders/store.ts);
 * remittance keeps its table, entries, events and the payout date.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import {
  minorFromDb,
  postEntries,
  rowReference,
  remitCompleteLines,
  remitFailLines,
  remitReturnLines,
  type RemitMoney,
  remitEntryKinds,
} from '../../../money/index.js';
import { recordEvents, rowEnvelope, type EventInput } from '../../../events/index.js';
import {
  decisionApplier,
  claimMove,
  providerFields as lifecycleFields,
  type OrderStore,
  type Settlement,
} from '../../../provider-orders/index.js';
import { raiseAlert } from '../../alerts/index.js';
import { externalMemberIdSql, firstReturnCheckSql } from './queries.js';
import { remitReferenceType } from './rules.js';
import { movesFrom, publicStatus, returnCheckOffsetsSeconds, type Decision, type FailureReason } from './state.js';
import type { RemitOrderRow } from './tables.js';

export { reconcileStalledAfterChecks } from '../../../provider-orders/index.js';

/** Remittance orders as the shared lifecycle sees them. */
export const remitOrders: OrderStore = {
  table: 'remit_orders',
  object: 'remittance_order',
  label: 'Remittance',
  providerHolds: 'a payout',
  raiseAlert,
};

/**
 * An order row as a claim of it answers it: with its member's external id (for its event), read by
 * the claim's own statement (`externalMemberIdSql`, queries.ts) instead of a query of its own.
 */
export type ClaimedOrderRow = RemitOrderRow & { external_member_id: string | null };

/** `remittance.order.<public status>` of an order just claimed (`ClaimedOrderRow`): the event's input. */
function orderEvent(row: ClaimedOrderRow): EventInput {
  const status = publicStatus(row.status);
  return {
    ...rowEnvelope(row),
    type: `remittance.order.${status}`,
    object: 'remittance_order',
    status,
    // As `externalMemberIdOf` answers a member it does not find.
    externalMemberId: row.external_member_id ?? '',
  };
}

/** `remittance.order.<public status>` of orders just claimed, in the caller's transaction: one statement. */
export async function emitOrderEvents(trx: Transaction<Database>, rows: readonly ClaimedOrderRow[]): Promise<void> {
  await recordEvents(trx, rows.map(orderEvent));
}

const moneyOf = (row: RemitOrderRow): RemitMoney => ({
  memberId: row.member_id,
  merchantId: row.merchant_id,
  amount: minorFromDb(row.source_amount),
  fee: minorFromDb(row.fee),
});

type Terminal = 'completed' | 'failed' | 'returned';
const terminal = {
  completed: { kind: remitEntryKinds.complete, lines: remitCompleteLines, at: 'completed_at' },
  failed: { kind: remitEntryKinds.fail, lines: remitFailLines, at: 'failed_at' },
  returned: { kind: remitEntryKinds.return, lines: remitReturnLines, at: 'returned_at' },
} as const;

/** Moves an order to a terminal status exactly once (undefined when it is not in a state it may leave). */
async function moveTo(
  trx: Transaction<Database>,
  id: string,
  to: Terminal,
  fields: Record<string, unknown>,
): Promise<RemitOrderRow | undefined> {
  const move = terminal[to];
  const claimed = await claimMove<ClaimedOrderRow>(trx, remitOrders, id, {
    to,
    from: movesFrom[to],
    at: move.at,
    fields,
    returning: [externalMemberIdSql()],
  });
  if (!claimed) return undefined;
  // The entry (once per order and kind: referenced by it) and the event, in one statement; a refused
  // entry is thrown, the transaction rolls back with the claim.
  const [outcome] = await postEntries(trx, [
    {
      entry: {
        ...rowReference(claimed, remitReferenceType),
        kind: move.kind,
        asset: claimed.source_asset,
        lines: move.lines(moneyOf(claimed)),
      },
      event: orderEvent(claimed),
    },
  ]);
  if (outcome instanceof Error) throw outcome;
  const { external_member_id: _, ...row } = claimed;
  return row;
}

interface ProviderFacts {
  providerOrderId?: string;
  providerStatus?: string;
  payoutDate?: string;
}

const providerFields = (d: ProviderFacts) => ({
  ...lifecycleFields(d),
  ...(d.payoutDate ? { payout_date: d.payoutDate } : {}),
});

export const failIn = (trx: Transaction<Database>, id: string, reason: FailureReason, d: ProviderFacts = {}) =>
  moveTo(trx, id, 'failed', { failure_reason: reason, ...providerFields(d), next_check_at: null });

// A completed payout is watched for a return by its bank from then on (return-watch.ts): the
// first check is due the first offset after the completion, on the merchant's clock.
const completeIn = (trx: Transaction<Database>, id: string, d: ProviderFacts) =>
  moveTo(trx, id, 'completed', {
    upstream_outcome: 'accepted',
    ...providerFields(d),
    next_check_at: null,
    return_check_at: firstReturnCheckSql(returnCheckOffsetsSeconds[0]!),
  });

export const returnIn = (trx: Transaction<Database>, id: string, d: ProviderFacts = {}) =>
  moveTo(trx, id, 'returned', { ...providerFields(d), return_check_at: null });

/**
 * Applies a decision that ends the order (exactly once by the claims), in the caller's transaction:
 * the row its last claim moved, or undefined when that claim was lost (nothing written by it).
 */
async function settleIn(
  trx: Transaction<Database>,
  id: string,
  decision: Settlement<Decision>,
): Promise<RemitOrderRow | undefined> {
  switch (decision.kind) {
    case 'complete':
      return completeIn(trx, id, decision);
    case 'complete_and_return':
      await completeIn(trx, id, decision);
      return returnIn(trx, id, decision);
    case 'return':
      return returnIn(trx, id, decision);
    case 'fail':
      return failIn(trx, id, decision.reason, decision);
  }
}

/**
 * Applies a decision in one transaction and schedules the next re-query of an order that stays
 * open (the shared lifecycle's `decisionApplier`). `source`: `call` for the payout call's answer,
 * `query` for a status query.
 */
export const applyDecision = decisionApplier<RemitOrderRow, Decision>(remitOrders, providerFields, settleIn);
