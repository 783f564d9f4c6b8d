import type { ColumnType, Generated } from 'kysely';

/** Column helper types shared by every area's tables.ts; this file imports no table. */

export type Environment = 'sandbox' | 'production';
/** Read as a Date; written as a Date or an ISO string; optional on insert where the column has a default. */
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/** A JSON column written as the caller's own JSON.stringify output. */
export type Json<T> = ColumnType<T, string, string>;
/** Money columns are numeric minor units: they arrive as decimal strings and are parsed to bigint. */
export type Minor = string | bigint;

/** The columns of a row of one merchant's environment: what `inScope` (owned-by.ts) finds it by. */
export interface ScopedColumns {
  merchant_id: string;
  environment: Environment;
}

/** The columns of a row made on behalf of a member: what `ownedBy` finds it by and `ownerColumns` fills. */
export interface MemberOwnedColumns extends ScopedColumns {
  member_id: string;
}

/**
 * The columns of an order handed to a provider (src/provider-orders: card top-ups, QR payments,
 * remittance payouts): its status, the provider's answer as far as known (`unknown` after a
 * timeout or 5xx), and the status queries asked while it is not known.
 */
export interface ProviderOrderColumns<Status extends string, Outcome extends string> {
  status: Status;
  status_version: number;
  upstream_outcome: Outcome;
  provider_order_id: string | null;
  provider_status: string | null;
  failure_reason: string | null;
  check_count: Generated<number>;
  next_check_at: NullableTimestamp;
  last_checked_at: NullableTimestamp;
}

/** An image sealed at rest (AES-256-GCM, modules/kyc/images.ts): the label of its key and the cipher's parts. */
export interface SealedImageColumns {
  key_label: string;
  iv: Buffer;
  ciphertext: Buffer;
  auth_tag: Buffer;
}
