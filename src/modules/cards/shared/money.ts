/** What every money movement of a card shares (top-ups, transactions): the entry kinds and the accounts a card's money
 * moves between. */
import { platformAccount } from '../../../money/index.js';

export const cardMoneyEntryKinds = {
  topUpFreeze: 'card.topup_freeze',
  /** The source-asset side of a credited top-up. */
  topUpSettle: 'card.topup_settle',
  /** The card-currency side of a credited top-up. */
  topUpCredit: 'card.topup_credit',
  topUpFail: 'card.topup_fail',
  authHold: 'card.auth_hold',
  clearing: 'card.clearing',
  reversal: 'card.reversal',
  /** The hold of an authorisation that expired, released (keyed by the authorisation: once). */
  authExpiry: 'card.auth_expiry',
  refund: 'card.refund',
} as const;

export const memberBucket = (memberId: string, bucket: 'available' | 'frozen') => ({
  owner: 'member' as const,
  memberId,
  bucket,
});
export const cardBucket = (memberId: string, cardId: string, bucket: 'card' | 'card_held') => ({
  owner: 'member' as const,
  memberId,
  bucket,
  cardId,
});
/** The platform's settlement clearing kept for the card's merchant. */
export const settlementClearing = (merchantId: string) => platformAccount('settlement_clearing', merchantId);

/**
 * Where money arriving for a card goes: `card` (onto `card:<id>`) while the card can still be
 * used, `available` (the member's available balance, card currency) once it stopped
 * (`cardStopped` in cards/state.ts): its balance was or will be returned, so nothing may land on it.
 */
export type CardMoneyDestination = 'card' | 'available';
export const cardDestination = (memberId: string, cardId: string, to: CardMoneyDestination) =>
  to === 'card' ? cardBucket(memberId, cardId, 'card') : memberBucket(memberId, 'available');
