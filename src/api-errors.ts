import { ApiError, type ErrorCode } from './platform/errors.js';
import { AmountError, InsufficientFundsError, shortfallOf, type Shortfall } from './money/index.js';
import { parseAmount as readRequestAmount } from './money/index.js';
import { OrderStateError } from './provider-orders/index.js';

/**
 * The API edge's map from domain errors to the reference's codes. The ledger and the
 * provider-order lifecycle raise their own errors and know no HTTP; the platform writes envelopes
 * and knows no domain; this file, beside the composition root, is the one place that knows both.
 * `server.ts` puts `mapDomainError` on the service context: the error handler of both listeners
 * and the route helper's transactions use it. `DuplicatePostingError` is not mapped: callers
 * check for a repeat first, so reaching it is a bug (500 `api_error`).
 */

const shortfallCodes: Record<Shortfall, ErrorCode> = {
  member: 'insufficient_balance',
  merchant_custody: 'merchant_custody_shortfall',
  merchant_prepaid: 'merchant_insufficient_funds',
};

/** The reference's code for a shortfall: a member bucket, merchant custody, merchant prepaid. */
export function insufficientFundsCode(err: InsufficientFundsError): ErrorCode {
  return shortfallCodes[shortfallOf(err)];
}

export function mapDomainError(err: unknown): ApiError | undefined {
  if (err instanceof AmountError) return new ApiError('invalid_request', err.message);
  if (err instanceof InsufficientFundsError) return new ApiError(insufficientFundsCode(err));
  if (err instanceof OrderStateError) return new ApiError('state_invalid', err.message);
  return undefined;
}

/**
 * The ledger's `parseAmount` as the API answers it: 400 `invalid_request` naming the field.
 * Handlers need not call it (the edge maps `AmountError` anyway); it states the contract in one
 * function for the tests of the amount grammar.
 */
export function parseAmount(value: string, scale: number, field = 'amount'): bigint {
  try {
    return readRequestAmount(value, scale, field);
  } catch (err) {
    throw mapDomainError(err) ?? err;
  }
}
