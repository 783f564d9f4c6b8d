/**
 * Earn's pure rules (docs/earn.md): daily interest (rounded down: in the service's favour), the
 * term, and the entries' reference type. The entry kinds and posting rules (interest paid from the
 * platform's `earn_interest` account kept for the order's merchant) are src/money/posting-rules/earn.ts.
 */
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
