/**
 * The member's limits of a card (docs/cards.md): recorded at once and pushed to the issuer by a
 * job; only tightening takes effect when the push fails.
 */
import { rowScope } from '../../../db/owned-by.js';
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import type { ClaimedJob } from '../../../jobs/queries.js';
import { enqueue } from '../../../jobs/queries.js';
import { ApiError } from '../../../platform/errors.js';
import { minorFromDb, parseAmount } from '../../../money/index.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { providerStatusOf } from '../../../upstreams/port.js';
import { cardByIdIfAny, lockCardById, setCard } from '../cards/queries.js';
import { type MemberCardCaller } from '../shared/queries.js';
import { limitProblems, tighterLimits, type Limits } from './rules.js';
import type { CardRow } from '../cards/tables.js';
import { alertUnknownStatus, memberCard, productOf } from './issuer-calls.js';
import { assetScale } from '../../assets/index.js';

/** States in which the reference refuses a change of limits. */
const limitsRefused = new Set(['closed', 'closing', 'expired', 'replaced']);

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
  const scale = await assetScale(trx, card.currency);
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
    ctx.upstreams.card.setLimits(rowScope(card), {
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
    const now = await ctx.clock.now(trx, rowScope(locked));
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
