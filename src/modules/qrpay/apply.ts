/**
 * Applying what the provider (or the operator) said to an order: each transition is one
 * conditional UPDATE (the claim), and the ledger entry and the event are written only by the
 * transaction that won it. The claims, the suspension and the re-query schedule are the shared
 * lifecycle's (src/provider-orders/store.ts); QR pay keeps its table, entries and events.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import {
  minorFromDb,
  qrpayCompleteLines,
  qrpayFailLines,
  qrpayRefundLines,
  qrpayEntryKinds,
} from '../../money/index.js';
import { recordEvent, rowEnvelope } from '../../events/index.js';
import {
  decisionApplier,
  postOrderEntry,
  claimMove,
  providerFields,
  type OrderStore,
  type Settlement,
} from '../../provider-orders/index.js';
import { raiseAlert } from '../alerts/index.js';
import { externalMemberIdOf } from '../members/index.js';
import { qrpayReferenceType } from './rules.js';
import { openStatuses, type Decision, type FailureReason } from './state.js';
import type { QrOrderRow } from './tables.js';

export { reconcileStalledAfterChecks } from '../../provider-orders/index.js';

/** QR pay's orders as the shared lifecycle sees them. */
export const qrpayOrders: OrderStore = {
  table: 'qrpay_orders',
  object: 'qrpay_order',
  label: 'QR payment',
  providerHolds: 'an order',
  raiseAlert,
};

/** `qrpay.order.<status>`, in the caller's transaction. */
async function emit(trx: Transaction<Database>, row: QrOrderRow, status: TerminalStatus): Promise<void> {
  const externalMemberId = await externalMemberIdOf(trx, row.member_id);
  await recordEvent(trx, {
    ...rowEnvelope(row),
    type: `qrpay.order.${status}`,
    object: 'qrpay_order',
    status,
    externalMemberId,
  });
}

type TerminalStatus = 'completed' | 'failed' | 'refunded';

const terminalMoves = {
  completed: { from: openStatuses, kind: qrpayEntryKinds.complete, lines: qrpayCompleteLines, at: 'completed_at' },
  failed: { from: openStatuses, kind: qrpayEntryKinds.fail, lines: qrpayFailLines, at: 'failed_at' },
  refunded: { from: ['completed'], kind: qrpayEntryKinds.refund, lines: qrpayRefundLines, at: 'refunded_at' },
} as const;

/**
 * Moves an order to a terminal status exactly once: the claim's winner alone posts the ledger
 * entry and writes the event, all in the caller's transaction.
 */
async function moveTo(
  trx: Transaction<Database>,
  id: string,
  to: TerminalStatus,
  fields: Record<string, unknown>,
): Promise<QrOrderRow | undefined> {
  const move = terminalMoves[to];
  const claimed = await claimMove<QrOrderRow>(trx, qrpayOrders, id, { to, from: move.from, at: move.at, fields });
  if (!claimed) return undefined;
  const money = { memberId: claimed.member_id, merchantId: claimed.merchant_id, amount: minorFromDb(claimed.amount) };
  await postOrderEntry(trx, claimed, {
    referenceType: qrpayReferenceType,
    kind: move.kind,
    asset: claimed.asset,
    lines: move.lines(money),
  });
  await emit(trx, claimed, to);
  return claimed;
}

const completeIn = (
  trx: Transaction<Database>,
  id: string,
  d: Decision & { kind: 'complete' | 'complete_and_refund' },
) => moveTo(trx, id, 'completed', { upstream_outcome: 'accepted', ...providerFields(d), next_check_at: null });

const failIn = (trx: Transaction<Database>, id: string, reason: FailureReason, d: Decision & { kind: 'fail' }) =>
  moveTo(trx, id, 'failed', { failure_reason: reason, ...providerFields(d), next_check_at: null });

/** Refunds a completed order once (undefined when another caller did, or it is not completed). */
export const refundIn = (trx: Transaction<Database>, id: string) =>
  moveTo(trx, id, 'refunded', { provider_status: 'refunded' });

/** Applies a decision that ends the order (exactly once by the claims), in the caller's transaction. */
async function settleIn(trx: Transaction<Database>, id: string, decision: Settlement<Decision>): Promise<void> {
  switch (decision.kind) {
    case 'complete':
      await completeIn(trx, id, decision);
      break;
    case 'complete_and_refund':
      await completeIn(trx, id, decision);
      await refundIn(trx, id);
      break;
    case 'fail':
      await failIn(trx, id, decision.reason, decision);
      break;
  }
}

/**
 * Applies a decision in one transaction and schedules the next re-query of an order that stays
 * open (the shared lifecycle's `decisionApplier`). `source` is `call` for the payment call's
 * answer (it only replaces `pending`) and `query` for a status query.
 */
export const applyDecision = decisionApplier<QrOrderRow, Decision>(qrpayOrders, providerFields, settleIn);
