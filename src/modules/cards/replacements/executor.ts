/**
 * The card replacement executor (docs/cards.md, "Replacement, closing and expiry"): takes a
 * `requested` replacement on the merchant's clock and carries it out step by step, each step one
 * transaction that records how far it got (`step`), so a crash anywhere resumes where it stopped
 * and nothing is done twice:
 *
 *   requested ─prepare─▶ processing/prepared ─issuer issues─▶ processing/issued ─issuer cancels─▶ completed
 *        └──────────────────┴─ refused ─▶ failed (reserved fees released)
 *
 * prepare: security reasons freeze the card and return its balance to available first, then
 * reserve the fees (available → frozen in a source asset); fees the member cannot pay fail the
 * replacement with the card left frozen. Non-security reasons void the inventory row (no fees).
 * The issuer calls are idempotent by our ids (`crp_…`, `crp_…:cancel`): a timeout or 5xx is never
 * taken as a refusal; the same call is made again later (backoff on the merchant's clock).
 * Run by its job, its timed process (the sandbox clock advance) and the lifecycle ticker; a lease
 * keeps two of them off one replacement.
 */
import { rowScope } from '../../../db/owned-by.js';
import type { ServiceContext } from '../../../service-context.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { providerStatusOf } from '../../../upstreams/port.js';
import { raiseAlert } from '../../alerts/index.js';
import { alertUnknownStatus } from '../controls/issuer-calls.js';
import { productBySeq } from '../products/queries.js';

import { cardById, lockCardById } from '../cards/queries.js';
import type { CardReplacementRow } from './tables.js';
import {
  leaseReplacement,
  lockReplacement,
  recordReplacementWait,
  releaseReplacementLease,
  replacementById,
  updateReplacement,
} from './queries.js';
import { prepare } from './prepare.js';
import { complete, fail } from './finish.js';

/** A running executor's hold on one replacement (real time). */
const leaseSeconds = 120;
/** Steps per run: prepare, issue, cancel and complete fit in one run when the issuer answers. */
const stepsPerRunMax = 3;
/** Unanswered issuer calls after which the operator is alerted (once); the executor keeps asking. */
export const replacementStalledAfterAttempts = 20;

/** Delay before asking the issuer again after no answer: 30 s · 2^(attempts-1), at most an hour (merchant clock). */
export function replacementRetryDelaySeconds(attempts: number): number {
  return Math.min(3600, 30 * 2 ** Math.min(Math.max(0, attempts - 1), 20));
}

/** Runs one replacement as far as it can go now. Answers its row afterwards (undefined: leased by another run, or
 * closed). */
export async function runReplacement(ctx: ServiceContext, id: string): Promise<CardReplacementRow | undefined> {
  const claimed = await leaseReplacement(ctx.db, id, leaseSeconds);
  if (!claimed) return undefined;
  let row: CardReplacementRow | undefined = claimed;
  try {
    for (let i = 0; i < stepsPerRunMax && row && (row.status === 'requested' || row.status === 'processing'); i++) {
      row = await advance(ctx, row);
    }
  } finally {
    await releaseReplacementLease(ctx.db, id);
  }
  return replacementById(ctx.db, id);
}

/** One step; undefined when the issuer gave no answer (the replacement waits for `next_run_at`). */
async function advance(ctx: ServiceContext, r: CardReplacementRow): Promise<CardReplacementRow | undefined> {
  if (r.status === 'requested') return ctx.db.transaction().execute((trx) => prepare(ctx, trx, r.id));
  if (r.step === 'prepared') return issueNewCard(ctx, r);
  if (r.step === 'issued') return cancelOldCard(ctx, r);
  throw new Error(`cards: replacement ${r.id} is ${r.status} at step ${r.step}`);
}

/** No usable answer from the issuer: the same call again after a backoff on the merchant's clock; the operator hears of
 * a stall once. */
async function wait(ctx: ServiceContext, r: CardReplacementRow, outcome: 'timeout' | 'unknown'): Promise<undefined> {
  await ctx.db.transaction().execute(async (trx) => {
    const locked = await lockReplacement(trx, r.id);
    if (locked.status !== 'processing' || locked.step !== r.step) return;
    const now = await ctx.clock.now(trx, rowScope(r));
    const attempts = locked.attempts + 1;
    await recordReplacementWait(trx, r.id, {
      upstream_outcome: outcome,
      attempts,
      next_run_at: new Date(now.getTime() + replacementRetryDelaySeconds(attempts) * 1000),
      updated_at: now,
    });
    if (attempts === replacementStalledAfterAttempts) {
      await raiseAlert(trx, {
        kind: 'upstream.reconciliation_stalled',
        merchantId: r.merchant_id,
        environment: r.environment,
        object: 'card_replacement',
        objectId: r.id,
        message:
          `Card replacement ${r.id} has had no answer from the card issuer ${attempts} times (step ${r.step}); ` +
          `the executor keeps asking.`,
      });
    }
  });
  return undefined;
}

/** Step 2: the issuer issues the new card (idempotent by the replacement id). Refused: the replacement fails. */
async function issueNewCard(ctx: ServiceContext, r: CardReplacementRow): Promise<CardReplacementRow | undefined> {
  const card = await cardById(ctx.db, r.card_id);
  const product = (await productBySeq(ctx.db, card.environment, card.product_seq))!;
  const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.issueReplacement(rowScope(r), {
      requestId: r.id,
      cardRef: card.upstream_ref,
      bin: product.bin,
      formFactor: card.form_factor,
    }),
  );
  const status = outcome.kind === 'unknown' && 'status' in outcome ? outcome.status : undefined;
  if (status !== undefined && providerStatusOf(status) === undefined)
    await alertUnknownStatus(ctx, card, 'replacement card', status);
  if (outcome.kind === 'timeout' || outcome.kind === 'unknown') return wait(ctx, r, outcome.kind);
  return ctx.db.transaction().execute(async (trx) => {
    await lockCardById(trx, r.card_id);
    const locked = await lockReplacement(trx, r.id);
    if (locked.status !== 'processing' || locked.step !== 'prepared') return locked;
    const now = await ctx.clock.now(trx, rowScope(r));
    if (outcome.kind === 'rejected') return fail(ctx, trx, locked, 'issuer_refused', now);
    return updateReplacement(trx, r.id, {
      step: 'issued',
      new_card_ref: outcome.card.cardRef,
      new_card_last4: outcome.card.last4,
      new_card_exp_month: outcome.card.expMonth,
      new_card_exp_year: outcome.card.expYear,
      upstream_outcome: 'none',
      updated_at: now,
    });
  });
}

/**
 * Step 3: the issuer cancels the old card (idempotent by `<replacement id>:cancel`), then one
 * transaction completes everything. A refusal to cancel does not undo the replacement: the old
 * card is `replaced` on our side (no state there spends) and the operator is alerted.
 */
async function cancelOldCard(ctx: ServiceContext, r: CardReplacementRow): Promise<CardReplacementRow | undefined> {
  const card = await cardById(ctx.db, r.card_id);
  const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.cancelCard(rowScope(r), {
      requestId: `${r.id}:cancel`,
      cardRef: card.upstream_ref,
      reason: r.security ? 'replaced' : 'voided',
    }),
  );
  if (outcome.kind === 'timeout' || outcome.kind === 'unknown') return wait(ctx, r, outcome.kind);
  if (outcome.kind === 'accepted' && outcome.status !== 'succeeded') {
    if (providerStatusOf(outcome.status) === undefined)
      await alertUnknownStatus(ctx, card, 'cancellation of the replaced card', outcome.status);
    return wait(ctx, r, 'unknown');
  }
  return ctx.db.transaction().execute(async (trx) => {
    const updated = await complete(ctx, trx, r.id);
    if (outcome.kind === 'rejected' && updated.status === 'completed') {
      await raiseAlert(trx, {
        kind: 'card.cancel_refused',
        merchantId: r.merchant_id,
        environment: r.environment,
        object: 'card',
        objectId: r.card_id,
        message:
          `The card issuer refused to cancel card ${r.card_id} replaced by ${r.id} (${outcome.reason}); it is ` +
          `replaced on our side and declines every authorisation.`,
      });
    }
    return updated;
  });
}
