/**
 * How a replacement ends (executor.ts), each in the caller's transaction with its event: completed
 * (the new card opened, the old one `replaced`, the reserved fees charged) or failed (the reserved
 * fees released, a voided inventory row restored).
 */
import { rowScope } from '../../../db/owned-by.js';
import type { ServiceContext } from '../../../service-context.js';
import {
  minorFromDb,
  postRowEntry,
  feeChargeLines,
  feeRefundLines,
  lifecycleEntryKinds,
  type EntryLine,
} from '../../../money/index.js';
import { emitCardStatus, emitReplacement } from '../shared/events.js';
import { type Trx } from '../shared/queries.js';
import { replacementReferenceType } from '../shared/rules.js';
import { openCard } from '../cards/opening.js';
import { lockCardById, restoreCardInventory, updateCard } from '../cards/queries.js';
import { replacementTransition } from './state.js';
import type { CardReplacementRow } from './tables.js';
import { cardIdOfReplacement, lockReplacement, updateReplacement } from './queries.js';
import { statusMove } from '../../../db/status-move.js';

/** The fees reserved by `prepare` (frozen in `fee_asset`) charged or released: nothing when none were reserved. */
async function postReservedFee(
  trx: Trx,
  r: CardReplacementRow,
  kind: string,
  lines: (p: { memberId: string; merchantId: string; fee: bigint }) => EntryLine[],
): Promise<void> {
  const fee = minorFromDb(r.replacement_fee) + minorFromDb(r.postage_fee);
  if (!r.fee_asset || fee <= 0n) return;
  await postRowEntry(trx, r, {
    kind,
    referenceType: replacementReferenceType,
    asset: r.fee_asset,
    lines: lines({ memberId: r.member_id, merchantId: r.merchant_id, fee }),
  });
}

/**
 * Fails a replacement: reserved fees back to available, a voided inventory row restored; a frozen
 * card stays frozen (a security reason was given). `returned`: what the failing step itself moved
 * off the card (prepare, security reason, fees unpaid), recorded on the replacement.
 */
export async function fail(
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
  await postReservedFee(trx, r, lifecycleEntryKinds.replacementFeeRelease, feeRefundLines);
  if (!r.security && r.inventory_before) {
    await restoreCardInventory(trx, r.card_id, r.inventory_before, now);
  }
  const updated = await updateReplacement(trx, r.id, {
    ...statusMove(r, verdict.to, now),
    failure_reason: reason,
    completed_at: now,
    ...(returned === undefined ? {} : { returned_amount: returned }),
  });
  await emitReplacement(trx, updated);
  return updated;
}

/** The last step, one transaction: the new card opened, the old one `replaced`, the fees charged, the replacement
 * `completed`, with their events. */
export async function complete(ctx: ServiceContext, trx: Trx, id: string): Promise<CardReplacementRow> {
  const cardId = await cardIdOfReplacement(trx, id);
  const old = await lockCardById(trx, cardId);
  const r = await lockReplacement(trx, id);
  if (r.status !== 'processing' || r.step !== 'issued') return r;
  const verdict = replacementTransition(r.status, 'complete');
  if (verdict.kind !== 'move') throw new Error(`cards: replacement ${r.id} cannot complete from ${r.status}`);
  const now = await ctx.clock.now(trx, rowScope(r));
  const opened = await openCard(
    trx,
    {
      merchantId: old.merchant_id,
      environment: old.environment,
      memberId: old.member_id,
      applicationId: old.application_id,
      productSeq: old.product_seq,
      formFactor: old.form_factor,
      currency: old.currency,
      issued: {
        cardRef: r.new_card_ref!,
        last4: r.new_card_last4!,
        expMonth: r.new_card_exp_month!,
        expYear: r.new_card_exp_year!,
      },
      billingAddress: old.billing_address,
      replaces: old.id,
    },
    now,
  );
  const replaced = await updateCard(trx, old.id, { ...statusMove(old, 'replaced', now), replaced_by: opened.id });
  await postReservedFee(trx, r, lifecycleEntryKinds.replacementFeeCharge, feeChargeLines);
  const updated = await updateReplacement(trx, r.id, {
    ...statusMove(r, verdict.to, now),
    new_card_id: opened.id,
    upstream_outcome: 'none',
    completed_at: now,
  });
  await emitCardStatus(trx, replaced);
  await emitCardStatus(trx, opened);
  await emitReplacement(trx, updated);
  return updated;
}
