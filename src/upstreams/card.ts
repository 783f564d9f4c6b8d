import { randomBytes, randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { SimulatedUpstream, simulatorRefusedPrefix, type SimulatorOptions } from './simulator.js';
import type { CallContext, CallOutcome, MoneyRequest, StatusOutcome } from './types.js';

/**
 * The card issuer-processor: card applications and their decisions, activation checks, and money
 * onto (and later off) cards. The full card number, the CVV and the PIN live only at the issuer:
 * nothing here returns them to the service, except `reveal` (the hosted reveal screen, at view time).
 */
export interface CardUpstream {
  readonly name: 'card';
  /** Money-moving: loads funds onto a card. `requestId` is the provider's idempotency key. */
  topUp(call: CallContext, req: CardTopUpRequest): Promise<CallOutcome>;
  /** Read-only: the provider's state of a request, by our request id (`succeeded` = done). */
  status(call: CallContext, requestId: string): Promise<StatusOutcome>;
  /** State-changing: submits a card application for review (idempotent by `requestId`, our application id). */
  submitApplication(call: CallContext, req: CardApplicationRequest): Promise<CallOutcome>;
  /**
   * State-changing: asks the issuer to activate a physical card with the two elements the member
   * read from it. The PIN is passed through and never kept, here or by the caller.
   */
  activate(call: CallContext, req: CardActivationRequest): Promise<ActivationOutcome>;
  /**
   * Sandbox test helper, only simulators have it: the issuer decides an application
   * (`approved` opens the card and answers its non-secret data).
   */
  sandboxDecide?(call: CallContext, requestId: string, decision: ApplicationDecision): Promise<DecisionOutcome>;
}

export interface CardTopUpRequest extends MoneyRequest {
  /** The provider-side reference of the card. */
  cardRef: string;
}

export interface CardApplicationRequest {
  /** Our application id: the provider's idempotency key. */
  requestId: string;
  bin: string;
  formFactor: 'virtual' | 'physical';
}

export interface CardActivationRequest {
  cardRef: string;
  /** `MM/YY` as printed on the card. */
  expiry: string;
  pin: string;
}

export type ActivationOutcome =
  | { kind: 'activated' }
  /** The expiry or the PIN does not match (which one is not told). Counted toward the lock. */
  | { kind: 'mismatch' }
  /** An explicit refusal by the issuer. Counted toward the lock. */
  | { kind: 'rejected'; reason: string }
  | { kind: 'timeout' }
  | { kind: 'unknown'; reason: string };

export type ApplicationDecision = 'approved' | 'rejected' | 'need_docs';

/** What the service may keep of an issued card: never the number or the CVV. */
export interface IssuedCard {
  cardRef: string;
  last4: string;
  expMonth: number;
  expYear: number;
}

export type DecisionOutcome =
  | { kind: 'decided'; decision: ApplicationDecision; card?: IssuedCard }
  /** The issuer never received the application (it was lost to a 5xx). */
  | { kind: 'not_found' };

/** Sandbox test data: a card reference starting with this is refused by the simulated issuer. */
export const simulatorRefusedCardPrefix = simulatorRefusedPrefix;

/** Sandbox test data (extensions 9): every simulated physical card's PIN. */
export const simulatorCardPin = '1234';

/** Years a simulated card is valid from its issue. */
const simulatedValidityYears = 3;

export type CardClockOf = (call: CallContext) => Date | Promise<Date>;

export class SimulatedCard extends SimulatedUpstream<'card'> implements CardUpstream {
  constructor(private readonly db: Kysely<Database>, options: SimulatorOptions, private readonly now: CardClockOf = () => new Date()) {
    // Applications and activations are decided at once: the provider's confirmation delay is for money.
    super(db, 'card', 'CD', { ...options, confirmDelayMs: 0 });
  }

  topUp(call: CallContext, req: CardTopUpRequest): Promise<CallOutcome> {
    const refusal = req.cardRef.startsWith(simulatorRefusedCardPrefix) ? 'card not loadable' : undefined;
    return this.provider.submit(call, { requestId: req.requestId, operation: 'topup', detail: {}, refusal }) as Promise<CallOutcome>;
  }

  submitApplication(call: CallContext, req: CardApplicationRequest): Promise<CallOutcome> {
    return this.provider.submit(call, { requestId: req.requestId, operation: 'application', detail: { form_factor: req.formFactor, bin: req.bin } }) as Promise<CallOutcome>;
  }

  async activate(call: CallContext, req: CardActivationRequest): Promise<ActivationOutcome> {
    const behavior = await this.provider.behavior(call);
    if (behavior === 'unknown') return { kind: 'unknown', reason: 'simulated upstream 5xx' };
    if (behavior === 'timeout') return { kind: 'timeout' };
    if (behavior === 'reject') return { kind: 'rejected', reason: 'simulated refusal' };
    const card = await this.db
      .selectFrom('upstream_sim_orders')
      .select('detail')
      .where('upstream', '=', 'card')
      .where('operation', '=', 'card')
      .where('provider_order_id', '=', req.cardRef)
      .executeTakeFirst();
    if (!card) return { kind: 'rejected', reason: 'no such card' };
    const expiry = `${card.detail.exp_month!.padStart(2, '0')}/${card.detail.exp_year!.slice(-2)}`;
    return req.expiry === expiry && req.pin === simulatorCardPin ? { kind: 'activated' } : { kind: 'mismatch' };
  }

  async sandboxDecide(call: CallContext, requestId: string, decision: ApplicationDecision): Promise<DecisionOutcome> {
    const application = await this.provider.find(requestId);
    if (!application) return { kind: 'not_found' };
    if (decision !== 'approved') return { kind: 'decided', decision };
    const now = await this.now(call);
    const detail = {
      last4: String(randomInt(0, 10000)).padStart(4, '0'),
      exp_month: String(now.getUTCMonth() + 1),
      exp_year: String(now.getUTCFullYear() + simulatedValidityYears),
    };
    // One card per application, written straight into the issuer's books (the helper plays the
    // issuer, so no injected behaviour applies): a repeated decision answers the same card.
    await this.db
      .insertInto('upstream_sim_orders')
      .values({
        upstream: 'card', request_id: `card:${requestId}`, merchant_id: call.merchantId, environment: call.environment,
        provider_order_id: `CD${randomBytes(8).toString('hex').toUpperCase()}`, operation: 'card', status: 'succeeded', final_status: 'succeeded',
        settle_at: new Date(), detail: JSON.stringify(detail), updated_at: new Date(),
      })
      .onConflict((oc) => oc.columns(['upstream', 'request_id']).doNothing())
      .execute();
    const row = await this.db.selectFrom('upstream_sim_orders').select(['provider_order_id', 'detail'])
      .where('upstream', '=', 'card').where('request_id', '=', `card:${requestId}`).executeTakeFirstOrThrow();
    const d = row.detail;
    return { kind: 'decided', decision, card: { cardRef: row.provider_order_id, last4: d.last4!, expMonth: Number(d.exp_month), expYear: Number(d.exp_year) } };
  }
}
