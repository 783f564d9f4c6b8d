import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { SimulatedUpstream, type SimulatorOptions } from './simulator.js';
import type { CallContext, CallOutcome, StatusOutcome } from './types.js';

/** The cross-border payout provider. */
export interface RemittanceUpstream {
  readonly name: 'remittance';
  /** Read-only: indicative rate and payout date of a corridor (never affected by injection). */
  quote(call: CallContext, req: RemittanceQuoteRequest): Promise<RemittanceQuoteOutcome>;
  /** Money-moving: submits a payout to a payee. `requestId` is the provider's idempotency key. */
  submit(call: CallContext, req: RemittanceSubmitRequest): Promise<CallOutcome>;
  /** Read-only: the provider's state of a payout, by our request id. */
  status(call: CallContext, requestId: string): Promise<StatusOutcome>;
}

export interface RemittanceQuoteRequest {
  sendCurrency: string;
  payoutCurrency: string;
  /** Minor units of the send currency. */
  amountMinor: bigint;
}

export type RemittanceQuoteOutcome =
  /** `rate`: payout units per send unit, a decimal string; `payoutDate`: YYYY-MM-DD. */
  | { kind: 'quoted'; rate: string; payoutDate: string }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'timeout' }
  | { kind: 'unknown'; reason: string };

export interface RemittanceSubmitRequest {
  requestId: string;
  sendCurrency: string;
  payoutCurrency: string;
  amountMinor: bigint;
  /** The provider-side reference of the payee. */
  payeeRef: string;
}

/** Corridors the simulator serves, with a fixed indicative rate (decimal strings, never floats). */
export const simulatedCorridors: Readonly<Record<string, string>> = {
  'USD:SGD': '1.350000',
  'USD:HKD': '7.800000',
  'USD:EUR': '0.920000',
  'SGD:HKD': '5.780000',
  'EUR:GBP': '0.850000',
};

/** The next weekday (UTC) after `from`, as YYYY-MM-DD. */
export function nextBusinessDay(from: Date): string {
  const d = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()));
  for (let i = 0; i < 7; i++) {
    d.setUTCDate(d.getUTCDate() + 1);
    const day = d.getUTCDay();
    if (day !== 0 && day !== 6) break;
  }
  return d.toISOString().slice(0, 10);
}

export class SimulatedRemittance extends SimulatedUpstream<'remittance'> implements RemittanceUpstream {
  constructor(db: Kysely<Database>, options: SimulatorOptions, private readonly now: () => Date = () => new Date()) {
    super(db, 'remittance', 'RM', options);
  }

  private rateOf(send: string, payout: string): string | undefined {
    return send === payout ? '1.000000' : simulatedCorridors[`${send}:${payout}`];
  }

  async quote(_call: CallContext, req: RemittanceQuoteRequest): Promise<RemittanceQuoteOutcome> {
    const rate = this.rateOf(req.sendCurrency, req.payoutCurrency);
    if (!rate) return { kind: 'unavailable', reason: `no corridor ${req.sendCurrency} to ${req.payoutCurrency}` };
    return { kind: 'quoted', rate, payoutDate: nextBusinessDay(this.now()) };
  }

  submit(call: CallContext, req: RemittanceSubmitRequest): Promise<CallOutcome> {
    const refusal = this.rateOf(req.sendCurrency, req.payoutCurrency) ? undefined : 'corridor not served';
    return this.provider.submit(call, { requestId: req.requestId, operation: 'remit', detail: {}, refusal }) as Promise<CallOutcome>;
  }
}
