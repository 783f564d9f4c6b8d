import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { SimulatedUpstream, simulatorRefusedPrefix, type SimulatorOptions } from '../simulated-provider.js';
import type { CallContext, CallOutcome } from '../port.js';
import type { QrCheckOutcome, QrCheckRequest, QrPayRequest, QrPayUpstream } from './port.js';

/** Sandbox test data: a QR whose merchant account has a sub-field starting with this is refused by the simulated
 * provider. */
export const simulatorRefusedAccountPrefix = simulatorRefusedPrefix;

export class SimulatedQrPay extends SimulatedUpstream<'qrpay'> implements QrPayUpstream {
  constructor(db: Kysely<Database>, options: SimulatorOptions) {
    super(db, 'qrpay', 'QP', options);
  }

  private refusalOf(req: QrCheckRequest): string | undefined {
    const parts = req.merchantAccount.toUpperCase().split('|');
    return parts.some((p) => p.startsWith(simulatorRefusedAccountPrefix))
      ? 'the acquirer does not serve this merchant'
      : undefined;
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
