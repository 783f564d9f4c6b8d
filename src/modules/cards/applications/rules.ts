import { memberFeeToMerchant, platformAccount, type EntryLine } from '../../../money/index.js';

/** Pure rules of card applications (docs/cards.md): posting rules of the opening fee, the fee in the source asset. */

export const cardReferenceType = 'card_application';

export const cardEntryKinds = {
  feeFreeze: 'card.fee_freeze',
  feeCharge: 'card.fee_charge',
  feeRefund: 'card.fee_refund',
} as const;

export interface FeeMoney {
  memberId: string;
  merchantId: string;
  fee: bigint;
}

/** Application created: the opening fee is frozen (available → frozen). */
export function feeFreezeLines(p: FeeMoney): EntryLine[] {
  return [
    { account: { owner: 'member', memberId: p.memberId, bucket: 'available' }, side: 'debit', amount: p.fee },
    { account: { owner: 'member', memberId: p.memberId, bucket: 'frozen' }, side: 'credit', amount: p.fee },
  ];
}

/**
 * Card opened: the frozen fee is charged. It leaves the member through settlement clearing and is
 * the merchant's income (`memberFeeToMerchant`), like a remittance fee; custody is not asked for
 * it, since the source asset may have been bought through the exchange desk.
 */
export function feeChargeLines(p: FeeMoney): EntryLine[] {
  return [
    { account: { owner: 'member', memberId: p.memberId, bucket: 'frozen' }, side: 'debit', amount: p.fee },
    { account: platformAccount('settlement_clearing', p.merchantId), side: 'credit', amount: p.fee },
    ...memberFeeToMerchant(p.merchantId, p.fee),
  ];
}

/** Rejected or failed: the frozen fee goes back (frozen → available). */
export function feeRefundLines(p: FeeMoney): EntryLine[] {
  return [
    { account: { owner: 'member', memberId: p.memberId, bucket: 'frozen' }, side: 'debit', amount: p.fee },
    { account: { owner: 'member', memberId: p.memberId, bucket: 'available' }, side: 'credit', amount: p.fee },
  ];
}

/**
 * The opening fee (card-currency minor units) in a source asset's minor units: the products' source
 * assets are USD stablecoins, taken 1:1; the conversion rounds up when the asset has fewer places.
 */
export function feeInSource(feeMinor: bigint, cardScale: number, sourceScale: number): bigint {
  if (sourceScale >= cardScale) return feeMinor * 10n ** BigInt(sourceScale - cardScale);
  const d = 10n ** BigInt(cardScale - sourceScale);
  return (feeMinor + d - 1n) / d;
}
