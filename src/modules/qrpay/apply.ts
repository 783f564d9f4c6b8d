/**
 * Applying what the provider (or the operator) said to an order: each transition is one
 * conditional UPDATE (the claim), and the ledger entry and the event are written only by the
 * transaction that won it.
 */
import { sql, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import { minorFromDb, postEntry, recordEvent } from '../../ledger/index.js';
import { raiseAlert } from '../alerts/queries.js';
import { externalIdOf } from './queries.js';
import { qrpayCompleteLines, qrpayEntryKinds, qrpayFailLines, qrpayReferenceType, qrpayRefundLines } from './rules.js';
import { isOpen, openStatuses, recheckDelayMs, type Decision, type FailureReason } from './state.js';
import type { QrOrderRow } from './tables.js';
import { scopeNowSql } from '../../platform/clock.js';

/** The order's merchant's time (a sandbox merchant's own clock), for the order's timestamps in an UPDATE of it. */
const orderNow = () => scopeNowSql(sql.ref('qrpay_orders.merchant_id'), sql.ref('qrpay_orders.environment'));

/** Re-queries after which an order still open raises one `upstream.reconciliation_stalled` alert. */
export const reconcileStalledAfterChecks = 20;

async function emit(trx: Transaction<Database>, row: QrOrderRow, status: 'completed' | 'failed' | 'refunded'): Promise<void> {
  await recordEvent(trx, {
    merchantId: row.merchant_id,
    environment: row.environment,
    type: `qrpay.order.${status}`,
    object: 'qrpay_order',
    objectId: row.id,
    externalMemberId: await externalIdOf(trx, row.member_id),
    status,
    statusVersion: row.status_version,
  });
}

async function post(trx: Transaction<Database>, row: QrOrderRow, kind: string, lines: ReturnType<typeof qrpayFailLines>): Promise<void> {
  await postEntry(trx, {
    environment: row.environment,
    merchantId: row.merchant_id,
    kind,
    referenceType: qrpayReferenceType,
    referenceId: row.id,
    asset: row.asset,
    lines,
  });
}

interface ProviderFacts {
  providerOrderId?: string;
  providerStatus?: string;
}

const providerFields = (d: ProviderFacts) => ({
  ...(d.providerOrderId ? { provider_order_id: d.providerOrderId } : {}),
  ...(d.providerStatus ? { provider_status: d.providerStatus } : {}),
});

type TerminalStatus = 'completed' | 'failed' | 'refunded';

const terminalMoves = {
  completed: { from: openStatuses, kind: qrpayEntryKinds.complete, lines: qrpayCompleteLines, at: 'completed_at' },
  failed: { from: openStatuses, kind: qrpayEntryKinds.fail, lines: qrpayFailLines, at: 'failed_at' },
  refunded: { from: ['completed'], kind: qrpayEntryKinds.refund, lines: qrpayRefundLines, at: 'refunded_at' },
} as const;

/**
 * Moves an order to a terminal status exactly once: one conditional UPDATE claims the move (of
 * concurrent callers only one sees the order in a state it may leave), then that caller alone
 * posts the ledger entry and writes the event, all in the caller's transaction.
 */
async function moveTo(trx: Transaction<Database>, id: string, to: TerminalStatus, fields: Record<string, unknown>): Promise<QrOrderRow | undefined> {
  const move = terminalMoves[to];
  const claimed = await trx
    .updateTable('qrpay_orders')
    .set((eb) => ({ ...fields, status: to, status_version: eb('status_version', '+', 1), [move.at]: orderNow(), updated_at: orderNow() }))
    .where('id', '=', id)
    .where('status', 'in', [...move.from])
    .returningAll()
    .executeTakeFirst();
  if (!claimed) return undefined;
  await post(trx, claimed, move.kind, move.lines({ memberId: claimed.member_id, amount: minorFromDb(claimed.amount) }));
  await emit(trx, claimed, to);
  return claimed;
}

const completeIn = (trx: Transaction<Database>, id: string, d: ProviderFacts) =>
  moveTo(trx, id, 'completed', { upstream_outcome: 'accepted', ...providerFields(d), next_check_at: null });

const failIn = (trx: Transaction<Database>, id: string, reason: FailureReason, d: ProviderFacts) =>
  moveTo(trx, id, 'failed', { failure_reason: reason, ...providerFields(d), next_check_at: null });

/** Refunds a completed order once (undefined when another caller did, or it is not completed). */
export const refundIn = (trx: Transaction<Database>, id: string) => moveTo(trx, id, 'refunded', { provider_status: 'refunded' });

async function suspendIn(trx: Transaction<Database>, id: string, d: Extract<Decision, { kind: 'suspend' }>): Promise<void> {
  // Ours, not the caller's: status_version (which orders the caller's view) does not move.
  const claimed = await trx
    .updateTable('qrpay_orders')
    .set({ status: 'suspended', upstream_outcome: 'accepted', ...providerFields(d), updated_at: orderNow() })
    .where('id', '=', id)
    .where('status', '=', 'processing')
    .returningAll()
    .executeTakeFirst();
  if (!claimed) return;
  await raiseAlert(trx, {
    kind: d.alertKind,
    merchantId: claimed.merchant_id,
    environment: claimed.environment,
    object: 'qrpay_order',
    objectId: claimed.id,
    message: d.alertKind === 'upstream.unknown_status'
      ? `QR payment ${claimed.id}: the provider answered a status outside our enumeration (${d.providerStatus}); the order is suspended with its funds frozen until an operator resolves it.`
      : `QR payment ${claimed.id}: the provider no longer finds an order it had accepted; suspended with its funds frozen.`,
  });
}

async function applyIn(trx: Transaction<Database>, id: string, decision: Decision, source: 'call' | 'query'): Promise<void> {
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
    case 'suspend':
      await suspendIn(trx, id, decision);
      break;
    case 'wait': {
      let q = trx
        .updateTable('qrpay_orders')
        .set({ upstream_outcome: decision.outcome, ...providerFields(decision), updated_at: orderNow() })
        .where('id', '=', id)
        .where('status', 'in', openStatuses);
      // A late call answer never overwrites what a query has learnt since.
      if (source === 'call') q = q.where('upstream_outcome', '=', 'pending');
      await q.execute();
      break;
    }
    case 'none':
      break;
  }
}

/**
 * Applies a decision in one transaction and schedules the next re-query of an order that stays
 * open. `source` is `call` for the payment call's answer (it only replaces `pending`) and `query`
 * for a status query (counted in check_count, which drives the backoff).
 */
export async function applyDecision(ctx: ServiceContext, id: string, decision: Decision, source: 'call' | 'query'): Promise<QrOrderRow> {
  return ctx.db.transaction().execute(async (trx) => {
    await applyIn(trx, id, decision, source);
    const row = await trx.selectFrom('qrpay_orders').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    if (!isOpen(row.status)) return row;
    const checks = row.check_count + (source === 'query' ? 1 : 0);
    if (source === 'query' && checks === reconcileStalledAfterChecks) {
      await raiseAlert(trx, {
        kind: 'upstream.reconciliation_stalled',
        merchantId: row.merchant_id,
        environment: row.environment,
        object: 'qrpay_order',
        objectId: row.id,
        message: `QR payment ${row.id} is still unresolved after ${checks} status queries (last provider status: ${row.provider_status ?? 'none'}); its funds stay frozen.`,
      });
    }
    const delayMs = recheckDelayMs(Math.max(1, checks), ctx.config.upstreamReconcileDelayMs, ctx.config.upstreamReconcileMaxDelayMs);
    return trx
      .updateTable('qrpay_orders')
      .set({
        check_count: checks,
        next_check_at: sql<Date>`now() + make_interval(secs => ${delayMs / 1000})` as unknown as Date,
        ...(source === 'query' ? { last_checked_at: sql<Date>`now()` as unknown as Date } : {}),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}
