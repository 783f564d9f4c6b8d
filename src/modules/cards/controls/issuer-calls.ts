/**
 * What the member's controls of a card share (limits.ts, service.ts, merchant-rules.ts): the
 * member's card, its product, the request id of a synchronous issuer call and what its answer
 * says, the operator alert of a status outside our enumeration, and the change stored once the
 * issuer confirmed it.
 */
import { rowScope } from '../../../db/owned-by.js';
import { createHash } from 'node:crypto';
import type { Updateable } from 'kysely';
import type { ServiceContext } from '../../../service-context.js';
import { ApiError } from '../../../platform/errors.js';
import { providerStatusOf, type CallOutcome, type NoAnswer } from '../../../upstreams/port.js';
import { raiseAlertOnce } from '../../alerts/index.js';
import { cardOrNotFound, setCard } from '../cards/queries.js';
import { productRowBySeq } from '../products/queries.js';
import { type Db, type MemberCardCaller } from '../shared/queries.js';
import type { CardRow, CardsTable } from '../cards/tables.js';

/** Lease of a key claimed before a synchronous issuer call. */
export const controlLeaseMs = 60_000;

/** States in which the reference refuses billing-address, merchant-rule and CVV changes. */
export const terminal = new Set(['closed', 'expired', 'replaced']);

export async function memberCard(trx: Db, caller: MemberCardCaller, id: string): Promise<CardRow> {
  const card = await cardOrNotFound(trx, caller, id, true);
  return card;
}

export async function productOf(db: Db, card: CardRow) {
  return productRowBySeq(db, card.product_seq);
}

/**
 * Our request id at the issuer for one idempotency key on one card, operation and content: a
 * retry with the key asks again with the same id. The content is in it because a 5xx is not the
 * key's result, so the key may come back with another body; the issuer must not answer that one
 * with what it did for the first.
 */
export const requestIdFor = (operation: string, card: CardRow, key: string, content: unknown = null) =>
  `${operation}:${card.id}:${key}:${createHash('sha256').update(JSON.stringify(content)).digest('hex').slice(0, 16)}`;

/**
 * What a synchronous state change's answer says, or 502 `upstream_error` when it says nothing we
 * can take as done (the reference: "200 means the upstream confirmed"): a timeout or 5xx (outcome
 * unknown), or an acceptance whose status is not `succeeded`. A status outside our enumeration
 * (`unknown_status`, sentinel `SANDBOX_UNKNOWN_STATUS`) also raises the operator alert
 * `upstream.unknown_status`, once per card while it is open.
 */
export async function confirmedOrUnknown(
  ctx: ServiceContext,
  card: CardRow,
  what: string,
  outcome: CallOutcome,
  message: string,
): Promise<Exclude<CallOutcome, NoAnswer>> {
  if (outcome.kind === 'timeout' || outcome.kind === 'unknown') throw new ApiError('upstream_error', message);
  if (outcome.kind === 'accepted' && providerStatusOf(outcome.status) !== 'succeeded') {
    if (providerStatusOf(outcome.status) === undefined) await alertUnknownStatus(ctx, card, what, outcome.status);
    throw new ApiError('upstream_error', message);
  }
  return outcome;
}

/** One `upstream.unknown_status` alert per card while open (closing/service.ts and the replacement executor raise it
 * too). */
export async function alertUnknownStatus(
  ctx: ServiceContext,
  card: Pick<CardRow, 'id' | 'merchant_id' | 'environment'>,
  what: string,
  status: string,
): Promise<void> {
  await raiseAlertOnce(ctx.db, {
    kind: 'upstream.unknown_status',
    merchantId: card.merchant_id,
    environment: card.environment,
    object: 'card',
    objectId: card.id,
    message:
      `Card ${card.id}: the issuer answered the ${what} with a status outside our enumeration (${status}); it ` +
      `is not taken as confirmed.`,
  });
}

/** A change the issuer confirmed, stored on the card at the merchant's time. */
export async function storeConfirmed(ctx: ServiceContext, card: CardRow, set: Updateable<CardsTable>): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const now = await ctx.clock.now(trx, rowScope(card));
    await setCard(trx, card.id, { ...set, updated_at: now });
  });
}
