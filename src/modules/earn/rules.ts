/**
 * Earn's pure rules (docs/earn.md): daily interest (rounded down: in the service's favour), the
 * term, and the posting rules. Interest is funded from the platform's `earn_interest` account
 * (kept for the order's merchant), so every entry that pays interest names where it came from.
 */
import { platformAccount, type EntryLine } from '../../money/index.js';

export const dayMs = 86_400_000;
export const daysPerYear = 365n;

/** One day's interest on `principal` (minor units) at `aprBps`: principal × apr / 365, rounded down. */
export function dailyInterest(principal: bigint, aprBps: number): bigint {
  if (principal < 0n) throw new Error('earn: negative principal');
  return (principal * BigInt(aprBps)) / (10_000n * daysPerYear);
}

/** The annual rate as a decimal fraction string (`365` bps → `0.0365`). */
export function aprText(aprBps: number): string {
  const digits = aprBps.toString().padStart(5, '0');
  return `${digits.slice(0, -4)}.${digits.slice(-4)}`;
}

export const earnReferenceType = 'earn_order';
export const earnEntryKinds = {
  subscribe: 'earn.subscribe',
  redeem: 'earn.redeem',
  mature: 'earn.mature',
  /** One per day of a flexible order: `earn.payout.d<day>` (unique by order and day). */
  payout: (day: number) => `earn.payout.d${day}`,
} as const;

const member = (memberId: string, bucket: 'available' | 'earn') => ({ owner: 'member' as const, memberId, bucket });
const interestFund = (merchantId: string) => platformAccount('earn_interest', merchantId);

/** Whose order it is: the member paid, and the merchant whose platform interest account pays. */
export interface EarnHolder {
  memberId: string;
  merchantId: string;
}

/** Subscription: available → earn. */
export function subscribeLines(memberId: string, amount: bigint): EntryLine[] {
  return [
    { account: member(memberId, 'available'), side: 'debit', amount },
    { account: member(memberId, 'earn'), side: 'credit', amount },
  ];
}

/** Flexible redemption: earn → available (the principal). */
export function redeemLines(memberId: string, amount: bigint): EntryLine[] {
  return [
    { account: member(memberId, 'earn'), side: 'debit', amount },
    { account: member(memberId, 'available'), side: 'credit', amount },
  ];
}

/** A flexible day's payout: the platform's interest account → the member's available. */
export function payoutLines(holder: EarnHolder, interest: bigint): EntryLine[] {
  return [
    { account: interestFund(holder.merchantId), side: 'debit', amount: interest },
    { account: member(holder.memberId, 'available'), side: 'credit', amount: interest },
  ];
}

/** Fixed-term maturity: principal from earn and the interest from the platform's account, both to available. */
export function maturityLines(holder: EarnHolder, principal: bigint, interest: bigint): EntryLine[] {
  const lines: EntryLine[] = [{ account: member(holder.memberId, 'earn'), side: 'debit', amount: principal }];
  if (interest > 0n) lines.push({ account: interestFund(holder.merchantId), side: 'debit', amount: interest });
  lines.push({ account: member(holder.memberId, 'available'), side: 'credit', amount: principal + interest });
  return lines;
}
