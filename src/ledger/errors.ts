import { ApiError, type ErrorCode } from '../platform/errors.js';
import { describeAccount, type AccountRef } from './accounts.js';

/**
 * A posting would take a non-negative (member or merchant) account below zero. Nothing was
 * written. Callers map it with `insufficientFundsCode` to the reference's code for their case.
 */
export class InsufficientFundsError extends Error {
  override readonly name = 'InsufficientFundsError';
  constructor(readonly account: AccountRef, readonly asset = '') {
    super(`ledger: ${describeAccount(account)}${asset ? ` of ${asset}` : ''} would go below zero`);
  }
}

/** The movement (environment, reference type, reference id, kind) was already posted. Nothing was written. */
export class DuplicatePostingError extends Error {
  override readonly name = 'DuplicatePostingError';
  constructor(readonly referenceType: string, readonly referenceId: string, readonly kind: string) {
    super(`ledger: ${kind} of ${referenceType} ${referenceId} is already posted`);
  }
}

/**
 * The reference's code for a shortfall: a member bucket is `insufficient_balance`, merchant
 * custody `merchant_custody_shortfall`, merchant prepaid `merchant_insufficient_funds`.
 */
export function insufficientFundsCode(err: InsufficientFundsError): ErrorCode {
  const ref = err.account;
  if (ref.owner === 'merchant') return ref.bucket === 'custody' ? 'merchant_custody_shortfall' : 'merchant_insufficient_funds';
  return 'insufficient_balance';
}

/** `InsufficientFundsError` as the API error to throw from a handler. */
export function insufficientFundsApiError(err: InsufficientFundsError): ApiError {
  return new ApiError(insufficientFundsCode(err));
}
