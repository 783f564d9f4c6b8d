import type { CallContext, CallOutcome, MoneyRequest, NoAnswer, StatusOutcome } from '../port.js';

/** A QR payment network / acquirer: pays merchant-presented QR codes. */
export interface QrPayUpstream {
  readonly name: 'qrpay';
  /** Read-only: whether the provider serves this decoded QR (never affected by injection). */
  check(call: CallContext, req: QrCheckRequest): Promise<QrCheckOutcome>;
  /** Money-moving: pays the QR. `requestId` (our order id) is the provider's idempotency key. */
  pay(call: CallContext, req: QrPayRequest): Promise<CallOutcome>;
  /** Read-only: the provider's state of a payment, by our request id. */
  status(call: CallContext, requestId: string): Promise<StatusOutcome>;
  /** Acquirer-side refund of a completed payment (operator-initiated), by the payment's request id. */
  refund(call: CallContext, req: { paymentRequestId: string; amountMinor: bigint }): Promise<CallOutcome>;
}

export interface QrCheckRequest {
  scheme: string;
  /** The merchant account identity in the QR's scheme template: its sub-fields 01, 02, 03 joined by `|` (e.g.
   * `2|201403121W|1`). */
  merchantAccount: string;
}

export type QrCheckOutcome = { kind: 'ok' } | { kind: 'refused'; reason: string } | NoAnswer;

export interface QrPayRequest extends QrCheckRequest, MoneyRequest {
  qrCode: string;
}
