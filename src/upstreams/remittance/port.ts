import type { CallContext, CallOutcome, StatusOutcome, NoAnswer } from '../port.js';

/**
 * The cross-border payout provider. Rates are not its business: every conversion is priced by
 * the one rate service (`rates/`), and the provider is paid in the payout currency.
 */
export interface RemittanceUpstream {
  readonly name: 'remittance';
  /** Registers a payee with the provider (idempotent by `payeeKey`), at an order's dispatch. Not money-moving. */
  registerPayee(call: CallContext, req: PayeeRegistration): Promise<RegistrationOutcome>;
  /** Read-only: checks the holder name against the account (never affected by injection). */
  checkName(call: CallContext, req: NameCheckRequest): Promise<NameCheckOutcome>;
  /** Read-only: the settlement days of the coming week for a payout currency on a line. */
  conversionDates(
    call: CallContext,
    req: { currency: string; line: 'express' | 'pobo' },
  ): Promise<ConversionDatesOutcome>;
  /** Money-moving: submits a payout to a registered payee. `requestId` is the provider's idempotency key. */
  submit(call: CallContext, req: RemittanceSubmitRequest): Promise<CallOutcome<{ payout_date: string }>>;
  /** Read-only: the provider's state of a payout, by our request id (`refunded` = returned by the beneficiary bank). */
  status(call: CallContext, requestId: string): Promise<StatusOutcome>;
  /**
   * Sandbox test helper, only simulators have it: the beneficiary bank returns a paid-out
   * payout (the provider's state becomes `refunded`).
   */
  sandboxReturn?(call: CallContext, requestId: string): Promise<CallOutcome>;
}

export interface PayeeDetails {
  country: string;
  currency: string;
  paymentMethod: string;
  clearingSystem: string;
  entityType: string;
  holderName: string;
  /** Normalised contract fields (keys with dots). */
  fields: Record<string, string>;
}

export interface PayeeRegistration extends PayeeDetails {
  /** Our id of the shared payee: the provider's idempotency key for the registration. */
  payeeKey: string;
}

export type RegistrationOutcome =
  { kind: 'registered'; payeeRef: string } | { kind: 'rejected'; reason: string } | NoAnswer;

export type NameCheckRequest = PayeeDetails;

export type NameCheckOutcome =
  | { kind: 'match' }
  | { kind: 'close_match'; suggestedName: string }
  | { kind: 'no_match' }
  | { kind: 'unavailable'; reason: string }
  | NoAnswer;

export interface ConversionDates {
  settlementCurrency: string;
  payoutCurrency: string;
  sameCurrency: boolean;
  dates: Array<{ date: string; valid: boolean }>;
  earliestValid: string;
}

export type ConversionDatesOutcome =
  | ({ kind: 'dates' } & ConversionDates)
  /** The line does not serve the currency. */
  | { kind: 'line_closed' }
  /** The line serves it but has no settlement currency configured. */
  | { kind: 'no_settlement_currency' }
  | NoAnswer;

export interface RemittanceSubmitRequest {
  requestId: string;
  /** The provider's reference of the registered payee. */
  payeeRef: string;
  payoutCurrency: string;
  /** Minor units of the payout currency. */
  payoutAmountMinor: bigint;
}
