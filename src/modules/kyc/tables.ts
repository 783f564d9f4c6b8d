import type { ColumnType, Generated } from 'kysely';
import type {
  Environment,
  Minor,
  NullableTimestamp,
  Timestamp,
  MemberOwnedColumns,
  SealedImageColumns,
} from '../../db/columns.js';

/** A profile's review state (state.ts). */
export type KycProfileStatus = 'pending_review' | 'approved' | 'rejected';

/** Who decided a review: an operator (manual review), the KYC provider, or the sandbox helper through the simulated
 * provider. */
export type KycReviewSource = 'operator' | 'provider';

export type KycImageKind = 'document' | 'selfie';
export type KycImageType = 'image/jpeg' | 'image/png';

/** One real-name profile per member, from its first submission on (extensions 9). */
export interface KycProfilesTable extends MemberOwnedColumns {
  seq: Generated<bigint>;
  /** `kyp_<uuid>` */
  id: string;
  status: KycProfileStatus;
  /** Increases with every status event (`data.status_version`). */
  status_version: Generated<number>;
  /** Submissions so far (first + updates); a provider check is keyed by profile id and this number. */
  submissions: Generated<number>;
  first_name: string;
  last_name: string;
  /** YYYY-MM-DD */
  birth_date: string;
  /** ISO 3166-1 alpha-2 */
  nationality: string;
  document_type: string;
  document_number: string;
  address_line1: string;
  address_line2: Generated<string>;
  city: string;
  postal_code: string;
  address_country: string;
  document_image_id: string;
  selfie_image_id: string;
  /** The level the last approval granted (kept through later states, for the record). */
  granted_level: Generated<number>;
  rejection_reason: string | null;
  review_source: KycReviewSource | null;
  /** The provider's reference of the current submission's check. */
  provider_ref: string | null;
  submitted_at: Timestamp;
  reviewed_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

/** Document and selfie images, AES-256-GCM encrypted (images.ts); the clear bytes are never stored. */
export interface KycImagesTable extends MemberOwnedColumns, SealedImageColumns {
  /** `kyi_<uuid>` */
  id: string;
  kind: KycImageKind;
  /** From the bytes' signature, never from the browser's claim. */
  content_type: KycImageType;
  size_bytes: number;
  created_at: Generated<Date>;
}

/** Minimum KYC level per business and environment; the operator changes them. */
export interface KycRequirementsTable {
  environment: Environment;
  business: string;
  min_kyc_level: number;
  updated_at: Timestamp;
}

/** Per environment and asset: at or above `min_amount` (minor units) a transfer is high-value. */
export interface KycHighValueThresholdsTable {
  environment: Environment;
  asset: string;
  min_amount: ColumnType<string, Minor, Minor>;
  updated_at: Timestamp;
}

export interface KycTables {
  kyc_profiles: KycProfilesTable;
  kyc_images: KycImagesTable;
  kyc_requirements: KycRequirementsTable;
  kyc_high_value_thresholds: KycHighValueThresholdsTable;
}
