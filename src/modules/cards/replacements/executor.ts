// Over 300 lines: the executor's steps are one state machine (prepare, issue, cancel, complete, fail)
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
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import { newId } from '../../../platform/ids.js';
import {
  accountBalance,
  minorFromDb,
  postEntry,
  feeChargeLines,
  feeFreezeLines,
  feeRefundLines,
  lifecycleEntryKinds,
} from '../../../money/index.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { providerStatusOf } from '../../../upstreams/port.js';
import { raiseAlert } from '../../alerts/index.js';
import { emitCardStatus, emitReplacement, returnCardBalance } from '../shared/balance-return.js';
import { alertUnknownStatus } from '../controls/service.js';
import { productBySeq } from '../products/queries.js';
import { scaleOf } from '../shared/queries.js';
import { feeInSource } from '../applications/rules.js';
import { replacementReferenceType } from '../shared/rules.js';
import { replacementFeeAsset, replacementFees } from './rules.js';
import { openingInventory, openingStatus } from '../cards/state.js';
import { replacementStartProblem, replacementTransition } from './state.js';
import type { CardReplacementRow } from './tables.js';
import { failPendingTopUps } from '../topups/dispatch.js';
import {
  cardById,
  freezeCard,
  insertCard,
  lockCardById,
  restoreCardInventory,
  updateCard,
  voidCardInventory,
} from '../cards/queries.js';
import { sourceAssetOfApplication } from '../applications/queries.js';
import {
  cardIdOfReplacement,
  leaseReplacement,
  lockReplacement,
  recordReplacementWait,
  releaseReplacementLease,
  replacementById,
  updateReplacement,
} from './queries.js';

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

type Trx = Transaction<Database>;
const callOf = (r: { merchant_id: string; environment: CardReplacementRow['environment'] }) => ({
  merchantId: r.merchant_id,
  environment: r.environment,
});

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

/**
 * Step 1, one transaction. Security reasons stop the card first, whatever follows: frozen, its
 * balance returned to available, its pending top-ups failed; then the fees are reserved from
 * available as it stands after that (the spec's order: "card frozen, balance refunded to available
 * balance, then ... fees charged"; the returned balance pays only if the card currency is itself a
 * source asset, no conversion). Fees the member cannot pay fail the replacement with the card left
 * frozen (a security reason was given: the card must not spend again). Non-security reasons void
 * the inventory row and return the balance (no fees).
 */
async function prepare(ctx: ServiceContext, trx: Trx, id: string): Promise<CardReplacementRow> {
  const cardId = await cardIdOfReplacement(trx, id);
  const card = await lockCardById(trx, cardId);
  const r = await lockReplacement(trx, id);
  if (r.status !== 'requested') return r;
  const now = await ctx.clock.now(trx, callOf(r));
  const problem = replacementStartProblem(card, r.security);
  if (problem) return fail(ctx, trx, r, problem, now);
  const reference = { type: replacementReferenceType, id: r.id };
  let returned = 0n;
  if (r.security) {
    await freezeCard(trx, card.id, card.frozen_at ?? now, now);
    returned = await returnCardBalance(trx, card, reference, now);
    // The card ends with this replacement or stays frozen: top-ups not yet sent to the issuer fail, their freeze back.
    await failPendingTopUps(trx, card.id, 'card_frozen');
  }
  const product = (await productBySeq(trx, card.environment, card.product_seq))!;
  const fees = replacementFees(
    {
      replacementFee: minorFromDb(product.replacement_fee),
      postageFee: minorFromDb(product.postage_fee),
      formFactor: card.form_factor,
    },
    r.security,
  );
  const cardScale = await scaleOf(trx, card.currency);
  const inAsset = new Map<string, { replacement: bigint; postage: bigint; available: bigint }>();
  for (const asset of product.source_assets) {
    const scale = await scaleOf(trx, asset);
    const available = await accountBalance(
      trx,
      card.environment,
      { owner: 'member', memberId: card.member_id, bucket: 'available' },
      asset,
    );
    inAsset.set(asset, {
      replacement: feeInSource(fees.replacement, cardScale, scale),
      postage: feeInSource(fees.postage, cardScale, scale),
      available,
    });
  }
  const application = await sourceAssetOfApplication(trx, card.application_id);
  const total = (a: string) => inAsset.get(a)!.replacement + inAsset.get(a)!.postage;
  const feeAsset =
    fees.replacement + fees.postage === 0n
      ? null
      : replacementFeeAsset(
          application.source_asset,
          product.source_assets,
          (a) => inAsset.has(a) && inAsset.get(a)!.available >= total(a),
        );
  // Security: the card stays frozen, its balance returned (recorded on the replacement). Non-security has no fees.
  if (fees.replacement + fees.postage > 0n && !feeAsset)
    return fail(ctx, trx, r, 'insufficient_balance', now, returned);
  if (feeAsset) {
    await postEntry(trx, {
      environment: r.environment,
      merchantId: r.merchant_id,
      kind: lifecycleEntryKinds.replacementFeeFreeze,
      referenceType: replacementReferenceType,
      referenceId: r.id,
      asset: feeAsset,
      lines: feeFreezeLines({ memberId: r.member_id, merchantId: r.merchant_id, fee: total(feeAsset) }),
    });
  }
  if (!r.security) {
    await voidCardInventory(trx, card.id, now);
    returned = await returnCardBalance(trx, card, reference, now);
    // The card ends with this replacement: top-ups not yet sent to the issuer fail, their freeze back.
    await failPendingTopUps(trx, card.id, 'card_replacing');
  }
  const verdict = replacementTransition(r.status, 'start');
  if (verdict.kind !== 'move') throw new Error(`cards: replacement ${r.id} cannot start from ${r.status}`);
  const updated = await updateReplacement(trx, r.id, {
    status: verdict.to,
    status_version: r.status_version + 1,
    step: 'prepared',
    fee_asset: feeAsset,
    replacement_fee: feeAsset ? inAsset.get(feeAsset)!.replacement : 0n,
    postage_fee: feeAsset ? inAsset.get(feeAsset)!.postage : 0n,
    returned_amount: returned,
    inventory_before: r.security ? null : card.inventory_status,
    updated_at: now,
  });
  await emitReplacement(trx, updated);
  return updated;
}

/**
 * Fails a replacement: reserved fees back to available, a voided inventory row restored; a frozen
 * card stays frozen (a security reason was given). `returned`: what the failing step itself moved
 * off the card (prepare, security reason, fees unpaid), recorded on the replacement.
 */
async function fail(
  ctx: ServiceContext,
  trx: Trx,
  r: CardReplacementRow,
  reason: string,
  now: Date,
  returned?: bigint,
): Promise<CardReplacementRow> {
  const verdict = replacementTransition(r.status, 'fail');
  if (verdict.kind === 'replay') return r;
  if (verdict.kind === 'refuse') throw new Error(`cards: replacement ${r.id} cannot fail from ${r.status}`);
  const fee = minorFromDb(r.replacement_fee) + minorFromDb(r.postage_fee);
  if (r.fee_asset && fee > 0n) {
    await postEntry(trx, {
      environment: r.environment,
      merchantId: r.merchant_id,
      kind: lifecycleEntryKinds.replacementFeeRelease,
      referenceType: replacementReferenceType,
      referenceId: r.id,
      asset: r.fee_asset,
      lines: feeRefundLines({ memberId: r.member_id, merchantId: r.merchant_id, fee }),
    });
  }
  if (!r.security && r.inventory_before) {
    await restoreCardInventory(trx, r.card_id, r.inventory_before, now);
  }
  const updated = await updateReplacement(trx, r.id, {
    status: verdict.to,
    status_version: r.status_version + 1,
    failure_reason: reason,
    completed_at: now,
    updated_at: now,
    ...(returned === undefined ? {} : { returned_amount: returned }),
  });
  await emitReplacement(trx, updated);
  return updated;
}

/** No usable answer from the issuer: the same call again after a backoff on the merchant's clock; the operator hears of
 * a stall once. */
async function wait(ctx: ServiceContext, r: CardReplacementRow, outcome: 'timeout' | 'unknown'): Promise<undefined> {
  await ctx.db.transaction().execute(async (trx) => {
    const locked = await lockReplacement(trx, r.id);
    if (locked.status !== 'processing' || locked.step !== r.step) return;
    const now = await ctx.clock.now(trx, callOf(r));
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
    ctx.upstreams.card.issueReplacement(callOf(r), {
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
    const now = await ctx.clock.now(trx, callOf(r));
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
    ctx.upstreams.card.cancelCard(callOf(r), {
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

/** The last step, one transaction: the new card opened, the old one `replaced`, the fees charged, the replacement
 * `completed`, with their events. */
async function complete(ctx: ServiceContext, trx: Trx, id: string): Promise<CardReplacementRow> {
  const cardId = await cardIdOfReplacement(trx, id);
  const old = await lockCardById(trx, cardId);
  const r = await lockReplacement(trx, id);
  if (r.status !== 'processing' || r.step !== 'issued') return r;
  const verdict = replacementTransition(r.status, 'complete');
  if (verdict.kind !== 'move') throw new Error(`cards: replacement ${r.id} cannot complete from ${r.status}`);
  const now = await ctx.clock.now(trx, callOf(r));
  const opened = await insertCard(trx, {
    id: newId('crd'),
    merchant_id: old.merchant_id,
    environment: old.environment,
    member_id: old.member_id,
    application_id: old.application_id,
    product_seq: old.product_seq,
    form_factor: old.form_factor,
    currency: old.currency,
    status: openingStatus(old.form_factor),
    status_version: 1,
    upstream_ref: r.new_card_ref!,
    last4: r.new_card_last4!,
    exp_month: r.new_card_exp_month!,
    exp_year: r.new_card_exp_year!,
    billing_address: old.billing_address ? JSON.stringify(old.billing_address) : null,
    inventory_status: openingInventory(old.form_factor),
    locked_until: null,
    activated_at: old.form_factor === 'virtual' ? now : null,
    created_at: now,
    updated_at: now,
    replaces: old.id,
  });
  const replaced = await updateCard(trx, old.id, {
    status: 'replaced',
    status_version: old.status_version + 1,
    replaced_by: opened.id,
    updated_at: now,
  });
  const fee = minorFromDb(r.replacement_fee) + minorFromDb(r.postage_fee);
  if (r.fee_asset && fee > 0n) {
    await postEntry(trx, {
      environment: r.environment,
      merchantId: r.merchant_id,
      kind: lifecycleEntryKinds.replacementFeeCharge,
      referenceType: replacementReferenceType,
      referenceId: r.id,
      asset: r.fee_asset,
      lines: feeChargeLines({ memberId: r.member_id, merchantId: r.merchant_id, fee }),
    });
  }
  const updated = await updateReplacement(trx, r.id, {
    status: verdict.to,
    status_version: r.status_version + 1,
    new_card_id: opened.id,
    upstream_outcome: 'none',
    completed_at: now,
    updated_at: now,
  });
  await emitCardStatus(trx, replaced);
  await emitCardStatus(trx, opened);
  await emitReplacement(trx, updated);
  return updated;
}
