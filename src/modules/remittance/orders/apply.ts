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
  remitCompleteLines,
  remitFailLines,
  remitReturnLines,
  type RemitMoney,
  remitEntryKinds,
} from '../../../money/index.js';
import { recordEvent, rowEnvelope } from '../../../events/index.js';
import {
  decisionApplier,
  postOrderEntry,
  claimMove,
  providerFields as lifecycleFields,
  type OrderStore,
  type Settlement,
} from '../../../provider-orders/index.js';
import { raiseAlert } from '../../alerts/index.js';
import { firstReturnCheckSql } from './queries.js';
import { externalMemberIdOf } from '../../members/index.js';
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

/** `remittance.order.<public status>`, in the caller's transaction. */
export async function emitOrderEvent(trx: Transaction<Database>, row: RemitOrderRow): Promise<void> {
  const status = publicStatus(row.status);
  const externalMemberId = await externalMemberIdOf(trx, row.member_id);
  await recordEvent(trx, {
    ...rowEnvelope(row),
    type: `remittance.order.${status}`,
    object: 'remittance_order',
    status,
    externalMemberId,
  });
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
  const claimed = await claimMove<RemitOrderRow>(trx, remitOrders, id, {
    to,
    from: movesFrom[to],
    at: move.at,
    fields,
  });
  if (!claimed) return undefined;
  await postOrderEntry(trx, claimed, {
    referenceType: remitReferenceType,
    kind: move.kind,
    asset: claimed.source_asset,
    lines: move.lines(moneyOf(claimed)),
  });
  await emitOrderEvent(trx, claimed);
  return claimed;
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

/** Applies a decision that ends the order (exactly once by the claims), in the caller's transaction. */
async function settleIn(trx: Transaction<Database>, id: string, decision: Settlement<Decision>): Promise<void> {
  switch (decision.kind) {
    case 'complete':
      await completeIn(trx, id, decision);
      break;
    case 'complete_and_return':
      await completeIn(trx, id, decision);
      await returnIn(trx, id, decision);
      break;
    case 'return':
      await returnIn(trx, id, decision);
      break;
    case 'fail':
      await failIn(trx, id, decision.reason, decision);
      break;
  }
}

/**
 * Applies a decision in one transaction and schedules the next re-query of an order that stays
 * open (the shared lifecycle's `decisionApplier`). `source`: `call` for the payout call's answer,
 * `query` for a status query.
 */
export const applyDecision = decisionApplier<RemitOrderRow, Decision>(remitOrders, providerFields, settleIn);
