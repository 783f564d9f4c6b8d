import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import type { IdempotencyContext } from '../../platform/request-context.js';
import type { StoredResult } from '../../platform/idempotency.js';
import type { QrPayOrdersTable, QrPayOrderStatus } from '../../upstreams/tables.js';
import type { CallContext, CallOutcome, StatusOutcome } from '../../upstreams/types.js';
import type { QrCheckOutcome } from '../../upstreams/qrpay.js';
import { withDeadline } from '../../upstreams/deadline.js';
import { ApiError } from '../../platform/errors.js';
import { newId, withPrefix } from '../../platform/ids.js';
import { decodeCursor, pageSize, toPage } from '../../platform/pagination.js';
import { formatAmount, minorFromDb, parseAmount, postEntry, postEntryOrRefuse, recordEvent } from '../../ledger/index.js';
import { readAmount } from '../../ledger/money.js';
import { raiseAlert } from '../alerts/queries.js';
import { getAsset } from '../assets/queries.js';
import { EmvcoError, decodeEmvco, type DecodedQr, type MerchantAccount } from './emvco.js';
import { schemeOf, type QrScheme } from './schemes.js';
import { qrpayCompleteLines, qrpayEntryKinds, qrpayFailLines, qrpayFreezeLines, qrpayReferenceType, qrpayRefundLines } from './rules.js';
import { decideOnCall, decideOnQuery, isOpen, openStatuses, publicStatus, recheckDelayMs, type Decision, type FailureReason, type PublicStatus } from './state.js';

type Db = Kysely<Database> | Transaction<Database>;
export type QrOrderRow = Selectable<QrPayOrdersTable>;

export interface Caller {
  merchantId: string;
  environment: Environment;
  /** Set when acting on behalf of a member: only that member's orders are visible. */
  memberId?: string;
}

/** Longest note kept with an order, in characters. */
export const noteLengthMax = 140;
/** Orders re-queried per reconciliation pass (bounded batch). */
export const reconcileBatchMax = 50;
/** How long a claimed order is held by one pass before another process may take it, in seconds. */
export const reconcileLeaseSeconds = 60;
/** Re-queries after which an order still open raises one `upstream.reconciliation_stalled` alert. */
export const reconcileStalledAfterChecks = 20;

// ---------------------------------------------------------------------------------------------
// Decoding

function decodeOrThrow(qrCode: string): DecodedQr {
  try {
    return decodeEmvco(qrCode);
  } catch (err) {
    if (err instanceof EmvcoError) throw new ApiError('qr_code_invalid', err.message);
    throw err;
  }
}

function schemeOrThrow(decoded: DecodedQr): { scheme: QrScheme; account: MerchantAccount } {
  const found = schemeOf(decoded);
  if (!found) throw new ApiError('qr_code_invalid', 'The QR code is of a scheme the service does not support.');
  return found;
}

/**
 * The QR amount in minor units at `scale`, or null; too many decimals for the currency is an
 * invalid QR. The code is the payee's text, not ours: leading zeros ("05.00") are read past.
 */
function qrAmountMinor(decoded: DecodedQr, scale: number): bigint | null {
  if (decoded.amount === null) return null;
  const reading = readAmount(decoded.amount.replace(/^0+(?=\d)/, ''), scale);
  if (!reading.ok) throw new ApiError('qr_code_invalid', 'The QR amount has more decimal places than its currency allows.');
  return reading.minor;
}

/** Whether the catalogue can pay the scheme: an enabled fiat asset of its currency, matching the QR. */
async function payableAsset(db: Db, scheme: QrScheme, decoded: DecodedQr) {
  if (decoded.currency !== scheme.currency) return undefined;
  const asset = await getAsset(db, scheme.currency);
  return asset && asset.enabled && asset.type === 'fiat' ? asset : undefined;
}

function upstreamCheckError(kind: 'refused' | 'timeout' | 'unknown'): ApiError {
  if (kind === 'refused') return new ApiError('qr_code_invalid', 'The QR code was refused by the payment network.');
  return kind === 'timeout' ? new ApiError('upstream_timeout') : new ApiError('upstream_error');
}

/** POST /v1/qrpay/decode: what the QR says, checked with the provider (read-only). */
export async function decodeQr(ctx: ServiceContext, caller: Caller, qrCode: string) {
  const decoded = decodeOrThrow(qrCode);
  const { scheme, account } = schemeOrThrow(decoded);
  const check = await safely(ctx, () => ctx.upstreams.qrpay.check(callOf(caller), { scheme: scheme.id, merchantAccount: account.account }));
  if (check.kind !== 'ok') throw upstreamCheckError(check.kind);
  const asset = await payableAsset(ctx.db, scheme, decoded);
  const amount = qrAmountMinor(decoded, decoded.currencyScale);
  return {
    scheme: scheme.id,
    scheme_name: scheme.name,
    payable: asset !== undefined,
    merchant_name: decoded.merchantName,
    merchant_city: decoded.merchantCity,
    country: decoded.country,
    currency: decoded.currency,
    amount: amount === null ? null : formatAmount(amount, asset?.scale ?? decoded.currencyScale),
    merchant_category_code: decoded.merchantCategoryCode,
    point_of_initiation: decoded.pointOfInitiation,
    reference: decoded.reference,
  };
}

// ---------------------------------------------------------------------------------------------
// Views

export function orderView(o: QrOrderRow, scale: number) {
  return {
    id: o.id,
    status: publicStatus(o.status),
    status_version: o.status_version,
    member_id: o.member_id,
    scheme: o.scheme,
    merchant_name: o.merchant_name,
    merchant_city: o.merchant_city,
    country: o.country,
    asset: o.asset,
    amount: formatAmount(minorFromDb(o.amount), scale),
    note: o.note,
    failure_reason: o.failure_reason,
    created_at: new Date(o.created_at).toISOString(),
    updated_at: new Date(o.updated_at).toISOString(),
  };
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** The operator's view: the public one plus our internal state and the provider's side. */
export function operatorOrderView(o: QrOrderRow, scale: number) {
  return {
    ...orderView(o, scale),
    merchant_id: o.merchant_id,
    environment: o.environment,
    internal_status: o.status,
    upstream: 'qrpay',
    upstream_outcome: o.upstream_outcome,
    provider_order_id: o.provider_order_id,
    provider_status: o.provider_status,
    call_started_at: iso(o.call_started_at)!,
    check_count: o.check_count,
    next_check_at: iso(o.next_check_at),
    last_checked_at: iso(o.last_checked_at),
    completed_at: iso(o.completed_at),
    failed_at: iso(o.failed_at),
    refunded_at: iso(o.refunded_at),
  };
}

export async function scaleOf(db: Db, asset: string): Promise<number> {
  const a = await db.selectFrom('assets').select('scale').where('code', '=', asset).executeTakeFirst();
  if (!a) throw new Error(`qrpay: asset ${asset} missing from the catalogue`);
  return a.scale;
}

// ---------------------------------------------------------------------------------------------
// Payments

export interface PaymentInput {
  qr_code: string;
  amount?: string;
  asset: string;
  note?: string;
}

const callOf = (o: { merchantId: string; environment: Environment } | { merchant_id: string; environment: Environment }): CallContext =>
  'merchantId' in o ? { merchantId: o.merchantId, environment: o.environment } : { merchantId: o.merchant_id, environment: o.environment };

async function findByKey(trx: Transaction<Database>, caller: Caller, key: string): Promise<QrOrderRow | undefined> {
  return trx
    .selectFrom('qrpay_orders')
    .selectAll()
    .where('merchant_id', '=', caller.merchantId)
    .where('environment', '=', caller.environment)
    .where('idempotency_key', '=', key)
    // The idempotency window: after 24 hours a key is new.
    .where('created_at', '>', sql<Date>`now() - interval '24 hours'`)
    .orderBy('seq', 'desc')
    .executeTakeFirst();
}

/**
 * How long a payment holds its idempotency key while the provider is called: the call's deadline
 * twice over plus 10 s for the two transactions around it. A request that stopped (a crash) is
 * presumed gone after it, and a retry with the key resumes the order.
 */
export const claimLeaseMs = (ctx: ServiceContext) => 2 * ctx.config.upstreamCallTimeoutMs + 10_000;

/** Runs the first transaction under the key's claim (`claimWrite` bound to the request). */
export type ClaimKey = <T>(leaseMs: number, effect: (trx: Transaction<Database>) => Promise<T>) => Promise<{ value: T } | { replay: StoredResult }>;

export type PaymentAnswer = { order: ReturnType<typeof orderView> } | { replay: StoredResult };

/**
 * POST /v1/qrpay/payments, through the one idempotency mechanism: one transaction claims the key,
 * validates, freezes the debit and creates the order (`processing`, version 1); the provider is
 * called outside it with the order id as its idempotency key; a second transaction applies the
 * answer, and the answer replaces the claim. A request with the same key meanwhile gets 409
 * `idempotency_in_progress`, afterwards the replay. After a 502/504 (not a result: the claim is
 * released) a retry with the key finds the order (never freezing twice), re-queries the provider
 * and answers from what it learns.
 */
export async function createPayment(
  ctx: ServiceContext, caller: Caller & { memberId: string }, idem: IdempotencyContext, input: PaymentInput, claimKey: ClaimKey,
): Promise<PaymentAnswer> {
  const decoded = decodeOrThrow(input.qr_code);
  const { scheme, account } = schemeOrThrow(decoded);
  if (input.note !== undefined && Array.from(input.note).length > noteLengthMax) throw new ApiError('invalid_request', `note has at most ${noteLengthMax} characters.`);

  const first = await claimKey(claimLeaseMs(ctx), async (trx) => {
    // An order already made with this key (its request stopped, or answered 502/504) is resumed.
    const existing = await findByKey(trx, caller, idem.key);
    if (existing) return { order: existing, created: false };

    const asset = await payableAsset(trx, scheme, decoded);
    if (!asset) throw new ApiError('qr_code_invalid', `The ${scheme.name} scheme cannot be paid in ${decoded.currency}.`);
    if (input.asset.toUpperCase() !== asset.code) throw new ApiError('asset_not_allowed', `This QR code is paid in ${asset.code}.`);
    const qrAmount = qrAmountMinor(decoded, asset.scale);
    let amount: bigint;
    if (input.amount !== undefined) {
      amount = parseAmount(input.amount, asset.scale);
      if (qrAmount !== null && amount !== qrAmount) {
        throw new ApiError('invalid_request', `amount must equal the QR code's amount (${formatAmount(qrAmount, asset.scale)}).`);
      }
    } else if (qrAmount !== null) {
      amount = qrAmount;
    } else {
      throw new ApiError('invalid_request', 'amount is required: the QR code carries no amount.');
    }
    if (amount <= 0n) throw new ApiError('invalid_request', 'amount must be greater than zero.');

    const order = await trx
      .insertInto('qrpay_orders')
      .values({
        id: newId('qrp'),
        merchant_id: caller.merchantId,
        environment: caller.environment,
        member_id: caller.memberId,
        idempotency_key: idem.key,
        request_hash: idem.requestHash,
        scheme: scheme.id,
        merchant_name: decoded.merchantName,
        merchant_city: decoded.merchantCity,
        country: decoded.country,
        asset: asset.code,
        amount: amount.toString(),
        note: input.note ?? null,
        qr_code: input.qr_code,
        status: 'processing',
        status_version: 1,
        upstream_outcome: 'pending',
        provider_order_id: null,
        provider_status: null,
        failure_reason: null,
        call_started_at: new Date(),
        // Should this process stop during the call, reconciliation takes the order over.
        next_check_at: sql<Date>`now() + make_interval(secs => ${(ctx.config.upstreamCallTimeoutMs + ctx.config.upstreamReconcileDelayMs) / 1000})` as unknown as Date,
        last_checked_at: null,
        completed_at: null,
        failed_at: null,
        refunded_at: null,
        updated_at: new Date(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await postEntryOrRefuse(trx, {
      environment: caller.environment,
      merchantId: caller.merchantId,
      kind: qrpayEntryKinds.freeze,
      referenceType: qrpayReferenceType,
      referenceId: order.id,
      asset: asset.code,
      lines: qrpayFreezeLines({ memberId: caller.memberId, amount }),
    });
    return { order, created: true };
  });
  if ('replay' in first) return first;
  const { order, created } = first.value;
  if (!created) return { order: await resumePayment(ctx, order, idem) };

  const answer = await safely(ctx, () => ctx.upstreams.qrpay.pay(callOf(caller), {
    requestId: order.id,
    scheme: scheme.id,
    merchantAccount: account.account,
    qrCode: input.qr_code,
    currency: order.asset,
    amountMinor: minorFromDb(order.amount),
  }));
  const row = await applyDecision(ctx, order.id, decideOnCall(answer), 'call');
  return { order: await answerFor(ctx, row) };
}

/** A retry with the key of an existing order: same body or 409; in flight: 409; else re-query. */
async function resumePayment(ctx: ServiceContext, order: QrOrderRow, idem: IdempotencyContext) {
  if (order.request_hash !== idem.requestHash) {
    idem.noStore = true;
    throw new ApiError('idempotency_key_reused');
  }
  let row = order;
  if (isOpen(order.status)) {
    if (callInFlight(ctx, order)) {
      idem.noStore = true;
      throw new ApiError('idempotency_in_progress');
    }
    row = await reconcileOrder(ctx, order);
  }
  return answerFor(ctx, row);
}

function callInFlight(ctx: ServiceContext, order: QrOrderRow): boolean {
  return order.upstream_outcome === 'pending' && Date.now() - new Date(order.call_started_at).getTime() < ctx.config.upstreamCallTimeoutMs;
}

/** The HTTP answer for an order after the call (or a resume): the order, or 504/502 while the outcome is unknown. */
async function answerFor(ctx: ServiceContext, row: QrOrderRow) {
  if (row.status === 'processing') {
    if (row.upstream_outcome === 'timeout') throw new ApiError('upstream_timeout');
    if (row.upstream_outcome === 'unknown' || row.upstream_outcome === 'pending') throw new ApiError('upstream_error');
  }
  return orderView(row, await scaleOf(ctx.db, row.asset));
}

/** Every provider call runs under the configured deadline (see withDeadline). */
function safely<T extends CallOutcome | StatusOutcome | QrCheckOutcome>(ctx: ServiceContext, call: () => Promise<T>) {
  return withDeadline(ctx.config.upstreamCallTimeoutMs, call);
}

// ---------------------------------------------------------------------------------------------
// Applying what the provider said: each transition is one conditional UPDATE (the claim), and the
// ledger entry and the event are written only by the transaction that won it.

async function externalIdOf(trx: Transaction<Database>, memberId: string): Promise<string> {
  const m = await trx.selectFrom('members').select('external_member_id').where('id', '=', memberId).executeTakeFirst();
  return m?.external_member_id ?? '';
}

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
    .set((eb) => ({ ...fields, status: to, status_version: eb('status_version', '+', 1), [move.at]: new Date(), updated_at: new Date() }))
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

const refundIn = (trx: Transaction<Database>, id: string) => moveTo(trx, id, 'refunded', { provider_status: 'refunded' });

async function suspendIn(trx: Transaction<Database>, id: string, d: Extract<Decision, { kind: 'suspend' }>): Promise<void> {
  // Ours, not the caller's: status_version (which orders the caller's view) does not move.
  const claimed = await trx
    .updateTable('qrpay_orders')
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
    object: 'qrpay_order',
    objectId: claimed.id,
    message: d.alertKind === 'upstream.unknown_status'
      ? `QR payment ${claimed.id}: the provider answered a status outside our enumeration (${d.providerStatus}); the order is suspended with its funds frozen until an operator resolves it.`
      : `QR payment ${claimed.id}: the provider no longer finds an order it had accepted; suspended with its funds frozen.`,
  });
}

/**
 * Applies a decision in one transaction and schedules the next re-query of an order that stays
 * open. `source` is `call` for the payment call's answer (it only replaces `pending`) and `query`
 * for a status query (counted in check_count, which drives the backoff).
 */
export async function applyDecision(ctx: ServiceContext, id: string, decision: Decision, source: 'call' | 'query'): Promise<QrOrderRow> {
  return ctx.db.transaction().execute(async (trx) => {
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

/** Re-queries the provider for one open order and applies the answer (exactly once by the claims). */
export async function reconcileOrder(ctx: ServiceContext, order: QrOrderRow): Promise<QrOrderRow> {
  if (!isOpen(order.status) || callInFlight(ctx, order)) return order;
  const answer = await safely(ctx, () => ctx.upstreams.qrpay.status(callOf(order), order.id));
  const callAgeMs = Date.now() - new Date(order.call_started_at).getTime();
  const decision = decideOnQuery({ status: order.status, upstreamOutcome: order.upstream_outcome, callAgeMs }, answer, ctx.config.upstreamNotFoundGraceMs);
  return applyDecision(ctx, order.id, decision, 'query');
}

/**
 * One reconciliation pass: claims up to `batchMax` due open orders (SKIP LOCKED, so concurrent
 * processes take different ones; the claim pushes next_check_at out by a lease), then re-queries
 * each outside any transaction. Answers how many were looked at.
 */
export async function reconcileDueOrders(ctx: ServiceContext, batchMax = reconcileBatchMax): Promise<number> {
  const claimed = await ctx.db
    .updateTable('qrpay_orders')
    .set({ next_check_at: sql<Date>`now() + make_interval(secs => ${reconcileLeaseSeconds})` as unknown as Date })
    .where('id', 'in', (eb) => eb
      .selectFrom('qrpay_orders')
      .select('id')
      .where('status', 'in', openStatuses)
      .where('next_check_at', '<=', sql<Date>`now()`)
      .orderBy('next_check_at')
      .limit(batchMax)
      .forUpdate()
      .skipLocked())
    .returningAll()
    .execute();
  for (const order of claimed) {
    try {
      await reconcileOrder(ctx, order);
    } catch {
      // The lease lapses and a later pass tries again.
    }
  }
  return claimed.length;
}

// ---------------------------------------------------------------------------------------------
// Operator actions

export async function findOrder(db: Db, id: string, caller?: Caller): Promise<QrOrderRow | undefined> {
  let q = db.selectFrom('qrpay_orders').selectAll().where('id', '=', withPrefix('qrp', id));
  if (caller) {
    q = q.where('merchant_id', '=', caller.merchantId).where('environment', '=', caller.environment);
    if (caller.memberId) q = q.where('member_id', '=', caller.memberId);
  }
  return q.executeTakeFirst();
}

/** Acquirer-side refund of a completed payment, asked of the provider, then applied once. */
export async function refundPayment(ctx: ServiceContext, id: string): Promise<{ row: QrOrderRow; replayed: boolean }> {
  const order = await findOrder(ctx.db, id);
  if (!order) throw new ApiError('not_found', 'No such QR payment.');
  if (order.status === 'refunded') return { row: order, replayed: true };
  if (order.status !== 'completed') throw new ApiError('state_invalid', `The payment is ${publicStatus(order.status)}; only a completed payment can be refunded.`);
  const answer = await safely(ctx, () => ctx.upstreams.qrpay.refund(callOf(order), { paymentRequestId: order.id, amountMinor: minorFromDb(order.amount) }));
  if (answer.kind === 'rejected') throw new ApiError('request_rejected', `The provider refused the refund: ${answer.reason}.`);
  if (answer.kind === 'timeout') throw new ApiError('upstream_timeout');
  if (answer.kind === 'unknown') throw new ApiError('upstream_error');
  const row = await ctx.db.transaction().execute(async (trx) => refundIn(trx, order.id));
  if (row) return { row, replayed: false };
  const now = (await findOrder(ctx.db, order.id))!;
  return { row: now, replayed: true };
}

/** The operator settles an open (typically suspended) order after checking with the provider. */
export async function resolvePayment(ctx: ServiceContext, id: string, status: 'completed' | 'failed'): Promise<QrOrderRow> {
  const order = await findOrder(ctx.db, id);
  if (!order) throw new ApiError('not_found', 'No such QR payment.');
  if (!isOpen(order.status)) {
    if (order.status === status) return order;
    throw new ApiError('state_invalid', `The payment is already ${order.status}.`);
  }
  const decision: Decision = status === 'completed' ? { kind: 'complete' } : { kind: 'fail', reason: 'operator' };
  const row = await applyDecision(ctx, order.id, decision, 'query');
  if (row.status !== status) throw new ApiError('state_invalid', `The payment became ${row.status} meanwhile.`);
  return row;
}

// ---------------------------------------------------------------------------------------------
// Reads

export async function getPayment(db: Db, caller: Caller, id: string) {
  const row = await findOrder(db, id, caller);
  if (!row) throw new ApiError('not_found', 'No such QR payment.');
  return orderView(row, await scaleOf(db, row.asset));
}

const statusesOf = (s: PublicStatus): QrPayOrderStatus[] => (s === 'processing' ? ['processing', 'suspended'] : [s]);

export async function listPayments(db: Db, caller: Caller, query: { limit?: number; cursor?: string; status?: PublicStatus }) {
  const limit = pageSize(query.limit);
  const after = decodeCursor(query.cursor);
  let q = db.selectFrom('qrpay_orders').selectAll().where('merchant_id', '=', caller.merchantId).where('environment', '=', caller.environment);
  if (caller.memberId) q = q.where('member_id', '=', caller.memberId);
  if (query.status) q = q.where('status', 'in', statusesOf(query.status));
  if (after !== undefined) q = q.where('seq', '<', after.toString() as unknown as bigint);
  const rows = await q.orderBy('seq', 'desc').limit(limit + 1).execute();
  const scales = new Map<string, number>();
  for (const r of rows) if (!scales.has(r.asset)) scales.set(r.asset, await scaleOf(db, r.asset));
  return toPage(rows, limit, (r) => orderView(r, scales.get(r.asset)!));
}

/** Open orders for the operator's reconciliation view, oldest first (bounded page). */
export async function listOpenOrders(db: Db, query: { limit?: number; cursor?: string; merchant_id?: string }) {
  const limit = pageSize(query.limit);
  const after = decodeCursor(query.cursor);
  let q = db.selectFrom('qrpay_orders').selectAll().where('status', 'in', openStatuses);
  if (query.merchant_id) q = q.where('merchant_id', '=', query.merchant_id);
  if (after !== undefined) q = q.where('seq', '<', after.toString() as unknown as bigint);
  const rows = await q.orderBy('seq', 'desc').limit(limit + 1).execute();
  const scales = new Map<string, number>();
  for (const r of rows) if (!scales.has(r.asset)) scales.set(r.asset, await scaleOf(db, r.asset));
  return toPage(rows, limit, (r) => operatorOrderView(r, scales.get(r.asset)!));
}
