import type { CallContext, CallOutcome, MoneyRequest, StatusOutcome, NoAnswer } from '../port.js';

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
  /** State-changing: the card's spending limits at the issuer (minor units of the card currency, 0 = none). Idempotent
   * by `requestId`. */
  setLimits(call: CallContext, req: CardLimitsRequest): Promise<CallOutcome>;
  /** State-changing: replaces the card-level merchant rules (null removes them). Idempotent by `requestId`. */
  setMerchantRules(call: CallContext, req: CardMerchantRulesRequest): Promise<CallOutcome>;
  /** State-changing: the card's billing address. Idempotent by `requestId`. */
  updateBillingAddress(call: CallContext, req: CardBillingAddressRequest): Promise<CallOutcome>;
  /** State-changing: lifts the issuer's CVV lock. Idempotent by `requestId`. */
  unblockCvv(call: CallContext, req: { requestId: string; cardRef: string }): Promise<CallOutcome>;
  /**
   * Read-only, secret: the card's number, expiry and CVV, for the hosted reveal screen at view time
   * only. The caller puts them on that page and nowhere else (never stored, logged or answered).
   */
  reveal(call: CallContext, cardRef: string): Promise<RevealOutcome>;
  /**
   * Sandbox test helper, only simulators have it: the issuer decides an application
   * (`approved` opens the card and answers its non-secret data).
   */
  sandboxDecide?(call: CallContext, requestId: string, decision: ApplicationDecision): Promise<DecisionOutcome>;
  /**
   * Read-only: the issuer's state of an application, by our request id (the application id):
   * its review status and, once approved, the card's non-secret data. Reconciliation of a
   * submission whose outcome is unknown asks it.
   */
  applicationStatus(call: CallContext, requestId: string): Promise<ApplicationStatusOutcome>;
  /** Read-only: whether the issuer holds the card as active (after an activation whose answer was lost). */
  activationStatus(call: CallContext, cardRef: string): Promise<ActivationStatusOutcome>;
  /**
   * State-changing: cancels a card for good (closing; replacement: `voided` for a card never
   * activated). Idempotent by `requestId`: asking again answers what the issuer did.
   */
  cancelCard(call: CallContext, req: CardCancelRequest): Promise<CallOutcome>;
  /**
   * State-changing: issues the card that replaces `cardRef` (same product). Idempotent by
   * `requestId`: asking again answers the same card. Never the number or the CVV.
   */
  issueReplacement(call: CallContext, req: CardReplacementIssueRequest): Promise<ReplacementIssueOutcome>;
  /**
   * Sandbox test helper, only simulators have it: the card network sends a message about one card
   * (an authorisation request, a clearing, a reversal, a refund). Answers the network's reference
   * of the message; the service then decides and posts it exactly as a real message.
   */
  sandboxNetworkMessage?(call: CallContext, message: CardNetworkMessage): Promise<{ networkRef: string }>;
}

/** A card network message (card issuing II, src/modules/cards/transactions/service.ts). */
export interface CardNetworkMessage {
  type: 'authorization' | 'clearing' | 'reversal' | 'refund';
  cardRef: string;
  /** Minor units of `currency`. */
  amountMinor: bigint;
  currency: string;
  merchantName: string;
  mcc: string;
}

/**
 * The issuer's review states of an application, as `applicationStatus` answers them (raw; anything
 * else is outside our enumeration): `in_review` (received, undecided) and the three decisions.
 */
export const applicationReviewStatuses = ['in_review', 'approved', 'rejected', 'need_docs'] as const;
export type ApplicationReviewStatus = (typeof applicationReviewStatuses)[number];

export type ApplicationStatusOutcome =
  /** `status` is raw: one of `applicationReviewStatuses`, or outside our enumeration. `card` when approved. */
  | { kind: 'found'; status: string; card?: IssuedCard }
  /** The issuer never received the application. */
  | { kind: 'not_found' }
  | NoAnswer;

export type ActivationStatusOutcome = { kind: 'found'; active: boolean } | { kind: 'not_found' } | NoAnswer;

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
  | NoAnswer;

export interface CardLimitsRequest {
  requestId: string;
  cardRef: string;
  single: bigint;
  daily: bigint;
  monthly: bigint;
}

export interface CardMerchantRulesRequest {
  requestId: string;
  cardRef: string;
  rules: { ruleType: 'white' | 'black'; merchantNames: string[]; mccList: string[] } | null;
}

export interface CardBillingAddressRequest {
  requestId: string;
  cardRef: string;
  address: { address: string; city: string; state?: string; country: string; postal_code: string };
}

export type RevealOutcome =
  | { kind: 'revealed'; number: string; expMonth: number; expYear: number; cvv: string }
  | { kind: 'not_found' }
  | NoAnswer;

export type ApplicationDecision = 'approved' | 'rejected' | 'need_docs';

export interface CardCancelRequest {
  requestId: string;
  cardRef: string;
  /** Why, for the issuer's books: the member closed it, it was replaced, or (never activated) its inventory row is
   * void. */
  reason: 'closed' | 'replaced' | 'voided';
}

export interface CardReplacementIssueRequest {
  /** Our replacement id: the issuer's idempotency key. */
  requestId: string;
  /** The card being replaced. */
  cardRef: string;
  bin: string;
  formFactor: 'virtual' | 'physical';
}

export type ReplacementIssueOutcome =
  | { kind: 'issued'; card: IssuedCard }
  | { kind: 'rejected'; reason: string }
  | { kind: 'timeout' }
  | { kind: 'unknown'; reason: string; /** raw status of an acceptance that is not `succeeded` */ status?: string };

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
