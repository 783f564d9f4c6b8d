import { memberAccount, merchantAccount, platformAccount, type AccountRef } from './accounts.js';
import type { EntryLine } from './posting.js';

/**
 * The posting rules of the money flows, as pure functions from amounts (minor units) to the
 * lines of one entry. Zero fee lines are left out (a posting is never zero). docs/ledger.md
 * shows them as a table. A platform line names the merchant the entry belongs to: platform
 * accounts are kept per merchant.
 */

/** Entry kinds; with (reference type, reference id) each posts once. */
export const entryKinds = {
  deposit: 'deposit',
  withdrawalLock: 'withdrawal.lock',
  withdrawalConfirm: 'withdrawal.confirm',
  withdrawalFail: 'withdrawal.fail',
  prepaidCredit: 'prepaid.credit',
  prepaidCharge: 'prepaid.charge',
} as const;

/** Two lines of one amount: `debit` debited, `credit` credited (each account's side as the entry names it). */
export function debitCredit(debit: AccountRef, credit: AccountRef, amount: bigint): EntryLine[] {
  return [
    { account: debit, side: 'debit', amount },
    { account: credit, side: 'credit', amount },
  ];
}

/**
 * A fee a member paid, recognised as the merchant's: fee income against the fee retained (coins
 * the merchant keeps outside custody). The pair stands beside lines that take the fee out of the
 * member's balance to settlement clearing (the platform's side, custody untouched), so it posts
 * whatever custody the merchant holds of the asset: exchanges, remittances and card fees, whose
 * asset a member may have bought through the exchange desk. A zero fee adds no lines.
 */
export function memberFeeToMerchant(merchantId: string, fee: bigint): EntryLine[] {
  if (fee <= 0n) return [];
  return debitCredit(merchantAccount(merchantId, 'fee_retained'), merchantAccount(merchantId, 'fee_income'), fee);
}

/** The merchant reports a deposit: custody grows, the member's available balance grows. */
export function depositLines(p: { memberId: string; merchantId: string; amount: bigint }): EntryLine[] {
  return debitCredit(merchantAccount(p.merchantId, 'custody'), memberAccount(p.memberId, 'available'), p.amount);
}

/** A withdrawal is created: amount plus fee move from available to withdrawing. */
export function withdrawalLockLines(p: { memberId: string; amount: bigint; fee: bigint }): EntryLine[] {
  const total = p.amount + p.fee;
  return debitCredit(memberAccount(p.memberId, 'available'), memberAccount(p.memberId, 'withdrawing'), total);
}

/**
 * The merchant paid out on chain: withdrawing is cleared and custody shrinks by amount plus fee,
 * so custody keeps holding members' money only (the reference: "reduced by the same amount").
 * The fee is no longer a member's money: it is the merchant's, who pays the network fee. It is
 * recognised per merchant and asset: fee income, against the fee the merchant retained outside
 * custody (no platform-wide row is touched, so confirmations of different merchants never wait
 * on each other).
 */
export function withdrawalConfirmLines(p: {
  memberId: string;
  merchantId: string;
  amount: bigint;
  fee: bigint;
}): EntryLine[] {
  const total = p.amount + p.fee;
  return [
    ...debitCredit(memberAccount(p.memberId, 'withdrawing'), merchantAccount(p.merchantId, 'custody'), total),
    ...memberFeeToMerchant(p.merchantId, p.fee),
  ];
}

/** The merchant could not pay out: amount plus fee return from withdrawing to available. */
export function withdrawalFailLines(p: { memberId: string; amount: bigint; fee: bigint }): EntryLine[] {
  const total = p.amount + p.fee;
  return debitCredit(memberAccount(p.memberId, 'withdrawing'), memberAccount(p.memberId, 'available'), total);
}

/** The operator credits a merchant's prepaid account (money received outside the ledger), against the platform's
 * prepaid funding kept for the merchant. */
export function prepaidCreditLines(p: { merchantId: string; amount: bigint }): EntryLine[] {
  return debitCredit(
    platformAccount('prepaid_funding', p.merchantId),
    merchantAccount(p.merchantId, 'prepaid'),
    p.amount,
  );
}

/** A service charge taken from the merchant's prepaid account as platform income (the platform's fee income kept for
 * the merchant). */
export function prepaidChargeLines(p: { merchantId: string; amount: bigint }): EntryLine[] {
  return debitCredit(merchantAccount(p.merchantId, 'prepaid'), platformAccount('fee_income', p.merchantId), p.amount);
}
