// Over 300 lines: limits, billing address and CVV unblock share the issuer-call helpers; a split by operation is due
/**
 * The member's controls of a card (docs/cards.md): limits (recorded at once, pushed to the issuer
 * by a job; only tightening takes effect when the push fails), the billing address (a synchronous
 * issuer call), the CVV unblock (5 calls per member per hour), and the helpers the card-level
 * merchant rules (merchant-rules.ts) share with them.
 */
import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import type { ClaimedJob } from '../../../jobs/queries.js';
import { enqueue } from '../../../jobs/queries.js';
import { ApiError, invalidFields, type ErrorCode } from '../../../platform/errors.js';
import { minorFromDb, parseAmount } from '../../../money/index.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { providerStatusOf, type CallOutcome } from '../../../upstreams/port.js';
import { raiseAlertOnce } from '../../alerts/index.js';
import { cardByIdIfAny, findCard, lockCardById, setCard } from '../cards/queries.js';
import { productRowBySeq } from '../products/queries.js';
import { cvvUnblockCallsBetween, deleteCvvUnblockCallsOutside, insertCvvUnblockCall, lockMember } from './queries.js';
import { scaleOf, type Db, type MemberCardCaller } from '../shared/queries.js';
import { addressProblems, normaliseAddress } from '../shared/rules.js';
import { limitProblems, tighterLimits, type Limits } from './rules.js';
import type { Address } from '../shared/tables.js';
import type { CardRow } from '../cards/tables.js';
import { cardView } from '../cards/views.js';

export const controlErrors = {
  limits: ['state_invalid', 'product_not_available', 'invalid_fields', 'invalid_request', 'not_found'],
  merchantRules: [
    'state_invalid',
    'product_not_available',
    'invalid_fields',
    'invalid_request',
    'not_found',
    'upstream_error',
  ],
  getMerchantRules: ['not_found'],
  billingAddress: [
    'state_invalid',
    'product_not_available',
    'invalid_fields',
    'invalid_request',
    'not_found',
    'upstream_error',
  ],
  cvvUnblock: ['state_invalid', 'not_found', 'upstream_error', 'rate_limited'],
} as const satisfies Record<string, readonly ErrorCode[]>;

/** Lease of a key claimed before a synchronous issuer call. */
export const controlLeaseMs = 60_000;

/** States in which the reference refuses a change of limits. */
const limitsRefused = new Set(['closed', 'closing', 'expired', 'replaced']);
/** States in which the reference refuses billing-address, merchant-rule and CVV changes. */
export const terminal = new Set(['closed', 'expired', 'replaced']);

export async function memberCard(trx: Db, caller: MemberCardCaller, id: string): Promise<CardRow> {
  const card = await findCard(trx, caller, id, true);
  if (!card) throw new ApiError('not_found', 'No such card.');
  return card;
}

export async function productOf(db: Db, card: CardRow) {
  return productRowBySeq(db, card.product_seq);
}

export const callOf = (card: CardRow) => ({ merchantId: card.merchant_id, environment: card.environment });

/**
 * Our request id at the issuer for one idempotency key on one card, operation and content: a
 * retry with the key asks again with the same id. The content is in it because a 5xx is not the
 * key's result, so the key may come back with another body; the issuer must not answer that one
 * with what it did for the first.
 */
export const requestIdFor = (operation: string, card: CardRow, key: string, content: unknown = null) =>
  `${operation}:${card.id}:${key}:${createHash('sha256').update(JSON.stringify(content)).digest('hex').slice(0, 16)}`;

// ---------------------------------------------------------------------------------------------
// Limits

export const limitsPushJobKind = 'card.limits_push';
const limitsPushAttempts = 5;

export interface LimitsBody {
  single?: string;
  daily?: string;
  monthly?: string;
}

const limitsOf = (c: Pick<CardRow, 'limit_single' | 'limit_daily' | 'limit_monthly'>): Limits => ({
  single: minorFromDb(c.limit_single),
  daily: minorFromDb(c.limit_daily),
  monthly: minorFromDb(c.limit_monthly),
});
const confirmedOf = (c: CardRow): Limits => ({
  single: minorFromDb(c.confirmed_single),
  daily: minorFromDb(c.confirmed_daily),
  monthly: minorFromDb(c.confirmed_monthly),
});

/**
 * `PATCH /v1/cards/{id}/limits`: validated against the product's caps (the reference's rules,
 * `limitProblems`), recorded at once with a new `limits_version`, and a push job enqueued in the
 * same transaction. A malformed amount is `invalid_request` (extensions 6: not the reference's 500).
 */
export async function setLimits(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: MemberCardCaller,
  id: string,
  body: LimitsBody,
) {
  const card = await memberCard(trx, caller, id);
  if (limitsRefused.has(card.status)) throw new ApiError('state_invalid', `The card is ${card.status}.`);
  const product = await productOf(trx, card);
  if (!product.enabled) throw new ApiError('product_not_available', "The card's product is withdrawn.");
  const scale = await scaleOf(trx, card.currency);
  const next = limitsOf(card);
  for (const layer of ['single', 'daily', 'monthly'] as const) {
    const v = body[layer];
    if (v !== undefined) next[layer] = parseAmount(v, scale, layer);
  }
  const caps = {
    single: minorFromDb(product.max_single),
    daily: minorFromDb(product.max_daily),
    monthly: minorFromDb(product.max_monthly),
  };
  const problems = limitProblems(next, caps, scale);
  if (problems.length > 0) {
    const text = problems.map((p) => `${p.layer}: ${p.reason.replaceAll('_', ' ')}`).join('; ');
    // The reference: this code carries no `fields` array here.
    throw new ApiError('invalid_fields', `Limits not accepted (${text}).`, { reason: problems[0]!.reason });
  }
  const now = await ctx.clock.now(trx, caller);
  const version = card.limits_version + 1;
  await setCard(trx, card.id, {
    limit_single: next.single,
    limit_daily: next.daily,
    limit_monthly: next.monthly,
    limits_version: version,
    limits_sync: 'pending',
    updated_at: now,
  });
  await enqueue(trx, {
    kind: limitsPushJobKind,
    payload: { card_id: card.id, version },
    clock: caller,
    dedupeKey: `${limitsPushJobKind}:${card.id}:${version}`,
    maxAttempts: limitsPushAttempts,
  });
  return { id: card.id, accepted: true as const };
}

/**
 * The push job: the issuer is told the recorded limits. Confirmed → they are the confirmed set.
 * Refused, or still unknown after the last attempt → only tightening stays: each layer becomes
 * the tighter of the confirmed and the requested value (`tighterLimits`). A newer version makes
 * an older job stand down.
 */
export async function pushLimits(job: ClaimedJob, ctx: ServiceContext): Promise<void> {
  const cardId = String(job.payload.card_id);
  const version = Number(job.payload.version);
  const card = await cardByIdIfAny(ctx.db, cardId);
  if (!card || card.limits_version !== version) return;
  const wanted = limitsOf(card);
  const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.setLimits(callOf(card), {
      requestId: `limits:${card.id}:${version}`,
      cardRef: card.upstream_ref,
      ...wanted,
    }),
  );
  // Only `succeeded` confirms; any other acceptance is as unknown as no answer (a status outside
  // our enumeration also raises one alert for the card): asked again, then only tightening is kept.
  const confirmed = outcome.kind === 'accepted' && outcome.status === 'succeeded';
  if (outcome.kind === 'accepted' && providerStatusOf(outcome.status) === undefined)
    await alertUnknownStatus(ctx, card, 'limits', outcome.status);
  if (outcome.kind !== 'rejected' && !confirmed && job.attempts < job.max_attempts) {
    throw new Error(
      `card limits push: issuer ` +
        `outcome ${outcome.kind === 'accepted' ? `status ${outcome.status}` : outcome.kind}; retried`,
    );
  }
  await ctx.db.transaction().execute(async (trx) => {
    const locked = await lockCardById(trx, cardId);
    if (locked.limits_version !== version) return;
    const now = await ctx.clock.now(trx, callOf(locked));
    if (confirmed) {
      await setCard(trx, cardId, {
        confirmed_single: wanted.single,
        confirmed_daily: wanted.daily,
        confirmed_monthly: wanted.monthly,
        limits_sync: 'synced',
        updated_at: now,
      });
      return;
    }
    const kept = tighterLimits(confirmedOf(locked), wanted);
    await setCard(trx, cardId, {
      limit_single: kept.single,
      limit_daily: kept.daily,
      limit_monthly: kept.monthly,
      limits_sync: 'failed',
      updated_at: now,
    });
  });
}

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
): Promise<Exclude<CallOutcome, { kind: 'timeout' | 'unknown' }>> {
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
  const call = callOf(p.card);
  const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.updateBillingAddress(call, {
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
  await ctx.db.transaction().execute(async (trx) => {
    const now = await ctx.clock.now(trx, call);
    await setCard(trx, p.card.id, { billing_address: JSON.stringify(p.address), updated_at: now });
  });
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
  const card = await findCard(trx, caller, id, true);
  if (!card) throw new ApiError('not_found', 'No such card.');
  if (terminal.has(card.status)) throw new ApiError('state_invalid', `The card is ${card.status}.`);
  return { card, requestId: requestIdFor('cvv', card, key) };
}

/** Step 2: the issuer lifts its CVV lock; `cvv_blocked` becomes false on the card record. */
export async function finishCvvUnblock(ctx: ServiceContext, p: { card: CardRow; requestId: string }) {
  const call = callOf(p.card);
  const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.unblockCvv(call, { requestId: p.requestId, cardRef: p.card.upstream_ref }),
  );
  await confirmedOrUnknown(
    ctx,
    p.card,
    'CVV unblock',
    outcome,
    "The card issuer's answer is unknown; retry with the same key, then read `cvv_blocked` from the card.",
  );
  if (outcome.kind === 'rejected') throw new ApiError('state_invalid', 'The card issuer refused to unlock the CVV.');
  await ctx.db.transaction().execute(async (trx) => {
    const now = await ctx.clock.now(trx, call);
    await setCard(trx, p.card.id, { cvv_blocked: false, updated_at: now });
  });
  return { unblocked: true as const };
}

export { cardView };
