import { describeAccount, type AccountRef } from './accounts.js';

/**
 * The ledger's own errors: it knows no HTTP. The API edge (`src/api-errors.ts`) maps each to the
 * reference's code; anywhere else (a job) they are failures like any other.
 */

/**
 * A posting would take a non-negative (member or merchant) account below zero. Nothing was
 * written. `shortfallOf` says whose account it is.
 */
export class InsufficientFundsError extends Error {
  override readonly name = 'InsufficientFundsError';
  constructor(
    readonly account: AccountRef,
    readonly asset = '',
  ) {
    super(`ledger: ${describeAccount(account)}${asset ? ` of ${asset}` : ''} would go below zero`);
  }
}

/** The movement (environment, reference type, reference id, kind) was already posted. Nothing was written. */
export class DuplicatePostingError extends Error {
  override readonly name = 'DuplicatePostingError';
  constructor(
    readonly referenceType: string,
    readonly referenceId: string,
    readonly kind: string,
  ) {
    super(`ledger: ${kind} of ${referenceType} ${referenceId} is already posted`);
  }
}

/** Whose account a shortfall is on: a member's bucket, the merchant's custody or its prepaid balance. */
export type Shortfall = 'member' | 'merchant_custody' | 'merchant_prepaid';

export function shortfallOf(err: InsufficientFundsError): Shortfall {
  const ref = err.account;
  if (ref.owner === 'merchant') return ref.bucket === 'custody' ? 'merchant_custody' : 'merchant_prepaid';
  return 'member';
}
