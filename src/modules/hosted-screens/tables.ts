import type { Generated } from 'kysely';
import type { Json, NullableTimestamp, Timestamp, MemberOwnedColumns, ScopedColumns } from '../../db/columns.js';

/** What a hosted-screen ticket opens (extensions 9). */
export type TicketPurpose = 'kyc' | 'profile_update' | 'card_supplement' | 'step_up' | 'card_reveal';

/**
 * `open`: issued, usable on its screen until `expires_at` (the merchant's clock).
 * `completed`: the screen was submitted (KYC, update, supplement) or the step-up code proved
 *   (then `outcome` is `approved`); a screen ticket is spent here, a step-up challenge waits to be used.
 * `used`: a completed step-up challenge was consumed by the repeated request.
 * `void`: declined, or the member's sessions were revoked.
 */
export type TicketStatus = 'open' | 'completed' | 'used' | 'void';

export interface HostedTicketsTable extends MemberOwnedColumns {
  /** `kyc_<32 hex>` */
  id: string;
  purpose: TicketPurpose;
  /** The object the screen works on: a card application (supplement) or a card (reveal). */
  subject_id: string | null;
  /** Step-up only: the action and the object the challenge authorises. */
  action: string | null;
  object_ref: string | null;
  status: Generated<TicketStatus>;
  /** Step-up: `approved` or `declined`. */
  outcome: string | null;
  /** scheme://host of the call that issued the ticket; the screen is served there. */
  public_origin: string;
  expires_at: Timestamp;
  /** Step-up: wrong one-time codes so far (at most 5). */
  failed_attempts: Generated<number>;
  /** Step-up: hash of the one-time code sent through the notifier. */
  secret_hash: string | null;
  completed_at: NullableTimestamp;
  used_at: NullableTimestamp;
  created_at: Generated<Date>;
}

/** Per merchant and environment: the origins allowed to frame the hosted screens (empty: none). */
export interface HostedScreenSettingsTable extends ScopedColumns {
  /** JSON array of normalised origins (security-headers.ts). */
  frame_ancestors: Json<string[]>;
  updated_at: Timestamp;
}

/** Per merchant (both environments): how its hosted screens present it (branding.ts). */
export interface MerchantBrandingTable {
  merchant_id: string;
  display_name: string | null;
  /** `#rrggbb`, lower case. */
  accent_color: string | null;
  logo: Buffer | null;
  /** Sniffed from the bytes: image/png, image/jpeg or image/webp. */
  logo_type: string | null;
  logo_etag: string | null;
  updated_at: Timestamp;
}

export interface HostedScreenTables {
  hosted_tickets: HostedTicketsTable;
  hosted_screen_settings: HostedScreenSettingsTable;
  merchant_branding: MerchantBrandingTable;
}
