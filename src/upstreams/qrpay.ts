import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { SimulatedUpstream, simulatorRefusedPrefix, type SimulatorOptions } from './simulator.js';
import type { CallContext, CallOutcome, MoneyRequest, StatusOutcome } from './types.js';

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
  /** The merchant account identity in the QR's scheme template: its sub-fields 01, 02, 03 joined by `|` (e.g. `2|201403121W|1`). */
  merchantAccount: string;
}

export type QrCheckOutcome = { kind: 'ok' } | { kind: 'refused'; reason: string } | { kind: 'timeout' } | { kind: 'unknown'; reason: string };

export interface QrPayRequest extends QrCheckRequest, MoneyRequest {
  qrCode: string;
}

/** Sandbox test data: a QR whose merchant account has a sub-field starting with this is refused by the simulated provider. */
export const simulatorRefusedAccountPrefix = simulatorRefusedPrefix;

export class SimulatedQrPay extends SimulatedUpstream<'qrpay'> implements QrPayUpstream {
  constructor(db: Kysely<Database>, options: SimulatorOptions) {
    super(db, 'qrpay', 'QP', options);
  }

  private refusalOf(req: QrCheckRequest): string | undefined {
    const parts = req.merchantAccount.toUpperCase().split('|');
    return parts.some((p) => p.startsWith(simulatorRefusedAccountPrefix)) ? 'the acquirer does not serve this merchant' : undefined;
  }

  async check(_call: CallContext, req: QrCheckRequest): Promise<QrCheckOutcome> {
    const refusal = this.refusalOf(req);
    return refusal ? { kind: 'refused', reason: refusal } : { kind: 'ok' };
  }

  pay(call: CallContext, req: QrPayRequest): Promise<CallOutcome> {
    return this.provider.submit(call, {
      requestId: req.requestId,
      operation: 'pay',
      detail: {},
      refusal: this.refusalOf(req),
    }) as Promise<CallOutcome>;
  }

  refund(_call: CallContext, req: { paymentRequestId: string; amountMinor: bigint }): Promise<CallOutcome> {
    return this.provider.refund(req.paymentRequestId);
  }
}
