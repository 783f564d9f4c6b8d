/** Card applications and their supplement images (migration 018). */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { NullableTimestamp, Timestamp, MemberOwnedColumns, SealedImageColumns } from '../../../db/columns.js';
import type { MinorColumn, Address } from '../shared/tables.js';

export type ApplicationStatus = 'pending' | 'need_docs' | 'approved' | 'rejected' | 'failed';

export type SupplementStatus = 'pending' | 'submitted';

export interface CardApplicationsTable extends MemberOwnedColumns {
  seq: Generated<string>;
  /** `cap_<uuid>` */
  id: string;
  product_seq: string;
  source_asset: string;
  /** The opening fee in minor units of `source_asset`. */
  fee: MinorColumn;
  shipping_address: ColumnType<Address | null, string | null, string | null>;
  status: ApplicationStatus;
  status_version: number;
  /** What the issuer answered to the submission: `unknown` after a timeout or 5xx (never refunded on it). */
  upstream_outcome: 'none' | 'accepted' | 'unknown';
  upstream_ref: string | null;
  supplement_status: SupplementStatus | null;
  supplement_expires_at: NullableTimestamp;
  card_id: string | null;
  failure_reason: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Status queries made by reconciliation of an unknown submission outcome (migration 020). */
  check_count: Generated<number>;
  /** When reconciliation next asks the issuer (merchant's clock); null: nothing to reconcile. */
  next_check_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface CardSupplementImagesTable extends SealedImageColumns {
  id: string;
  application_id: string;
  member_id: string;
  kind: 'document' | 'selfie';
  content_type: string;
  size_bytes: number;
  created_at: Generated<Date>;
}

export type CardApplicationRow = Selectable<CardApplicationsTable>;

export interface ApplicationTables {
  card_applications: CardApplicationsTable;
  card_supplement_images: CardSupplementImagesTable;
}
