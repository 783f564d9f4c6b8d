/**
 * The shapes of exchange requests, checked before anything is read (pure): the direction of a
 * quote or a market order, `lock`, and what an execution names (a locked quote, with the quote's
 * own numbers if sent, or a market order).
 */
import { ApiError } from '../../platform/errors.js';
import { parseAmount } from '../../money/index.js';

/** The request's direction, upper-cased (the reference: case-insensitive); missing or equal sides are
 * `invalid_request`. */
export function sidesOf(body: { from_asset?: string; to_asset?: string }): { from: string; to: string } {
  const from = (body.from_asset ?? '').trim().toUpperCase();
  const to = (body.to_asset ?? '').trim().toUpperCase();
  if (from === '' || to === '') throw new ApiError('invalid_request', 'from_asset and to_asset are required.');
  if (from === to) throw new ApiError('invalid_request', 'to_asset must differ from from_asset.');
  return { from, to };
}

/** `lock` must be a JSON boolean when present (the reference: a string or number is `invalid_fields`). */
export function lockOf(body: { lock?: unknown }): boolean {
  if (body.lock === undefined) return false;
  if (typeof body.lock !== 'boolean') {
    throw new ApiError('invalid_fields', 'lock must be a JSON boolean.', {
      fields: [{ key: 'lock', reason: 'not_boolean' }],
      reason: 'lock must be a JSON boolean',
    });
  }
  return body.lock;
}

export interface ExecuteBody {
  quote_id?: string;
  from_asset?: string;
  to_asset?: string;
  from_amount?: string;
}

/**
 * A locked quote may be sent with the numbers it was taken for (the reference names the call
 * as taking `quote_id` and `from_amount`): they must be the quote's, or the request is refused.
 */
export interface QuoteRestatement {
  from?: string;
  to?: string;
  amount?: string;
}

export type ExecuteRequest =
  | { kind: 'locked'; quoteId: string; restated: QuoteRestatement }
  | { kind: 'market'; from: string; to: string; amount: string };

/** `{quote_id}` (with, if sent, the quote's own `from_asset`, `to_asset`, `from_amount`), or `{from_asset, to_asset,
 * from_amount}`; anything else is `invalid_request`. */
export function executeRequestOf(body: ExecuteBody): ExecuteRequest {
  if (body.quote_id !== undefined) {
    if (body.quote_id.trim() === '') throw new ApiError('invalid_request', 'quote_id is empty.');
    const restated: QuoteRestatement = {};
    if (body.from_asset !== undefined) restated.from = body.from_asset.trim().toUpperCase();
    if (body.to_asset !== undefined) restated.to = body.to_asset.trim().toUpperCase();
    if (body.from_amount !== undefined) restated.amount = body.from_amount;
    return { kind: 'locked', quoteId: body.quote_id.trim(), restated };
  }
  if (body.from_amount === undefined || body.from_amount === '')
    throw new ApiError('invalid_request', 'from_amount (or quote_id) is required.');
  const sides = sidesOf(body);
  return { kind: 'market', from: sides.from, to: sides.to, amount: body.from_amount };
}

/** Refuses a restatement that is not the quote's: another asset, or another amount (compared at the from-asset's
 * scale). */
export function checkRestatement(
  restated: QuoteRestatement,
  quote: { from_asset: string; to_asset: string; from_amount: bigint },
  fromScale: number,
): void {
  const differs: string[] = [];
  if (restated.from !== undefined && restated.from !== quote.from_asset) differs.push('from_asset');
  if (restated.to !== undefined && restated.to !== quote.to_asset) differs.push('to_asset');
  if (restated.amount !== undefined && parseAmount(restated.amount, fromScale, 'from_amount') !== quote.from_amount)
    differs.push('from_amount');
  if (differs.length > 0) {
    throw new ApiError(
      'invalid_request',
      `${differs.join(', ')} ${differs.length === 1 ? 'is' : 'are'} not the quote's; send quote_id alone, or ` +
        `with the quote's own numbers.`,
    );
  }
}
