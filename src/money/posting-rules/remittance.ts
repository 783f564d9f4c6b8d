/**
 * The posting rules of remittance orders (docs/remittance.md; the price, the limits and the entry
 * kinds are src/modules/remittance/orders/rules.ts). One asset per entry: the source asset; with
 * the order id each kind posts once.
 */
import { memberAccount, platformAccount } from '../accounts.js';
import type { EntryLine } from '../posting.js';
import { debitCredit, memberFeeToMerchant } from '../rules.js';

// Entry kinds; with (reference type, reference id) each posts once.

export const remitEntryKinds = {
  freeze: 'remittance.freeze',
  complete: 'remittance.complete',
  fail: 'remittance.fail',
  return: 'remittance.return',
} as const;

export interface RemitMoney {
  memberId: string;
  merchantId: string;
  amount: bigint;
  fee: bigint;
}

/** Order created: amount plus fee are frozen (available → frozen). */
export function remitFreezeLines(p: RemitMoney): EntryLine[] {
  const total = p.amount + p.fee;
  return debitCredit(memberAccount(p.memberId, 'available'), memberAccount(p.memberId, 'frozen'), total);
}

/**
 * Paid out: the freeze is cleared. Amount and fee leave the member through settlement clearing
 * (custody untouched, as QR payments and exchanges); the fee comes back to the merchant as its
 * income (`memberFeeToMerchant`). Custody is not asked for the fee: a member may send an asset
 * the merchant holds no custody of (bought through the exchange desk), and the completion must
 * still post: the provider has paid out.
 */
export function remitCompleteLines(p: RemitMoney): EntryLine[] {
  return [
    ...debitCredit(
      memberAccount(p.memberId, 'frozen'),
      platformAccount('settlement_clearing', p.merchantId),
      p.amount + p.fee,
    ),
    ...memberFeeToMerchant(p.merchantId, p.fee),
  ];
}

/** Failed (refused, never received): the freeze is released in full, fee included (frozen → available). */
export function remitFailLines(p: RemitMoney): EntryLine[] {
  const total = p.amount + p.fee;
  return debitCredit(memberAccount(p.memberId, 'frozen'), memberAccount(p.memberId, 'available'), total);
}

/** Returned by the beneficiary bank after completion: the amount comes back to available; the fee is kept. */
export function remitReturnLines(p: RemitMoney): EntryLine[] {
  return debitCredit(
    platformAccount('settlement_clearing', p.merchantId),
    memberAccount(p.memberId, 'available'),
    p.amount,
  );
}
