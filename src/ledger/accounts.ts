import type { OwnerType, Side } from './tables.js';

export type MemberBucket = 'available' | 'frozen' | 'withdrawing' | 'earn' | 'card';
export type MerchantBucket = 'custody' | 'prepaid' | 'fee_income' | 'fee_retained';
export type PlatformBucket = 'fee_income' | 'prepaid_funding' | 'settlement_clearing' | 'earn_interest';

/** Names one ledger account of an environment and asset (both given by the entry). */
export type AccountRef =
  | { owner: 'member'; memberId: string; bucket: MemberBucket }
  | { owner: 'merchant'; merchantId: string; bucket: MerchantBucket }
  | { owner: 'platform'; bucket: PlatformBucket };

export const memberBuckets: readonly MemberBucket[] = ['available', 'frozen', 'withdrawing', 'earn', 'card'];
export const merchantBuckets: readonly MerchantBucket[] = ['custody', 'prepaid', 'fee_income', 'fee_retained'];
export const platformBuckets: readonly PlatformBucket[] = ['fee_income', 'prepaid_funding', 'settlement_clearing', 'earn_interest'];

/**
 * Normal sides. Credit-normal: what the service owes or earns (member buckets, merchant prepaid,
 * merchant and platform fee income). Debit-normal: what it holds or is owed (merchant custody,
 * the fees a merchant retained outside custody, platform prepaid funding and settlement clearing).
 */
const debitNormal: ReadonlySet<string> = new Set([
  'merchant:custody', 'merchant:fee_retained', 'platform:prepaid_funding', 'platform:settlement_clearing', 'platform:earn_interest',
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
  const buckets: readonly string[] =
    ref.owner === 'member' ? memberBuckets : ref.owner === 'merchant' ? merchantBuckets : ref.owner === 'platform' ? platformBuckets : [];
  if (!buckets.includes(ref.bucket)) throw new Error(`ledger: bucket ${String(ref.bucket)} is not a ${String(ref.owner)} bucket`);
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
      if (typeof ref.memberId !== 'string' || ref.memberId === '') throw new Error('ledger: member account without memberId');
      return ref.memberId;
    case 'merchant':
      if (typeof ref.merchantId !== 'string' || ref.merchantId === '') throw new Error('ledger: merchant account without merchantId');
      return ref.merchantId;
    case 'platform':
      return '';
    default:
      throw new Error(`ledger: unknown owner ${String((ref as { owner: unknown }).owner)}`);
  }
}

/** A stable text key of a reference, used to merge lines and order account creation. */
export function accountKey(ref: AccountRef): string {
  const spec = accountSpec(ref);
  return `${spec.ownerType}\u0000${spec.ownerId}\u0000${spec.bucket}`;
}

/** The reference of a stored account row. */
export function refFromRow(row: { owner_type: string; owner_id: string; bucket: string }): AccountRef {
  if (row.owner_type === 'member') return { owner: 'member', memberId: row.owner_id, bucket: row.bucket as MemberBucket };
  if (row.owner_type === 'merchant') return { owner: 'merchant', merchantId: row.owner_id, bucket: row.bucket as MerchantBucket };
  return { owner: 'platform', bucket: row.bucket as PlatformBucket };
}

/** "member mem_… available" for messages and reports. */
export function describeAccount(ref: AccountRef): string {
  const spec = accountSpec(ref);
  return spec.ownerType === 'platform' ? `platform ${spec.bucket}` : `${spec.ownerType} ${spec.ownerId} ${spec.bucket}`;
}
