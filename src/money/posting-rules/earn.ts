/**
 * The entry kinds and posting rules of the earn flows (docs/earn.md; the interest maths is
 * src/modules/earn/rules.ts). Interest is funded from the platform's `earn_interest` account (kept
 * for the order's merchant), so every entry that pays interest names where it came from.
 */
import { memberAccount, platformAccount } from '../accounts.js';
import type { EntryLine } from '../posting.js';
import { debitCredit } from '../rules.js';

// Entry kinds; with (reference type, reference id) each posts once.

export const earnEntryKinds = {
  subscribe: 'earn.subscribe',
  redeem: 'earn.redeem',
  mature: 'earn.mature',
  /** One per day of a flexible order: `earn.payout.d<day>` (unique by order and day). */
  payout: (day: number) => `earn.payout.d${day}`,
} as const;

const interestFund = (merchantId: string) => platformAccount('earn_interest', merchantId);

/** Whose order it is: the member paid, and the merchant whose platform interest account pays. */
export interface EarnHolder {
  memberId: string;
  merchantId: string;
}

/** Subscription: available → earn. */
export function earnSubscribeLines(memberId: string, amount: bigint): EntryLine[] {
  return [
    { account: memberAccount(memberId, 'available'), side: 'debit', amount },
    { account: memberAccount(memberId, 'earn'), side: 'credit', amount },
  ];
}

/** Flexible redemption: earn → available (the principal). */
export function earnRedeemLines(memberId: string, amount: bigint): EntryLine[] {
  return [
    { account: memberAccount(memberId, 'earn'), side: 'debit', amount },
    { account: memberAccount(memberId, 'available'), side: 'credit', amount },
  ];
}

/** A flexible day's payout: the platform's interest account → the member's available. */
export function earnPayoutLines(holder: EarnHolder, interest: bigint): EntryLine[] {
  return debitCredit(interestFund(holder.merchantId), memberAccount(holder.memberId, 'available'), interest);
}

/** Fixed-term maturity: principal from earn and the interest from the platform's account, both to available. */
export function earnMaturityLines(holder: EarnHolder, principal: bigint, interest: bigint): EntryLine[] {
  const lines: EntryLine[] = [{ account: memberAccount(holder.memberId, 'earn'), side: 'debit', amount: principal }];
  if (interest > 0n) lines.push({ account: interestFund(holder.merchantId), side: 'debit', amount: interest });
  lines.push({ account: memberAccount(holder.memberId, 'available'), side: 'credit', amount: principal + interest });
  return lines;
}
