import { createHash, randomBytes, randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import {
  insertSimCard,
  markSimCardActivated,
  recordSimDecision,
  selectIssuedSimCard,
  selectSimCard,
} from '../queries/card.js';
import { SimulatedUpstream, simulatorRefusedPrefix, type SimulatorOptions } from '../simulated-provider.js';
import { SANDBOX_UNKNOWN_STATUS, type CallContext, type CallOutcome } from '../port.js';
import type {
  ActivationOutcome,
  ActivationStatusOutcome,
  ApplicationDecision,
  ApplicationStatusOutcome,
  CardActivationRequest,
  CardApplicationRequest,
  CardBillingAddressRequest,
  CardCancelRequest,
  CardLimitsRequest,
  CardMerchantRulesRequest,
  CardNetworkMessage,
  CardReplacementIssueRequest,
  CardTopUpRequest,
  CardUpstream,
  DecisionOutcome,
  IssuedCard,
  ReplacementIssueOutcome,
  RevealOutcome,
} from './port.js';

/** Sandbox test data: a card reference starting with this is refused by the simulated issuer. */
export const simulatorRefusedCardPrefix = simulatorRefusedPrefix;

/** Sandbox test data (extensions 9): every simulated physical card's PIN. */
export const simulatorCardPin = '1234';

/** Years a simulated card is valid from its issue. */
const simulatedValidityYears = 3;

export type CardClockOf = (call: CallContext) => Date | Promise<Date>;

export class SimulatedCard extends SimulatedUpstream<'card'> implements CardUpstream {
  constructor(
    private readonly db: Kysely<Database>,
    options: SimulatorOptions,
    private readonly now: CardClockOf,
  ) {
    super(db, 'card', 'CD', options);
  }

  topUp(call: CallContext, req: CardTopUpRequest): Promise<CallOutcome> {
    const refusal = req.cardRef.startsWith(simulatorRefusedCardPrefix) ? 'card not loadable' : undefined;
    return this.provider.submit(call, {
      requestId: req.requestId,
      operation: 'topup',
      detail: {},
      refusal,
    }) as Promise<CallOutcome>;
  }

  submitApplication(call: CallContext, req: CardApplicationRequest): Promise<CallOutcome> {
    // Applications are received at once; the confirmation delay is for money (top-ups).
    return this.provider.submit(call, {
      requestId: req.requestId,
      operation: 'application',
      detail: { form_factor: req.formFactor, bin: req.bin },
      synchronous: true,
    }) as Promise<CallOutcome>;
  }

  /**
   * Checks the elements and, when they match, records the card as active in the issuer's books
   * (`activationStatus` reads it). Like every simulated call: `unknown` = never received (nothing
   * recorded); `timeout` = processed (recorded as for `success`), the answer lost.
   */
  async activate(call: CallContext, req: CardActivationRequest): Promise<ActivationOutcome> {
    const behavior = await this.provider.behavior(call);
    if (behavior === 'unknown') return { kind: 'unknown', reason: 'simulated upstream 5xx' };
    if (behavior === 'reject') return { kind: 'rejected', reason: 'simulated refusal' };
    const card = await selectSimCard(this.db, req.cardRef);
    if (!card) return behavior === 'timeout' ? { kind: 'timeout' } : { kind: 'rejected', reason: 'no such card' };
    const expiry = `${card.detail.exp_month!.padStart(2, '0')}/${card.detail.exp_year!.slice(-2)}`;
    const matches = req.expiry === expiry && req.pin === simulatorCardPin;
    if (matches) {
      await markSimCardActivated(this.db, req.cardRef, await this.now(call));
    }
    if (behavior === 'timeout') return { kind: 'timeout' };
    return matches ? { kind: 'activated' } : { kind: 'mismatch' };
  }

  setLimits(call: CallContext, req: CardLimitsRequest): Promise<CallOutcome> {
    return this.stateChange(call, req.requestId, 'limits', req.cardRef, {
      single: String(req.single),
      daily: String(req.daily),
      monthly: String(req.monthly),
    });
  }

  setMerchantRules(call: CallContext, req: CardMerchantRulesRequest): Promise<CallOutcome> {
    const detail: Record<string, string> = req.rules
      ? {
          rule_type: req.rules.ruleType,
          merchant_names: JSON.stringify(req.rules.merchantNames),
          mcc_list: JSON.stringify(req.rules.mccList),
        }
      : { rule_type: 'none' };
    return this.stateChange(call, req.requestId, 'merchant_rules', req.cardRef, detail);
  }

  updateBillingAddress(call: CallContext, req: CardBillingAddressRequest): Promise<CallOutcome> {
    const refusal = req.address.address.startsWith(simulatorRefusedPrefix) ? 'address refused' : undefined;
    return this.stateChange(
      call,
      req.requestId,
      'billing_address',
      req.cardRef,
      { country: req.address.country },
      refusal,
    );
  }

  unblockCvv(call: CallContext, req: { requestId: string; cardRef: string }): Promise<CallOutcome> {
    return this.stateChange(call, req.requestId, 'cvv_unblock', req.cardRef, {});
  }

  /**
   * The simulated card's number and CVV are derived at view time from its reference (a test
   * number with the card's last four; never stored by the service): read-only, so no injected
   * behaviour applies except `timeout`/`unknown`, which make the screen say it cannot show them.
   */
  async reveal(call: CallContext, cardRef: string): Promise<RevealOutcome> {
    const behavior = await this.provider.behavior(call);
    if (behavior === 'unknown') return { kind: 'unknown', reason: 'simulated upstream 5xx' };
    if (behavior === 'timeout') return { kind: 'timeout' };
    const card = await selectSimCard(this.db, cardRef);
    if (!card) return { kind: 'not_found' };
    const digest = createHash('sha256').update(`sim-card:${cardRef}`).digest();
    const middle = Array.from(digest.subarray(0, 7), (b) => String(b % 10)).join('');
    // 4895 + 7 digits + one check digit chosen so that the number passes Luhn + the last four.
    const number = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']
      .map((d) => `4895${middle}${d}${card.detail.last4!}`)
      .find(luhnValid)!;
    return {
      kind: 'revealed',
      number,
      expMonth: Number(card.detail.exp_month),
      expYear: Number(card.detail.exp_year),
      cvv: Array.from(digest.subarray(8, 11), (b) => String(b % 10)).join(''),
    };
  }

  /** A state change at the issuer: synchronous, idempotent by request id, subject to the injected behaviour. */
  private stateChange(
    call: CallContext,
    requestId: string,
    operation: string,
    cardRef: string,
    detail: Record<string, string>,
    refusal?: string,
  ): Promise<CallOutcome> {
    const refused = refusal ?? (cardRef.startsWith(simulatorRefusedCardPrefix) ? 'card refused' : undefined);
    return this.provider.submit(call, {
      requestId,
      operation,
      detail: { card: cardRef, ...detail },
      refusal: refused,
      synchronous: true,
    }) as Promise<CallOutcome>;
  }

  async sandboxDecide(call: CallContext, requestId: string, decision: ApplicationDecision): Promise<DecisionOutcome> {
    const application = await this.provider.find(requestId);
    if (!application) return { kind: 'not_found' };
    const now = await this.now(call);
    // Written into the issuer's books (`applicationStatus` answers it).
    await recordSimDecision(this.db, requestId, decision, now);
    if (decision !== 'approved') return { kind: 'decided', decision };
    const detail = {
      last4: String(randomInt(0, 10000)).padStart(4, '0'),
      exp_month: String(now.getUTCMonth() + 1),
      exp_year: String(now.getUTCFullYear() + simulatedValidityYears),
    };
    // One card per application, written straight into the issuer's books (the helper plays the
    // issuer, so no injected behaviour applies): a repeated decision answers the same card.
    await insertSimCard(this.db, {
      requestId,
      merchantId: call.merchantId,
      environment: call.environment,
      cardRef: `CD${randomBytes(8).toString('hex').toUpperCase()}`,
      detail,
      now,
    });
    const card = (await this.issuedCard(requestId))!;
    return { kind: 'decided', decision, card };
  }

  /** The card opened for an application, if any (non-secret data only). */
  private async issuedCard(requestId: string): Promise<IssuedCard | undefined> {
    const row = await selectIssuedSimCard(this.db, requestId);
    if (!row) return undefined;
    const d = row.detail;
    return {
      cardRef: row.provider_order_id,
      last4: d.last4!,
      expMonth: Number(d.exp_month),
      expYear: Number(d.exp_year),
    };
  }

  /**
   * Read-only (no injected behaviour, like every status query): `in_review` until decided, the
   * decision afterwards (with the card when approved), `rejected` for an application refused at
   * submission; the sentinel for one received under `unknown_status`.
   */
  async applicationStatus(_call: CallContext, requestId: string): Promise<ApplicationStatusOutcome> {
    const row = await this.provider.find(requestId);
    if (!row || row.operation !== 'application') return { kind: 'not_found' };
    if (row.unknown_status) return { kind: 'found', status: SANDBOX_UNKNOWN_STATUS };
    if (row.status === 'failed') return { kind: 'found', status: 'rejected' };
    const decision = row.detail.decision as ApplicationDecision | undefined;
    if (!decision) return { kind: 'found', status: 'in_review' };
    if (decision !== 'approved') return { kind: 'found', status: decision };
    const card = await this.issuedCard(requestId);
    return card ? { kind: 'found', status: 'approved', card } : { kind: 'found', status: 'in_review' };
  }

  /** Read-only: whether the simulated issuer recorded the card's activation. */
  async activationStatus(_call: CallContext, cardRef: string): Promise<ActivationStatusOutcome> {
    const card = await selectSimCard(this.db, cardRef);
    if (!card) return { kind: 'not_found' };
    return { kind: 'found', active: card.detail.activated === 'true' };
  }

  /** The simulated network plays the card scheme: no injected behaviour applies; each message gets its own reference.
   * */
  async sandboxNetworkMessage(_call: CallContext, _message: CardNetworkMessage): Promise<{ networkRef: string }> {
    return { networkRef: `NW${randomBytes(8).toString('hex').toUpperCase()}` };
  }

  cancelCard(call: CallContext, req: CardCancelRequest): Promise<CallOutcome> {
    return this.stateChange(call, req.requestId, 'cancel', req.cardRef, { reason: req.reason });
  }

  /**
   * The new card is written into the issuer's books as a `card` (so activation and the reveal
   * screen find it), keyed by our request id: a repeated call answers the same card. Injected
   * behaviours apply as to any state change; a status outside our enumeration is not an answer.
   */
  async issueReplacement(call: CallContext, req: CardReplacementIssueRequest): Promise<ReplacementIssueOutcome> {
    const now = await this.now(call);
    const detail = {
      last4: String(randomInt(0, 10000)).padStart(4, '0'),
      exp_month: String(now.getUTCMonth() + 1),
      exp_year: String(now.getUTCFullYear() + simulatedValidityYears),
      replaces: req.cardRef,
      form_factor: req.formFactor,
    };
    const refusal = req.cardRef.startsWith(simulatorRefusedCardPrefix) ? 'card not replaceable' : undefined;
    const outcome = await this.provider.submit(call, {
      requestId: req.requestId,
      operation: 'card',
      detail,
      refusal,
      synchronous: true,
    });
    if (outcome.kind !== 'accepted') return outcome;
    if (outcome.status !== 'succeeded')
      return { kind: 'unknown', reason: `issuer status ${outcome.status}`, status: outcome.status };
    const d = outcome.detail;
    return {
      kind: 'issued',
      card: {
        cardRef: outcome.providerOrderId,
        last4: d.last4,
        expMonth: Number(d.exp_month),
        expYear: Number(d.exp_year),
      },
    };
  }
}

/** Whether a card number passes the Luhn check. */
function luhnValid(number: string): boolean {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let d = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}
