/**
 * The member's controls of a card (docs/cards.md): limits (recorded at once, pushed to the issuer
 * by a job; only tightening takes effect when the push fails), card-level merchant rules and the
 * billing address (synchronous issuer calls), and the CVV unblock (5 calls per member per hour).
 */
import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import type { ClaimedJob } from '../../../jobs/queue.js';
import { enqueue } from '../../../jobs/queue.js';
import { ApiError, invalidFields, type ErrorCode } from '../../../platform/errors.js';
import { minorFromDb, parseAmount } from '../../../money/index.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { providerStatusOf, type CallOutcome } from '../../../upstreams/port.js';
import { raiseAlertOnce } from '../../alerts/queries.js';
import { findCard, scaleOf, type Db, type MemberCardCaller } from '../shared/queries.js';
import { addressProblems, normaliseAddress } from '../shared/rules.js';
import { limitProblems, merchantRuleProblems, tighterLimits, type Limits } from './rules.js';
import type { Address, CardRow, MerchantRuleSet } from '../tables.js';
import { cardView } from '../cards/views.js';

export const controlErrors = {
  limits: ['state_invalid', 'product_not_available', 'invalid_fields', 'invalid_request', 'not_found'],
  merchantRules: ['state_invalid', 'product_not_available', 'invalid_fields', 'invalid_request', 'not_found', 'upstream_error'],
  getMerchantRules: ['not_found'],
  billingAddress: ['state_invalid', 'product_not_available', 'invalid_fields', 'invalid_request', 'not_found', 'upstream_error'],
  cvvUnblock: ['state_invalid', 'not_found', 'upstream_error', 'rate_limited'],
} as const satisfies Record<string, readonly ErrorCode[]>;

/** Lease of a key claimed before a synchronous issuer call. */
export const controlLeaseMs = 60_000;

/** States in which the reference refuses a change of limits. */
const limitsRefused = new Set(['closed', 'closing', 'expired', 'replaced']);
/** States in which the reference refuses billing-address, merchant-rule and CVV changes. */
const terminal = new Set(['closed', 'expired', 'replaced']);

async function memberCard(trx: Db, caller: MemberCardCaller, id: string): Promise<CardRow> {
  const card = await findCard(trx, caller, id, true);
  if (!card) throw new ApiError('not_found', 'No such card.');
  return card;
}

async function productOf(db: Db, card: CardRow) {
  return db.selectFrom('card_products').selectAll().where('seq', '=', card.product_seq).executeTakeFirstOrThrow();
}

const callOf = (card: CardRow) => ({ merchantId: card.merchant_id, environment: card.environment });

/**
 * Our request id at the issuer for one idempotency key on one card, operation and content: a
 * retry with the key asks again with the same id. The content is in it because a 5xx is not the
 * key's result, so the key may come back with another body; the issuer must not answer that one
 * with what it did for the first.
 */
const requestIdFor = (operation: string, card: CardRow, key: string, content: unknown = null) =>
  `${operation}:${card.id}:${key}:${createHash('sha256').update(JSON.stringify(content)).digest('hex').slice(0, 16)}`;

// ---------------------------------------------------------------------------------------------
// Limits

export const limitsPushJobKind = 'card.limits_push';
const limitsPushAttempts = 5;

export interface LimitsBody { single?: string; daily?: string; monthly?: string }

const limitsOf = (c: Pick<CardRow, 'limit_single' | 'limit_daily' | 'limit_monthly'>): Limits =>
  ({ single: minorFromDb(c.limit_single), daily: minorFromDb(c.limit_daily), monthly: minorFromDb(c.limit_monthly) });
const confirmedOf = (c: CardRow): Limits =>
  ({ single: minorFromDb(c.confirmed_single), daily: minorFromDb(c.confirmed_daily), monthly: minorFromDb(c.confirmed_monthly) });

/**
 * `PATCH /v1/cards/{id}/limits`: validated against the product's caps (the reference's rules,
 * `limitProblems`), recorded at once with a new `limits_version`, and a push job enqueued in the
 * same transaction. A malformed amount is `invalid_request` (extensions 6: not the reference's 500).
 */
export async function setLimits(ctx: ServiceContext, trx: Transaction<Database>, caller: MemberCardCaller, id: string, body: LimitsBody) {
  const card = await memberCard(trx, caller, id);
  if (limitsRefused.has(card.status)) throw new ApiError('state_invalid', `The card is ${card.status}.`);
  const product = await productOf(trx, card);
  if (!product.enabled) throw new ApiError('product_not_available', 'The card\'s product is withdrawn.');
  const scale = await scaleOf(trx, card.currency);
  const next = limitsOf(card);
  for (const layer of ['single', 'daily', 'monthly'] as const) {
    const v = body[layer];
    if (v !== undefined) next[layer] = parseAmount(v, scale, layer);
  }
  const caps = { single: minorFromDb(product.max_single), daily: minorFromDb(product.max_daily), monthly: minorFromDb(product.max_monthly) };
  const problems = limitProblems(next, caps, scale);
  if (problems.length > 0) {
    const text = problems.map((p) => `${p.layer}: ${p.reason.replaceAll('_', ' ')}`).join('; ');
    // The reference: this code carries no `fields` array here.
    throw new ApiError('invalid_fields', `Limits not accepted (${text}).`, { reason: problems[0]!.reason });
  }
  const now = await ctx.clock.now(trx, caller);
  const version = card.limits_version + 1;
  await trx.updateTable('cards').set({
    limit_single: next.single, limit_daily: next.daily, limit_monthly: next.monthly, limits_version: version, limits_sync: 'pending', updated_at: now,
  }).where('id', '=', card.id).execute();
  await enqueue(trx, {
    kind: limitsPushJobKind, payload: { card_id: card.id, version }, clock: caller,
    dedupeKey: `${limitsPushJobKind}:${card.id}:${version}`, maxAttempts: limitsPushAttempts,
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
  const card = await ctx.db.selectFrom('cards').selectAll().where('id', '=', cardId).executeTakeFirst();
  if (!card || card.limits_version !== version) return;
  const wanted = limitsOf(card);
  const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.setLimits(callOf(card), { requestId: `limits:${card.id}:${version}`, cardRef: card.upstream_ref, ...wanted }));
  // Only `succeeded` confirms; any other acceptance is as unknown as no answer (a status outside
  // our enumeration also raises one alert for the card): asked again, then only tightening is kept.
  const confirmed = outcome.kind === 'accepted' && outcome.status === 'succeeded';
  if (outcome.kind === 'accepted' && providerStatusOf(outcome.status) === undefined) await alertUnknownStatus(ctx, card, 'limits', outcome.status);
  if (outcome.kind !== 'rejected' && !confirmed && job.attempts < job.max_attempts) {
    throw new Error(`card limits push: issuer outcome ${outcome.kind === 'accepted' ? `status ${outcome.status}` : outcome.kind}; retried`);
  }
  await ctx.db.transaction().execute(async (trx) => {
    const locked = await trx.selectFrom('cards').selectAll().where('id', '=', cardId).forNoKeyUpdate().executeTakeFirstOrThrow();
    if (locked.limits_version !== version) return;
    const now = await ctx.clock.now(trx, callOf(locked));
    if (confirmed) {
      await trx.updateTable('cards').set({
        confirmed_single: wanted.single, confirmed_daily: wanted.daily, confirmed_monthly: wanted.monthly, limits_sync: 'synced', updated_at: now,
      }).where('id', '=', cardId).execute();
      return;
    }
    const kept = tighterLimits(confirmedOf(locked), wanted);
    await trx.updateTable('cards').set({
      limit_single: kept.single, limit_daily: kept.daily, limit_monthly: kept.monthly, limits_sync: 'failed', updated_at: now,
    }).where('id', '=', cardId).execute();
  });
}

// ---------------------------------------------------------------------------------------------
// Merchant rules

export interface MerchantRulesBody { rule_type: string; merchant_names?: string[]; mcc_list?: string[] }

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export interface MerchantRulesView {
  id: string;
  rule_type: 'white' | 'black' | null;
  merchant_names: string[];
  mcc_list: string[];
  synced: boolean;
  synced_at: string | null;
}

const noRules = (cardId: string): MerchantRulesView => ({ id: cardId, rule_type: null, merchant_names: [], mcc_list: [], synced: true, synced_at: null });

export async function getMerchantRules(db: Db, caller: MemberCardCaller, id: string): Promise<MerchantRulesView> {
  const card = await findCard(db, caller, id);
  if (!card) throw new ApiError('not_found', 'No such card.');
  const row = await db.selectFrom('card_merchant_rules').selectAll().where('card_id', '=', card.id).executeTakeFirst();
  if (!row) return noRules(card.id);
  return { id: card.id, rule_type: row.rule_type, merchant_names: row.merchant_names, mcc_list: row.mcc_list, synced: row.synced, synced_at: iso(row.synced_at) };
}

export interface PreparedRules { card: CardRow; rules: MerchantRuleSet | null; requestId: string }

/**
 * `PUT` (rules) and `DELETE` (null) of the merchant rules, step 1, committed with the key's claim:
 * the checks, then the requested set stored as the baseline, unconfirmed (`synced: false`), with
 * the set the issuer last confirmed kept beside it.
 */
export async function prepareMerchantRules(ctx: ServiceContext, trx: Transaction<Database>, caller: MemberCardCaller, id: string, body: MerchantRulesBody | null, key: string): Promise<PreparedRules> {
  const card = await memberCard(trx, caller, id);
  if (terminal.has(card.status)) throw new ApiError('state_invalid', `The card is ${card.status}.`);
  const product = await productOf(trx, card);
  if (!product.enabled || !product.card_lists_supported) throw new ApiError('product_not_available', 'The card\'s product does not support card-level merchant lists.');
  let rules: MerchantRuleSet | null = null;
  if (body) {
    const problems = merchantRuleProblems(body);
    if (problems.length > 0) throw invalidFields(problems);
    rules = {
      rule_type: body.rule_type as 'white' | 'black',
      merchant_names: [...new Set((body.merchant_names ?? []).map((n) => n.trim()))],
      mcc_list: [...new Set(body.mcc_list ?? [])],
    };
  }
  const now = await ctx.clock.now(trx, caller);
  const requestId = requestIdFor(body ? 'rules' : 'rules-delete', card, key, rules);
  const existing = await trx.selectFrom('card_merchant_rules').selectAll().where('card_id', '=', card.id).forUpdate().executeTakeFirst();
  const confirmed = existing ? (existing.synced ? setOf(existing) : existing.confirmed) : null;
  const values = {
    rule_type: rules?.rule_type ?? null,
    merchant_names: JSON.stringify(rules?.merchant_names ?? []),
    mcc_list: JSON.stringify(rules?.mcc_list ?? []),
    synced: false,
    synced_at: existing?.synced_at ?? null,
    request_id: requestId,
    confirmed: confirmed ? JSON.stringify(confirmed) : null,
    updated_at: now,
    // Left unconfirmed (a 502 and no retry: an unowned key), reconciliation asks the issuer once the claim's lease is past.
    check_count: 0,
    next_check_at: new Date(now.getTime() + controlLeaseMs),
  };
  if (existing) await trx.updateTable('card_merchant_rules').set(values).where('card_id', '=', card.id).execute();
  else await trx.insertInto('card_merchant_rules').values({ card_id: card.id, ...values }).execute();
  return { card, rules, requestId };
}

function setOf(row: { rule_type: 'white' | 'black' | null; merchant_names: string[]; mcc_list: string[] }): MerchantRuleSet | null {
  return row.rule_type === null ? null : { rule_type: row.rule_type, merchant_names: row.merchant_names, mcc_list: row.mcc_list };
}

/**
 * Step 2: the issuer replaces the set. Confirmed → `synced: true` with `synced_at`. Refused →
 * the confirmed set comes back and `invalid_request`. Timeout or 5xx → 502 `upstream_error`: the
 * requested set stays stored as the baseline, unconfirmed; a retry with the same key asks again.
 */
export async function finishMerchantRules(ctx: ServiceContext, p: PreparedRules): Promise<MerchantRulesView> {
  const call = callOf(p.card);
  const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () => ctx.upstreams.card.setMerchantRules(call, {
    requestId: p.requestId, cardRef: p.card.upstream_ref,
    rules: p.rules ? { ruleType: p.rules.rule_type, merchantNames: p.rules.merchant_names, mccList: p.rules.mcc_list } : null,
  }));
  await confirmedOrUnknown(ctx, p.card, 'merchant rules', outcome, 'The card issuer\'s answer is unknown; the rules are stored unconfirmed. Retry with the same key, then read the rules.');
  const answer = await ctx.db.transaction().execute(async (trx): Promise<MerchantRulesView | 'refused'> => {
    const row = await trx.selectFrom('card_merchant_rules').selectAll().where('card_id', '=', p.card.id).forUpdate().executeTakeFirstOrThrow();
    const now = await ctx.clock.now(trx, call);
    if (row.request_id !== p.requestId) {
      // A later request replaced the baseline meanwhile: it answers for the current state.
      if (outcome.kind === 'rejected') return 'refused';
      return getMerchantRules(trx, { ...call, memberId: p.card.member_id }, p.card.id);
    }
    if (outcome.kind === 'rejected') {
      await restoreConfirmedRules(trx, p.card.id, row.confirmed, now);
      return 'refused';
    }
    await confirmRules(trx, p.card.id, p.rules, now);
    if (!p.rules) return { ...noRules(p.card.id), synced_at: now.toISOString() };
    return { id: p.card.id, ...p.rules, synced: true, synced_at: now.toISOString() };
  });
  if (answer === 'refused') throw new ApiError('invalid_request', 'The card issuer refused the rules.');
  return answer;
}

/** The issuer refused the stored set: the set it last confirmed comes back (`synced: true`, `synced_at` unchanged). */
export async function restoreConfirmedRules(trx: Transaction<Database>, cardId: string, back: MerchantRuleSet | null, now: Date): Promise<void> {
  await trx.updateTable('card_merchant_rules').set({
    rule_type: back?.rule_type ?? null, merchant_names: JSON.stringify(back?.merchant_names ?? []), mcc_list: JSON.stringify(back?.mcc_list ?? []),
    synced: true, next_check_at: null, updated_at: now,
  }).where('card_id', '=', cardId).execute();
}

/** The issuer holds the stored set: `synced: true`, `synced_at` now, and it is the confirmed set. */
export async function confirmRules(trx: Transaction<Database>, cardId: string, rules: MerchantRuleSet | null, now: Date): Promise<void> {
  await trx.updateTable('card_merchant_rules').set({ synced: true, synced_at: now, confirmed: JSON.stringify(rules), next_check_at: null, updated_at: now })
    .where('card_id', '=', cardId).execute();
}

/** The stored (requested) set of a rules row, null when it is a removal. */
export function storedRuleSet(row: { rule_type: 'white' | 'black' | null; merchant_names: string[]; mcc_list: string[] }): MerchantRuleSet | null {
  return setOf(row);
}

/**
 * What a synchronous state change's answer says, or 502 `upstream_error` when it says nothing we
 * can take as done (the reference: "200 means the upstream confirmed"): a timeout or 5xx (outcome
 * unknown), or an acceptance whose status is not `succeeded`. A status outside our enumeration
 * (`unknown_status`, sentinel `SANDBOX_UNKNOWN_STATUS`) also raises the operator alert
 * `upstream.unknown_status`, once per card while it is open.
 */
async function confirmedOrUnknown(ctx: ServiceContext, card: CardRow, what: string, outcome: CallOutcome, message: string): Promise<Exclude<CallOutcome, { kind: 'timeout' | 'unknown' }>> {
  if (outcome.kind === 'timeout' || outcome.kind === 'unknown') throw new ApiError('upstream_error', message);
  if (outcome.kind === 'accepted' && providerStatusOf(outcome.status) !== 'succeeded') {
    if (providerStatusOf(outcome.status) === undefined) await alertUnknownStatus(ctx, card, what, outcome.status);
    throw new ApiError('upstream_error', message);
  }
  return outcome;
}

/** One `upstream.unknown_status` alert per card while open (closing.ts and the replacement executor raise it too). */
export async function alertUnknownStatus(ctx: ServiceContext, card: Pick<CardRow, 'id' | 'merchant_id' | 'environment'>, what: string, status: string): Promise<void> {
  await raiseAlertOnce(ctx.db, {
    kind: 'upstream.unknown_status', merchantId: card.merchant_id, environment: card.environment, object: 'card', objectId: card.id,
    message: `Card ${card.id}: the issuer answered the ${what} with a status outside our enumeration (${status}); it is not taken as confirmed.`,
  });
}

// ---------------------------------------------------------------------------------------------
// Billing address

export interface PreparedAddress { card: CardRow; address: Address; requestId: string }

/** `PATCH /v1/cards/{id}/billing-address`, step 1 (with the key's claim): the checks only; nothing is stored before the issuer confirms. */
export async function prepareBillingAddress(trx: Transaction<Database>, caller: MemberCardCaller, id: string, body: Partial<Record<keyof Address, unknown>>, key: string): Promise<PreparedAddress> {
  const problems = addressProblems(body);
  if (problems.length > 0) throw invalidFields(problems);
  const card = await memberCard(trx, caller, id);
  if (terminal.has(card.status)) throw new ApiError('state_invalid', `The card is ${card.status}.`);
  const product = await productOf(trx, card);
  if (!product.billing_address_updatable) throw new ApiError('product_not_available', 'The card\'s BIN does not allow a billing-address change.');
  const address = normaliseAddress(body as unknown as Address);
  return { card, address, requestId: requestIdFor('billing', card, key, address) };
}

/** Step 2: synchronous issuer call; 200 only when it confirmed (then stored); 502 `upstream_error` with nothing stored when the outcome is unknown. */
export async function finishBillingAddress(ctx: ServiceContext, p: PreparedAddress) {
  const call = callOf(p.card);
  const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.updateBillingAddress(call, { requestId: p.requestId, cardRef: p.card.upstream_ref, address: p.address }));
  await confirmedOrUnknown(ctx, p.card, 'billing address change', outcome, 'The card issuer\'s answer is unknown; the address is not stored. Retry with the same key, then read the card.');
  if (outcome.kind === 'rejected') throw new ApiError('invalid_request', 'The card issuer refused the address.');
  await ctx.db.transaction().execute(async (trx) => {
    const now = await ctx.clock.now(trx, call);
    await trx.updateTable('cards').set({ billing_address: JSON.stringify(p.address), updated_at: now }).where('id', '=', p.card.id).execute();
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
export async function prepareCvvUnblock(ctx: ServiceContext, trx: Transaction<Database>, caller: MemberCardCaller, id: string, key: string) {
  await trx.selectFrom('members').select('id').where('id', '=', caller.memberId).forNoKeyUpdate().executeTakeFirst();
  const now = new Date(ctx.requestClock());
  const since = new Date(now.getTime() - cvvWindowMs);
  const ahead = new Date(now.getTime() + cvvWindowMs);
  const calls = await trx.selectFrom('card_cvv_unblock_calls').select('called_at')
    .where('member_id', '=', caller.memberId).where('called_at', '>', since).where('called_at', '<=', ahead).orderBy('called_at').execute();
  if (calls.length >= cvvUnblockPerHour) {
    const oldest = new Date(calls[calls.length - cvvUnblockPerHour]!.called_at).getTime();
    const retryAfter = Math.max(1, Math.ceil((oldest + cvvWindowMs - now.getTime()) / 1000));
    throw new ApiError('rate_limited', undefined, { retry_after: retryAfter }, { 'retry-after': String(retryAfter) });
  }
  await trx.insertInto('card_cvv_unblock_calls').values({ member_id: caller.memberId, called_at: now }).execute();
  await trx.deleteFrom('card_cvv_unblock_calls').where('member_id', '=', caller.memberId)
    .where((eb) => eb.or([eb('called_at', '<=', since), eb('called_at', '>', ahead)])).execute();
  const card = await findCard(trx, caller, id, true);
  if (!card) throw new ApiError('not_found', 'No such card.');
  if (terminal.has(card.status)) throw new ApiError('state_invalid', `The card is ${card.status}.`);
  return { card, requestId: requestIdFor('cvv', card, key) };
}

/** Step 2: the issuer lifts its CVV lock; `cvv_blocked` becomes false on the card record. */
export async function finishCvvUnblock(ctx: ServiceContext, p: { card: CardRow; requestId: string }) {
  const call = callOf(p.card);
  const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () => ctx.upstreams.card.unblockCvv(call, { requestId: p.requestId, cardRef: p.card.upstream_ref }));
  await confirmedOrUnknown(ctx, p.card, 'CVV unblock', outcome, 'The card issuer\'s answer is unknown; retry with the same key, then read `cvv_blocked` from the card.');
  if (outcome.kind === 'rejected') throw new ApiError('state_invalid', 'The card issuer refused to unlock the CVV.');
  await ctx.db.transaction().execute(async (trx) => {
    const now = await ctx.clock.now(trx, call);
    await trx.updateTable('cards').set({ cvv_blocked: false, updated_at: now }).where('id', '=', p.card.id).execute();
  });
  return { unblocked: true as const };
}

export { cardView };
