import type { OwnerType, Side } from './tables.js';

export type MemberBucket = 'available' | 'frozen' | 'withdrawing' | 'earn' | 'card';
/**
 * A card's own money, one pair of accounts per card (in the card currency): `card` is what the card
 * can spend, `card_held` what authorisations hold until they clear or are reversed. Both are the
 * member's money (the `card` column of `GET /v1/balances` sums them over the member's cards) and
 * count in the custody check like every member bucket; stored as `card:<card id>` and
 * `card_held:<card id>`.
 */
export type CardBucket = 'card' | 'card_held';
export const cardBuckets: readonly CardBucket[] = ['card', 'card_held'];
export type MerchantBucket = 'custody' | 'prepaid' | 'fee_income' | 'fee_retained';
export type PlatformBucket = 'fee_income' | 'prepaid_funding' | 'settlement_clearing' | 'earn_interest';

/**
 * A platform account kept for one merchant: the platform's money (owner type `platform`),
 * partitioned by the merchant whose entries move it and stored with `owner_id` = that merchant's
 * id, so no row is shared by every merchant (docs/ledger.md "Platform accounts per merchant").
 * The merchant is part of the type: no posting can leave it out.
 */
export interface PlatformAccountRef {
  owner: 'platform';
  bucket: PlatformBucket;
  merchantId: string;
}

/** Names one ledger account of an environment and asset (both given by the entry). */
export type AccountRef =
  | { owner: 'member'; memberId: string; bucket: Exclude<MemberBucket, 'card'> }
  | { owner: 'member'; memberId: string; bucket: CardBucket; cardId: string }
  | { owner: 'merchant'; merchantId: string; bucket: MerchantBucket }
  | PlatformAccountRef;

/**
 * A platform account stored before migration 026: one row per environment, asset and bucket with
 * `owner_id` '', shared by every merchant. Its balance and postings stay as they were (history is
 * not rewritten) and are still read; nothing posts to it any more.
 */
export interface SharedPlatformAccountRef {
  owner: 'platform';
  bucket: PlatformBucket;
  merchantId: null;
}

/** What a stored row names: any account a posting may touch, or a shared platform row of before 026. */
export type StoredAccountRef = AccountRef | SharedPlatformAccountRef;

/** The member's account of `bucket` (a card's own accounts name their card too). */
export const memberAccount = (memberId: string, bucket: Exclude<MemberBucket, 'card'>): AccountRef => ({
  owner: 'member',
  memberId,
  bucket,
});

/** The merchant's account of `bucket`. */
export const merchantAccount = (merchantId: string, bucket: MerchantBucket): AccountRef => ({
  owner: 'merchant',
  merchantId,
  bucket,
});

/** The platform's account of `bucket` kept for `merchantId`. */
export const platformAccount = (bucket: PlatformBucket, merchantId: string): PlatformAccountRef => ({
  owner: 'platform',
  bucket,
  merchantId,
});

export const memberBuckets: readonly MemberBucket[] = ['available', 'frozen', 'withdrawing', 'earn', 'card'];
export const merchantBuckets: readonly MerchantBucket[] = ['custody', 'prepaid', 'fee_income', 'fee_retained'];
export const platformBuckets: readonly PlatformBucket[] = [
  'fee_income',
  'prepaid_funding',
  'settlement_clearing',
  'earn_interest',
];

/**
 * Normal sides. Credit-normal: what the service owes or earns (member buckets, merchant prepaid,
 * merchant and platform fee income). Debit-normal: what it holds or is owed (merchant custody,
 * the fees a merchant retained outside custody, platform prepaid funding and settlement clearing).
 */
const debitNormal: ReadonlySet<string> = new Set([
  'merchant:custody',
  'merchant:fee_retained',
  'platform:prepaid_funding',
  'platform:settlement_clearing',
  'platform:earn_interest',
]);

export interface AccountSpec {
  ownerType: OwnerType;
  ownerId: string;
  bucket: string;
  normalSide: Side;
  /** Member and merchant accounts never go below zero; platform accounts may. */
  nonNegative: boolean;
}

/** The row identity and rules of a reference; throws (programmer error) for an ill-formed one. */
export function accountSpec(ref: AccountRef): AccountSpec {
  const ownerId = ownerIdOf(ref);
  if (ref.owner === 'member' && (cardBuckets as readonly string[]).includes(ref.bucket)) {
    const cardId = (ref as { cardId?: unknown }).cardId;
    if (typeof cardId !== 'string' || !cardIdPattern.test(cardId))
      throw new Error(`ledger: card account without a card id`);
    return { ownerType: 'member', ownerId, bucket: `${ref.bucket}:${cardId}`, normalSide: 'credit', nonNegative: true };
  }
  const buckets: readonly string[] =
    ref.owner === 'member'
      ? memberBuckets
      : ref.owner === 'merchant'
        ? merchantBuckets
        : ref.owner === 'platform'
          ? platformBuckets
          : [];
  if (!buckets.includes(ref.bucket))
    throw new Error(`ledger: bucket ${String(ref.bucket)} is not a ${String(ref.owner)} bucket`);
  return {
    ownerType: ref.owner,
    ownerId,
    bucket: ref.bucket,
    normalSide: debitNormal.has(`${ref.owner}:${ref.bucket}`) ? 'debit' : 'credit',
    nonNegative: ref.owner !== 'platform',
  };
}

function ownerIdOf(ref: AccountRef): string {
  switch (ref.owner) {
    case 'member':
      if (typeof ref.memberId !== 'string' || ref.memberId === '')
        throw new Error('ledger: member account without memberId');
      return ref.memberId;
    case 'merchant':
      if (typeof ref.merchantId !== 'string' || ref.merchantId === '')
        throw new Error('ledger: merchant account without merchantId');
      return ref.merchantId;
    case 'platform':
      // Kept per merchant: the shared row ('') of before migration 026 is never posted to.
      if (typeof ref.merchantId !== 'string' || ref.merchantId === '')
        throw new Error('ledger: platform account without merchantId');
      return ref.merchantId;
    default:
      throw new Error(`ledger: unknown owner ${String((ref as { owner: unknown }).owner)}`);
  }
}

/** A stable text key of a reference, used to merge lines and order account creation. */
export function accountKey(ref: AccountRef): string {
  const spec = accountSpec(ref);
  return `${spec.ownerType}\u0000${spec.ownerId}\u0000${spec.bucket}`;
}

const cardIdPattern = /^crd_[0-9a-f-]{36}$/;

/** The bucket a stored bucket name belongs to: `card:crd_…` → `card`. */
export function baseBucket(stored: string): string {
  const colon = stored.indexOf(':');
  return colon < 0 ? stored : stored.slice(0, colon);
}

/**
 * The reference of a stored account row. A platform row names the merchant it is kept for, or
 * `merchantId: null` for a shared row of before migration 026 (`owner_id` '').
 */
export function refFromRow(row: { owner_type: string; owner_id: string; bucket: string }): StoredAccountRef {
  if (row.owner_type === 'member') {
    const base = baseBucket(row.bucket);
    if ((cardBuckets as readonly string[]).includes(base)) {
      return {
        owner: 'member',
        memberId: row.owner_id,
        bucket: base as CardBucket,
        cardId: row.bucket.slice(base.length + 1),
      };
    }
  }
  if (row.owner_type === 'member')
    return { owner: 'member', memberId: row.owner_id, bucket: row.bucket as Exclude<MemberBucket, 'card'> };
  if (row.owner_type === 'merchant')
    return { owner: 'merchant', merchantId: row.owner_id, bucket: row.bucket as MerchantBucket };
  return {
    owner: 'platform',
    bucket: row.bucket as PlatformBucket,
    merchantId: row.owner_id === '' ? null : row.owner_id,
  };
}

/**
 * "member mem_… available", "platform settlement_clearing for merchant mch_…" for messages and
 * reports; a shared platform row of before migration 026 is "platform settlement_clearing".
 */
export function describeAccount(ref: StoredAccountRef): string {
  if (ref.owner === 'platform' && ref.merchantId === null) return `platform ${String(ref.bucket)}`;
  const spec = accountSpec(ref as AccountRef);
  return describeStored({ owner_type: spec.ownerType, owner_id: spec.ownerId, bucket: spec.bucket });
}

/** The same words from a stored row's plain columns (no validation: a tampered row is still named). */
export function describeStored(row: { owner_type: string; owner_id: string; bucket: string }): string {
  if (row.owner_type !== 'platform') return `${row.owner_type} ${row.owner_id} ${row.bucket}`;
  return row.owner_id === '' ? `platform ${row.bucket}` : `platform ${row.bucket} for merchant ${row.owner_id}`;
}
