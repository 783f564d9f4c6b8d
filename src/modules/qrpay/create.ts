/**
 * POST /v1/qrpay/payments: the write around the provider call. A group-committed batch under a
 * claim on the idempotency key freezes the debit and opens the order; the provider is called
 * outside any transaction; a second transaction applies its answer.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import type { IdempotencyContext } from '../../platform/http/request-context.js';
import { ApiError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { minorFromDb, postEntryOrRefuse, qrpayFreezeLines, qrpayEntryKinds } from '../../money/index.js';
import { applyDecision } from './apply.js';
import { amountToPay, readQr, type ReadQr } from './decode.js';
import { callInFlight, callOf, safely } from './provider.js';
import { findByKey, insertOrder, payableAsset, reconcileAfter } from './queries.js';
import { reconcileOrder } from './reconcile.js';
import { qrpayReferenceType } from './rules.js';
import { decideOnCall, isOpen } from './state.js';
import type { QrOrderRow } from './tables.js';
import { orderView } from './views.js';
import type { Caller } from '../../platform/caller.js';
import { ownerColumns } from '../../db/owned-by.js';
import { assetScale } from '../assets/index.js';

/** Longest note kept with an order, in characters. */
export const noteLengthMax = 140;

export interface PaymentInput {
  qr_code: string;
  amount?: string;
  asset: string;
  note?: string;
}

/**
 * How long a payment holds its idempotency key while the provider is called: the call's deadline
 * twice over plus 10 s for the two transactions around it. A request that stopped (a crash) is
 * presumed gone after it, and a retry with the key resumes the order.
 */
export const claimLeaseMs = (ctx: ServiceContext) => 2 * ctx.config.upstreamCallTimeoutMs + 10_000;

type Payer = Caller & { memberId: string };

/**
 * The first transaction: validates against the catalogue, creates the order (`processing`,
 * version 1) and freezes the debit (available → frozen), or refuses.
 */
async function openOrder(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: Payer,
  idem: IdempotencyContext,
  input: PaymentInput,
  qr: ReadQr,
): Promise<QrOrderRow> {
  const { decoded, scheme } = qr;
  const asset = await payableAsset(trx, scheme, decoded);
  if (!asset) throw new ApiError('qr_code_invalid', `The ${scheme.name} scheme cannot be paid in ${decoded.currency}.`);
  if (input.asset.toUpperCase() !== asset.code)
    throw new ApiError('asset_not_allowed', `This QR code is paid in ${asset.code}.`);
  const amount = amountToPay(decoded, asset.scale, input.amount);
  const now = await ctx.clock.now(trx, caller);

  const order = await insertOrder(trx, {
    id: newId('qrp'),
    ...ownerColumns(caller),
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
    // Real time: it dates the provider call itself, whose deadline is real (provider.ts#callInFlight).
    call_started_at: ctx.clock.real(),
    // Should this process stop during the call, reconciliation takes the order over. Reconciliation
    // asks the provider on real time: the provider's own clock is real, whatever the sandbox clock says.
    next_check_at: reconcileAfter((ctx.config.upstreamCallTimeoutMs + ctx.config.upstreamReconcileDelayMs) / 1000),
    last_checked_at: null,
    completed_at: null,
    failed_at: null,
    refunded_at: null,
    created_at: now,
    updated_at: now,
  });
  await postEntryOrRefuse(trx, {
    environment: caller.environment,
    merchantId: caller.merchantId,
    kind: qrpayEntryKinds.freeze,
    referenceType: qrpayReferenceType,
    referenceId: order.id,
    asset: asset.code,
    lines: qrpayFreezeLines({ memberId: caller.memberId, amount }),
  });
  return order;
}

/** A payment to make: the payer, the request's key and body, and its QR code read. */
export interface PaymentPlan {
  caller: Payer;
  idem: IdempotencyContext;
  input: PaymentInput;
  qr: ReadQr;
}

/** What the batch's transaction made of a payment: its order, new or found under the key. */
export interface OpenedPayment {
  order: QrOrderRow;
  created: boolean;
}

/**
 * POST /v1/qrpay/payments is a claimed command (docs/write-model.md): `paymentPlan` reads the QR
 * code; `openPayment` runs in a group-committed batch, which stores a claim on the key: it
 * validates, freezes the debit and creates the order (`processing`, version 1); then
 * `finishPayment` calls the provider with the order id as its idempotency key and applies the
 * answer in a transaction of its own, and the answer replaces the claim. A request with the same
 * key meanwhile gets 409 `idempotency_in_progress`, afterwards the replay. After a 502/504 (not a
 * result: the claim is released) a retry with the key finds the order (never freezing twice),
 * re-queries the provider and answers from what it learns.
 */
export function paymentPlan(caller: Payer, idem: IdempotencyContext, input: PaymentInput): PaymentPlan {
  const qr = readQr(input.qr_code);
  if (input.note !== undefined && Array.from(input.note).length > noteLengthMax)
    throw new ApiError('invalid_request', `note has at most ${noteLengthMax} characters.`);
  return { caller, idem, input, qr };
}

export async function openPayment(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  { caller, idem, input, qr }: PaymentPlan,
): Promise<OpenedPayment> {
  // An order already made with this key (its request stopped, or answered 502/504) is resumed.
  const existing = await findByKey(trx, caller, idem.key);
  if (existing) return { order: existing, created: false };
  return { order: await openOrder(ctx, trx, caller, idem, input, qr), created: true };
}

export async function finishPayment(
  ctx: ServiceContext,
  { caller, idem, input, qr }: PaymentPlan,
  { order, created }: OpenedPayment,
) {
  if (!created) return resumePayment(ctx, caller, order, idem);
  const answer = await safely(ctx, () =>
    ctx.upstreams.qrpay.pay(callOf(caller), {
      requestId: order.id,
      scheme: qr.scheme.id,
      merchantAccount: qr.account.account,
      qrCode: input.qr_code,
      currency: order.asset,
      amountMinor: minorFromDb(order.amount),
    }),
  );
  const row = await applyDecision(ctx, order.id, decideOnCall(answer), 'call');
  return answerFor(ctx, row);
}

/**
 * A retry with the key of an existing order: same body and same member or 409 (a key is bound to
 * the member it was used for, as every stored result is: idempotency.ts compares the endpoint,
 * member included); in flight: 409; else re-query.
 */
async function resumePayment(ctx: ServiceContext, caller: Payer, order: QrOrderRow, idem: IdempotencyContext) {
  if (order.request_hash !== idem.requestHash || order.member_id !== caller.memberId)
    throw new ApiError('idempotency_key_reused');
  let row = order;
  if (isOpen(order.status)) {
    if (callInFlight(ctx, order)) throw new ApiError('idempotency_in_progress');
    row = await reconcileOrder(ctx, order);
  }
  return answerFor(ctx, row);
}

/** The HTTP answer for an order after the call (or a resume): the order, or 504/502 while the outcome is unknown. */
async function answerFor(ctx: ServiceContext, row: QrOrderRow) {
  if (row.status === 'processing') {
    if (row.upstream_outcome === 'timeout') throw new ApiError('upstream_timeout');
    if (row.upstream_outcome === 'unknown' || row.upstream_outcome === 'pending') throw new ApiError('upstream_error');
  }
  return orderView(row, await assetScale(ctx.db, row.asset));
}
