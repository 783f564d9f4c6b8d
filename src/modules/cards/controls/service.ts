/**
 * The member's controls of a card (docs/cards.md): their error codes, the billing address (a
 * synchronous issuer call) and the CVV unblock (5 calls per member per hour). The limits are
 * limits.ts, the card-level merchant rules merchant-rules.ts, what they share issuer-calls.ts.
 */
import { rowScope } from '../../../db/owned-by.js';
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import { ApiError, invalidFields, type ErrorCode } from '../../../platform/errors.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { cardOrNotFound } from '../cards/queries.js';
import { cvvUnblockCallsBetween, deleteCvvUnblockCallsOutside, insertCvvUnblockCall } from './queries.js';
import { lockMember } from '../../members/index.js';
import { type MemberCardCaller } from '../shared/queries.js';
import { addressProblems, normaliseAddress } from '../shared/rules.js';
import type { Address } from '../shared/tables.js';
import type { CardRow } from '../cards/tables.js';
import { confirmedOrUnknown, memberCard, productOf, requestIdFor, storeConfirmed, terminal } from './issuer-calls.js';

/** A control's change refused: the card's state, its product, the fields or the request; the card not found. */
const changeErrors = [
  'state_invalid',
  'product_not_available',
  'invalid_fields',
  'invalid_request',
  'not_found',
] as const;

export const controlErrors = {
  limits: changeErrors,
  // Changes the issuer is asked for: its failure too.
  merchantRules: [...changeErrors, 'upstream_error'],
  getMerchantRules: ['not_found'],
  billingAddress: [...changeErrors, 'upstream_error'],
  cvvUnblock: ['state_invalid', 'not_found', 'upstream_error', 'rate_limited'],
} as const satisfies Record<string, readonly ErrorCode[]>;

// ---------------------------------------------------------------------------------------------
// Billing address

export interface PreparedAddress {
  card: CardRow;
  address: Address;
  requestId: string;
}

/** `PATCH /v1/cards/{id}/billing-address`, step 1 (with the key's claim): the checks only; nothing is stored before the
 * issuer confirms. */
export async function prepareBillingAddress(
  trx: Transaction<Database>,
  caller: MemberCardCaller,
  id: string,
  body: Partial<Record<keyof Address, unknown>>,
  key: string,
): Promise<PreparedAddress> {
  const problems = addressProblems(body);
  if (problems.length > 0) throw invalidFields(problems);
  const card = await memberCard(trx, caller, id);
  if (terminal.has(card.status)) throw new ApiError('state_invalid', `The card is ${card.status}.`);
  const product = await productOf(trx, card);
  if (!product.billing_address_updatable)
    throw new ApiError('product_not_available', "The card's BIN does not allow a billing-address change.");
  const address = normaliseAddress(body as unknown as Address);
  return { card, address, requestId: requestIdFor('billing', card, key, address) };
}

/** Step 2: synchronous issuer call; 200 only when it confirmed (then stored); 502 `upstream_error` with nothing stored
 * when the outcome is unknown. */
export async function finishBillingAddress(ctx: ServiceContext, p: PreparedAddress) {
  const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.updateBillingAddress(rowScope(p.card), {
      requestId: p.requestId,
      cardRef: p.card.upstream_ref,
      address: p.address,
    }),
  );
  await confirmedOrUnknown(
    ctx,
    p.card,
    'billing address change',
    outcome,
    "The card issuer's answer is unknown; the address is not stored. Retry with the same key, then read the card.",
  );
  if (outcome.kind === 'rejected') throw new ApiError('invalid_request', 'The card issuer refused the address.');
  await storeConfirmed(ctx, p.card, { billing_address: JSON.stringify(p.address) });
  return { id: p.card.id, billing_address: p.address };
}

// ---------------------------------------------------------------------------------------------
// CVV unblock

/** The reference: `POST /v1/cards/{id}/cvv/unblock` is limited to 5 calls per member per hour. */
export const cvvUnblockPerHour = 5;
const cvvWindowMs = 3_600_000;

/**
 * Step 1 (with the key's claim): the call is counted in the member's sliding hour (the member row
 * locked, so concurrent calls count one by one, on any process); the sixth answers 429
 * `rate_limited` with `Retry-After` = seconds until the oldest counted call leaves the hour.
 * A replay of a finished key is not counted (it never reaches here).
 *
 * A rate limit is a request-security window: the hour is real time (`ctx.requestClock`), never
 * the merchant's sandbox clock (extensions 8), so advancing the sandbox clock does not lift it.
 * Calls stamped more than an hour ahead of the request clock can only be left from when this
 * limit read the sandbox clock (a sandbox merchant's time runs ahead of real time): they are not
 * counted and are deleted with the calls that left the hour. Anything closer (clock skew between
 * processes, a small sandbox offset) counts as it is.
 */
export async function prepareCvvUnblock(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: MemberCardCaller,
  id: string,
  key: string,
) {
  await lockMember(trx, caller.memberId);
  const now = new Date(ctx.requestClock());
  const since = new Date(now.getTime() - cvvWindowMs);
  const ahead = new Date(now.getTime() + cvvWindowMs);
  const calls = await cvvUnblockCallsBetween(trx, caller.memberId, since, ahead);
  if (calls.length >= cvvUnblockPerHour) {
    const oldest = new Date(calls[calls.length - cvvUnblockPerHour]!.called_at).getTime();
    const retryAfter = Math.max(1, Math.ceil((oldest + cvvWindowMs - now.getTime()) / 1000));
    throw new ApiError('rate_limited', undefined, { retry_after: retryAfter }, { 'retry-after': String(retryAfter) });
  }
  await insertCvvUnblockCall(trx, caller.memberId, now);
  await deleteCvvUnblockCallsOutside(trx, caller.memberId, since, ahead);
  const card = await cardOrNotFound(trx, caller, id, true);
  if (terminal.has(card.status)) throw new ApiError('state_invalid', `The card is ${card.status}.`);
  return { card, requestId: requestIdFor('cvv', card, key) };
}

/** Step 2: the issuer lifts its CVV lock; `cvv_blocked` becomes false on the card record. */
export async function finishCvvUnblock(ctx: ServiceContext, p: { card: CardRow; requestId: string }) {
  const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.unblockCvv(rowScope(p.card), { requestId: p.requestId, cardRef: p.card.upstream_ref }),
  );
  await confirmedOrUnknown(
    ctx,
    p.card,
    'CVV unblock',
    outcome,
    "The card issuer's answer is unknown; retry with the same key, then read `cvv_blocked` from the card.",
  );
  if (outcome.kind === 'rejected') throw new ApiError('state_invalid', 'The card issuer refused to unlock the CVV.');
  await storeConfirmed(ctx, p.card, { cvv_blocked: false });
  return { unblocked: true as const };
}
