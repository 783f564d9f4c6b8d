import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { SimulatedUpstream, simulatorRefusedPrefix, type SimulatorOptions } from './simulator.js';
import type { CallContext, CallOutcome, MoneyRequest, StatusOutcome } from './types.js';

/** The card issuer-processor: money onto (and later off) cards. */
export interface CardUpstream {
  readonly name: 'card';
  /** Money-moving: loads funds onto a card. `requestId` is the provider's idempotency key. */
  topUp(call: CallContext, req: CardTopUpRequest): Promise<CallOutcome>;
  /** Read-only: the provider's state of a top-up, by our request id (`succeeded` = credited). */
  status(call: CallContext, requestId: string): Promise<StatusOutcome>;
}

export interface CardTopUpRequest extends MoneyRequest {
  /** The provider-side reference of the card. */
  cardRef: string;
}

/** Sandbox test data: a card reference starting with this is refused by the simulated issuer. */
export const simulatorRefusedCardPrefix = simulatorRefusedPrefix;

export class SimulatedCard extends SimulatedUpstream<'card'> implements CardUpstream {
  constructor(db: Kysely<Database>, options: SimulatorOptions) {
    super(db, 'card', 'CD', options);
  }

  topUp(call: CallContext, req: CardTopUpRequest): Promise<CallOutcome> {
    const refusal = req.cardRef.startsWith(simulatorRefusedCardPrefix) ? 'card not loadable' : undefined;
    return this.provider.submit(call, { requestId: req.requestId, operation: 'topup', detail: {}, refusal }) as Promise<CallOutcome>;
  }
}
