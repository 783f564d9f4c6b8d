/**
 * Applying what the provider (or the operator) said to a remittance order: each transition is one
 * conditional UPDATE (the claim), and only the transaction that won it posts the ledger entry
 * (itself unique by order and kind) and writes the `remittance.order.*` event.
 */
import { sql, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import { minorFromDb, postEntry, recordEvent, type EntryLine } from '../../ledger/index.js';
import { raiseAlert } from '../alerts/queries.js';
import { externalIdOf } from './order-queries.js';
import { remitCompleteLines, remitEntryKinds, remitFailLines, remitReferenceType, remitReturnLines, type OrderMoney } from './rules.js';
import { isOpen, movesFrom, openStatuses, publicStatus, recheckDelayMs, type Decision, type FailureReason } from './state.js';
import type { RemitOrderRow } from './tables.js';

/** Re-queries after which an order still open raises one `upstream.reconciliation_stalled` alert. */
export const reconcileStalledAfterChecks = 20;

export async function emitOrderEvent(trx: Transaction<Database>, row: RemitOrderRow): Promise<void> {
  const status = publicStatus(row.status);
  await recordEvent(trx, {
    merchantId: row.merchant_id,
    environment: row.environment,
    type: `remittance.order.${status}`,
    object: 'remittance_order',
    objectId: row.id,
    externalMemberId: await externalIdOf(trx, row.member_id),
    status,
    statusVersion: row.status_version,
  });
}

const moneyOf = (row: RemitOrderRow): OrderMoney => ({
  memberId: row.member_id, merchantId: row.merchant_id, amount: minorFromDb(row.source_amount), fee: minorFromDb(row.fee),
});

async function post(trx: Transaction<Database>, row: RemitOrderRow, kind: string, lines: EntryLine[]): Promise<void> {
  await postEntry(trx, {
    environment: row.environment, merchantId: row.merchant_id, kind, referenceType: remitReferenceType, referenceId: row.id, asset: row.source_asset, lines,
  });
}

type Terminal = 'completed' | 'failed' | 'returned';
const terminal = {
  completed: { kind: remitEntryKinds.complete, lines: remitCompleteLines, at: 'completed_at' },
  failed: { kind: remitEntryKinds.fail, lines: remitFailLines, at: 'failed_at' },
  returned: { kind: remitEntryKinds.return, lines: remitReturnLines, at: 'returned_at' },
} as const;

/** Moves an order to a terminal status exactly once (undefined when it is not in a state it may leave). */
async function moveTo(trx: Transaction<Database>, id: string, to: Terminal, fields: Record<string, unknown>): Promise<RemitOrderRow | undefined> {
  const move = terminal[to];
  const claimed = await trx
    .updateTable('remit_orders')
    .set((eb) => ({ ...fields, status: to, status_version: eb('status_version', '+', 1), [move.at]: sql`now()`, updated_at: new Date() }))
    .where('id', '=', id)
    .where('status', 'in', [...movesFrom[to]])
    .returningAll()
    .executeTakeFirst();
  if (!claimed) return undefined;
  await post(trx, claimed, move.kind, move.lines(moneyOf(claimed)));
  await emitOrderEvent(trx, claimed);
  return claimed;
}

interface ProviderFacts {
  providerOrderId?: string;
  providerStatus?: string;
  payoutDate?: string;
}

const providerFields = (d: ProviderFacts) => ({
  ...(d.providerOrderId ? { provider_order_id: d.providerOrderId } : {}),
  ...(d.providerStatus ? { provider_status: d.providerStatus } : {}),
  ...(d.payoutDate ? { payout_date: d.payoutDate } : {}),
});

export const failIn = (trx: Transaction<Database>, id: string, reason: FailureReason, d: ProviderFacts = {}) =>
  moveTo(trx, id, 'failed', { failure_reason: reason, ...providerFields(d), next_check_at: null });

const completeIn = (trx: Transaction<Database>, id: string, d: ProviderFacts) =>
  moveTo(trx, id, 'completed', { upstream_outcome: 'accepted', ...providerFields(d), next_check_at: null });

export const returnIn = (trx: Transaction<Database>, id: string, d: ProviderFacts = {}) => moveTo(trx, id, 'returned', providerFields(d));

async function suspendIn(trx: Transaction<Database>, id: string, d: Extract<Decision, { kind: 'suspend' }>): Promise<void> {
  // Ours, not the caller's: status_version (which orders the caller's view) does not move.
  const claimed = await trx
    .updateTable('remit_orders')
    .set({ status: 'suspended', upstream_outcome: 'accepted', ...providerFields(d), updated_at: new Date() })
    .where('id', '=', id)
    .where('status', '=', 'processing')
    .returningAll()
    .executeTakeFirst();
  if (!claimed) return;
  await raiseAlert(trx, {
    kind: d.alertKind,
    merchantId: claimed.merchant_id,
    environment: claimed.environment,
    object: 'remittance_order',
    objectId: claimed.id,
    message: d.alertKind === 'upstream.unknown_status'
      ? `Remittance ${claimed.id}: the provider answered a status outside our enumeration (${d.providerStatus}); the order is suspended with its funds frozen until an operator resolves it.`
      : `Remittance ${claimed.id}: the provider no longer finds a payout it had accepted; suspended with its funds frozen.`,
  });
}

async function applyIn(trx: Transaction<Database>, id: string, decision: Decision, source: 'call' | 'query'): Promise<void> {
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
    case 'suspend':
      await suspendIn(trx, id, decision);
      break;
    case 'wait': {
      let q = trx
        .updateTable('remit_orders')
        .set({ upstream_outcome: decision.outcome, ...providerFields(decision), updated_at: new Date() })
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
 * open. `source`: `call` for the payout call's answer, `query` for a status query (counted in
 * check_count, which drives the backoff).
 */
export async function applyDecision(ctx: ServiceContext, id: string, decision: Decision, source: 'call' | 'query'): Promise<RemitOrderRow> {
  return ctx.db.transaction().execute(async (trx) => {
    await applyIn(trx, id, decision, source);
    const row = await trx.selectFrom('remit_orders').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    if (!isOpen(row.status)) return row;
    const checks = row.check_count + (source === 'query' ? 1 : 0);
    if (source === 'query' && checks === reconcileStalledAfterChecks) {
      await raiseAlert(trx, {
        kind: 'upstream.reconciliation_stalled',
        merchantId: row.merchant_id,
        environment: row.environment,
        object: 'remittance_order',
        objectId: row.id,
        message: `Remittance ${row.id} is still unresolved after ${checks} status queries (last provider status: ${row.provider_status ?? 'none'}); its funds stay frozen.`,
      });
    }
    const delayMs = recheckDelayMs(Math.max(1, checks), ctx.config.upstreamReconcileDelayMs, ctx.config.upstreamReconcileMaxDelayMs);
    return trx
      .updateTable('remit_orders')
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
