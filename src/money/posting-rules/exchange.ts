/**
 * The posting rules of the exchange flows (docs/exchange.md; the price, the limits and the entry
 * kinds are src/modules/exchange/rules.ts). One execution posts two entries in one transaction,
 * one per asset (the ledger's entries are single-asset), both under the order's id: the sell
 * (from-asset) and the buy (to-asset). Each balances; together they are the execution.
 */
import { memberAccount, merchantAccount, platformAccount } from '../accounts.js';
import type { EntryLine } from '../posting.js';
import { debitCredit, memberFeeToMerchant } from '../rules.js';

// Entry kinds; with (reference type, reference id) each posts once.

export const exchangeEntryKinds = { sell: 'exchange.sell', buy: 'exchange.buy' } as const;
export const conversionEntryKinds = { sell: 'conversion.sell', buy: 'conversion.buy' } as const;

export interface ExecutionMoney {
  memberId: string;
  merchantId: string;
  fromAmount: bigint;
  toAmount: bigint;
  fee: bigint;
  /** Which side the fee is taken from (the direction's `fee_side`). */
  feeSide: 'from' | 'to';
}

/**
 * The from-asset: the member's available drops by from_amount, which goes to the platform's
 * exchange desk through settlement clearing (custody untouched, as QR payments); a from-side fee
 * comes back from the desk to the merchant (`memberFeeToMerchant`: fee income against fee
 * retained, the coins the desk hands the merchant beside custody). Custody is never touched, so an
 * asset bought through the desk can be sold and charged for.
 */
export function exchangeSellLines(p: ExecutionMoney): EntryLine[] {
  return [
    ...debitCredit(
      memberAccount(p.memberId, 'available'),
      platformAccount('settlement_clearing', p.merchantId),
      p.fromAmount,
    ),
    ...memberFeeToMerchant(p.merchantId, p.feeSide === 'from' ? p.fee : 0n),
  ];
}

/**
 * The to-asset: the desk delivers the net amount through settlement clearing to the member's
 * available; a to-side fee is the merchant's (`memberFeeToMerchant`).
 */
export function exchangeBuyLines(p: ExecutionMoney): EntryLine[] {
  return [
    ...debitCredit(
      platformAccount('settlement_clearing', p.merchantId),
      memberAccount(p.memberId, 'available'),
      p.toAmount,
    ),
    ...memberFeeToMerchant(p.merchantId, p.feeSide === 'to' ? p.fee : 0n),
  ];
}

/**
 * A merchant conversion moves the merchant's own prepaid balance: the from-asset's prepaid drops
 * by from_amount (back to the platform's prepaid funding), the to-asset's prepaid rises by the
 * net amount; the fee, on either side, is the platform's fee income. Custody is not touched.
 */
export function conversionSellLines(p: Omit<ExecutionMoney, 'memberId'>): EntryLine[] {
  const feeHere = p.feeSide === 'from' ? p.fee : 0n;
  const lines: EntryLine[] = [
    {
      account: merchantAccount(p.merchantId, 'prepaid'),
      side: 'debit',
      amount: p.fromAmount,
    },
    { account: platformAccount('prepaid_funding', p.merchantId), side: 'credit', amount: p.fromAmount - feeHere },
  ];
  if (feeHere > 0n)
    lines.push({ account: platformAccount('fee_income', p.merchantId), side: 'credit', amount: feeHere });
  return lines;
}

export function conversionBuyLines(p: Omit<ExecutionMoney, 'memberId'>): EntryLine[] {
  const feeHere = p.feeSide === 'to' ? p.fee : 0n;
  const lines: EntryLine[] = [
    { account: platformAccount('prepaid_funding', p.merchantId), side: 'debit', amount: p.toAmount + feeHere },
    { account: merchantAccount(p.merchantId, 'prepaid'), side: 'credit', amount: p.toAmount },
  ];
  if (feeHere > 0n)
    lines.push({ account: platformAccount('fee_income', p.merchantId), side: 'credit', amount: feeHere });
  return lines;
}
