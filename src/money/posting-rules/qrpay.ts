/**
 * The entry kinds and posting rules of QR payments (one asset per entry, amounts in minor units;
 * the reference type is src/modules/qrpay/rules.ts). The money leaves the platform to the acquirer, so a completed
 * payment is credited to the platform's settlement clearing account (what the platform owes the
 * acquirer / has paid out through it), not to the merchant's custody.
 */
import { memberAccount, platformAccount } from '../accounts.js';
import type { EntryLine } from '../posting.js';
import { debitCredit } from '../rules.js';

// Entry kinds; with (reference type, reference id) each posts once.

export const qrpayEntryKinds = {
  freeze: 'qrpay.freeze',
  complete: 'qrpay.complete',
  fail: 'qrpay.fail',
  refund: 'qrpay.refund',
} as const;

/** Order created: the debit is frozen (available → frozen). */
export function qrpayFreezeLines(p: { memberId: string; amount: bigint }): EntryLine[] {
  return debitCredit(memberAccount(p.memberId, 'available'), memberAccount(p.memberId, 'frozen'), p.amount);
}

/** The provider confirmed the payment: frozen is cleared towards settlement clearing (kept for the order's merchant).
 * */
export function qrpayCompleteLines(p: { memberId: string; merchantId: string; amount: bigint }): EntryLine[] {
  return debitCredit(
    memberAccount(p.memberId, 'frozen'),
    platformAccount('settlement_clearing', p.merchantId),
    p.amount,
  );
}

/** The payment failed: the freeze is released in full (frozen → available). */
export function qrpayFailLines(p: { memberId: string; amount: bigint }): EntryLine[] {
  return debitCredit(memberAccount(p.memberId, 'frozen'), memberAccount(p.memberId, 'available'), p.amount);
}

/** The acquirer refunded a completed payment: settlement clearing → member available. */
export function qrpayRefundLines(p: { memberId: string; merchantId: string; amount: bigint }): EntryLine[] {
  return debitCredit(
    platformAccount('settlement_clearing', p.merchantId),
    memberAccount(p.memberId, 'available'),
    p.amount,
  );
}
