/**
 * The posting rules of remittance orders (docs/remittance.md; the price, the limits and the entry
 * kinds are src/modules/remittance/orders/rules.ts). One asset per entry: the source asset; with
 * the order id each kind posts once.
 */
import { memberAccount, platformAccount } from '../accounts.js';
import type { EntryLine } from '../posting.js';
import { memberFeeToMerchant } from '../rules.js';

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
  return [
    { account: memberAccount(p.memberId, 'available'), side: 'debit', amount: total },
    { account: memberAccount(p.memberId, 'frozen'), side: 'credit', amount: total },
  ];
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
    { account: memberAccount(p.memberId, 'frozen'), side: 'debit', amount: p.amount + p.fee },
    { account: platformAccount('settlement_clearing', p.merchantId), side: 'credit', amount: p.amount + p.fee },
    ...memberFeeToMerchant(p.merchantId, p.fee),
  ];
}

/** Failed (refused, never received): the freeze is released in full, fee included (frozen → available). */
export function remitFailLines(p: RemitMoney): EntryLine[] {
  const total = p.amount + p.fee;
  return [
    { account: memberAccount(p.memberId, 'frozen'), side: 'debit', amount: total },
    { account: memberAccount(p.memberId, 'available'), side: 'credit', amount: total },
  ];
}

/** Returned by the beneficiary bank after completion: the amount comes back to available; the fee is kept. */
export function remitReturnLines(p: RemitMoney): EntryLine[] {
  return [
    { account: platformAccount('settlement_clearing', p.merchantId), side: 'debit', amount: p.amount },
    { account: memberAccount(p.memberId, 'available'), side: 'credit', amount: p.amount },
  ];
}
