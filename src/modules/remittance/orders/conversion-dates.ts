/**
 * GET /v1/remit/conversion-dates: the provider's settlement days for the coming week, forwarded
 * without local calculation. `line` is `express` or `pobo`; any other value is `express`. The
 * provider not answering is 502 `upstream_error`, never an empty list.
 */
import type { ServiceContext } from '../../../service-context.js';
import { ApiError, type ErrorCode } from '../../../platform/errors.js';
import type { CallContext } from '../../../upstreams/port.js';
import { withDeadline } from '../../../upstreams/deadline.js';

export const conversionDateErrors = [
  'product_not_available',
  'service_unavailable',
  'upstream_error',
] as const satisfies readonly ErrorCode[];

export function lineOf(value: string | undefined): 'express' | 'pobo' {
  return value === 'pobo' ? 'pobo' : 'express';
}

export async function conversionDates(
  ctx: ServiceContext,
  call: CallContext,
  query: { currency?: string; line?: string },
) {
  if (query.currency === undefined || query.currency === '')
    throw new ApiError('invalid_request', 'currency is required.');
  if (!/^[A-Z]{3}$/.test(query.currency))
    throw new ApiError('invalid_request', 'currency must be three upper-case letters.');
  const answer = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.remittance.conversionDates(call, { currency: query.currency!, line: lineOf(query.line) }),
  );
  switch (answer.kind) {
    case 'dates':
      return {
        settlement_currency: answer.settlementCurrency,
        payout_currency: answer.payoutCurrency,
        same_currency: answer.sameCurrency,
        dates: answer.dates.map((d) => ({ date: d.date, valid: d.valid })),
        earliest_valid: answer.earliestValid,
      };
    case 'line_closed':
      throw new ApiError('product_not_available', `The ${lineOf(query.line)} line does not serve ${query.currency}.`);
    case 'no_settlement_currency':
      throw new ApiError(
        'service_unavailable',
        `No settlement currency is configured for ${query.currency} on the ${lineOf(query.line)} line.`,
      );
    case 'timeout':
    case 'unknown':
      throw new ApiError('upstream_error', 'The settlement calendar could not be read from the provider; retry.');
  }
}
