/**
 * The entry kinds and posting rules of QR payments (one asset per entry, amounts in minor units;
 * the reference type is src/modules/qrpay/rules.ts). The money leaves the platform to the acquirer, so a completed
 * payment is credited to the platform's settlement clearing account (what the platform owes the
 * acquirer / has paid out through it), not to the merchant's custody.
 */
import { memberAccount, platformAccount } from '../accounts.js';
import type { EntryLine } from '../posting.js';

// Entry kinds; with (reference type, reference id) each posts once.

export const qrpayEntryKinds = {
  freeze: 'qrpay.freeze',
  complete: 'qrpay.complete',
  fail: 'qrpay.fail',
  refund: 'qrpay.refund',
} as const;

/** Order created: the debit is frozen (available → frozen). */
export function qrpayFreezeLines(p: { memberId: string; amount: bigint }): EntryLine[] {
  return [
    { account: memberAccount(p.memberId, 'available'), side: 'debit', amount: p.amount },
    { account: memberAccount(p.memberId, 'frozen'), side: 'credit', amount: p.amount },
  ];
}

/** The provider confirmed the payment: frozen is cleared towards settlement clearing (kept for the order's merchant).
 * */
export function qrpayCompleteLines(p: { memberId: string; merchantId: string; amount: bigint }): EntryLine[] {
  return [
    { account: memberAccount(p.memberId, 'frozen'), side: 'debit', amount: p.amount },
    { account: platformAccount('settlement_clearing', p.merchantId), side: 'credit', amount: p.amount },
  ];
}

/** The payment failed: the freeze is released in full (frozen → available). */
export function qrpayFailLines(p: { memberId: string; amount: bigint }): EntryLine[] {
  return [
    { account: memberAccount(p.memberId, 'frozen'), side: 'debit', amount: p.amount },
    { account: memberAccount(p.memberId, 'available'), side: 'credit', amount: p.amount },
  ];
}

/** The acquirer refunded a completed payment: settlement clearing → member available. */
export function qrpayRefundLines(p: { memberId: string; merchantId: string; amount: bigint }): EntryLine[] {
  return [
    { account: platformAccount('settlement_clearing', p.merchantId), side: 'debit', amount: p.amount },
    { account: memberAccount(p.memberId, 'available'), side: 'credit', amount: p.amount },
  ];
}
