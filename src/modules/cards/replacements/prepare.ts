/**
 * The replacement executor's first step (executor.ts; docs/cards.md, "Replacement, closing and
 * expiry"): the card stopped as the reason asks, the fees reserved in a source asset the member
 * can pay them in, the replacement `processing/prepared`.
 */
import { rowScope } from '../../../db/owned-by.js';
import type { ServiceContext } from '../../../service-context.js';
import {
  accountBalance,
  minorFromDb,
  postRowEntry,
  feeFreezeLines,
  lifecycleEntryKinds,
} from '../../../money/index.js';
import { returnCardBalance } from '../shared/balance-return.js';
import { emitReplacement } from '../shared/events.js';
import { type Trx } from '../shared/queries.js';
import { replacementReferenceType } from '../shared/rules.js';
import { productBySeq } from '../products/queries.js';
import { feeInSource } from '../applications/rules.js';
import { sourceAssetOfApplication } from '../applications/queries.js';
import { freezeCard, lockCardById, voidCardInventory } from '../cards/queries.js';
import { failPendingTopUps } from '../topups/dispatch.js';
import { replacementFeeAsset, replacementFees } from './rules.js';
import { replacementStartProblem, replacementTransition } from './state.js';
import type { CardReplacementRow } from './tables.js';
import { cardIdOfReplacement, lockReplacement, updateReplacement } from './queries.js';
import { fail } from './finish.js';
import { statusMove } from '../../../db/status-move.js';
import { assetScale } from '../../assets/index.js';

/**
 * Step 1, one transaction. Security reasons stop the card first, whatever follows: frozen, its
 * balance returned to available, its pending top-ups failed; then the fees are reserved from
 * available as it stands after that (the spec's order: "card frozen, balance refunded to available
 * balance, then ... fees charged"; the returned balance pays only if the card currency is itself a
 * source asset, no conversion). Fees the member cannot pay fail the replacement with the card left
 * frozen (a security reason was given: the card must not spend again). Non-security reasons void
 * the inventory row and return the balance (no fees).
 */
export async function prepare(ctx: ServiceContext, trx: Trx, id: string): Promise<CardReplacementRow> {
  const cardId = await cardIdOfReplacement(trx, id);
  const card = await lockCardById(trx, cardId);
  const r = await lockReplacement(trx, id);
  if (r.status !== 'requested') return r;
  const now = await ctx.clock.now(trx, rowScope(r));
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
  const cardScale = await assetScale(trx, card.currency);
  const inAsset = new Map<string, { replacement: bigint; postage: bigint; available: bigint }>();
  for (const asset of product.source_assets) {
    const scale = await assetScale(trx, asset);
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
    await postRowEntry(trx, r, {
      kind: lifecycleEntryKinds.replacementFeeFreeze,
      referenceType: replacementReferenceType,
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
    ...statusMove(r, verdict.to, now),
    step: 'prepared',
    fee_asset: feeAsset,
    replacement_fee: feeAsset ? inAsset.get(feeAsset)!.replacement : 0n,
    postage_fee: feeAsset ? inAsset.get(feeAsset)!.postage : 0n,
    returned_amount: returned,
    inventory_before: r.security ? null : card.inventory_status,
  });
  await emitReplacement(trx, updated);
  return updated;
}
