/**
 * Shapes of the requests and responses the SDK knows about (reference + extensions §3-5).
 * Amounts are decimal strings; never convert them to binary floating point.
 * Every response type has an index signature: the server may add fields.
 */

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export type QueryParams = Record<string, string | number | undefined>;

export interface ListEnvelope<T> {
  data: T[];
  next_cursor: string | null;
  has_more: boolean;
}

export interface TokenResponse {
  auth_token: string;
  /** Unix seconds. */
  expired_at: number;
  token_type: string;
  scopes: string[];
  [extra: string]: unknown;
}

export interface CreateMemberBody {
  /** 1 to 64 of `A-Z a-z 0-9 _ . : -` */
  external_member_id: string;
  [profileField: string]: unknown;
}

export interface Member {
  id: string;
  external_member_id: string;
  status: string;
  kyc_level: number;
  /** The KYC profile's status (`pending_review`, `approved`, `rejected`); null before the first KYC screen is submitted. */
  kyc_profile_status: string | null;
  created_at: string;
  [extra: string]: unknown;
}

export interface MemberSuspension {
  id: string;
  status: 'suspended' | string;
  [extra: string]: unknown;
}

export interface SessionRevocation {
  id: string;
  revoked: boolean;
  [extra: string]: unknown;
}

export interface CreateDepositBody {
  /** `mem_<uuid>` or the merchant's external member id. */
  member_id: string;
  asset: string;
  amount: string;
  tx_hash: string;
  network?: string;
  [extra: string]: unknown;
}

export interface Deposit {
  id: string;
  member_id: string;
  asset: string;
  amount: string;
  network?: string | null;
  tx_hash?: string;
  status: 'credited' | string;
  created_at: string;
  [extra: string]: unknown;
}

/** Filters of `GET /v1/deposits`; they combine. */
export interface DepositListFilters {
  /** `mem_<uuid>` or the external member id (as the merchant); an unknown member gives nothing. */
  member_id?: string;
  asset?: string;
  /** ISO 8601 with a time zone, or a Date: created at or after. */
  created_gte?: string | Date;
  /** ISO 8601 with a time zone, or a Date: created strictly before. */
  created_lt?: string | Date;
}

export interface Balance {
  asset: string;
  available: string;
  frozen: string;
  withdrawing: string;
  earn: string;
  card: string;
  total: string;
  [extra: string]: unknown;
}

export interface MerchantBalance {
  asset: string;
  custody: string;
  prepaid_available: string;
  [extra: string]: unknown;
}

export interface Asset {
  code: string;
  scale: number;
  type: 'crypto' | 'fiat' | string;
  networks: string[];
  [extra: string]: unknown;
}

export interface CreateWithdrawalBody {
  asset: string;
  network: string;
  address: string;
  amount: string;
  [extra: string]: unknown;
}

export interface Withdrawal {
  id: string;
  status: 'locked' | 'settled' | 'failed' | string;
  /** Increases with each status; merge webhook events forward by it. */
  status_version: number;
  member_id: string;
  asset: string;
  network: string;
  address: string;
  amount: string;
  fee: string;
  created_at: string;
  updated_at: string;
  [extra: string]: unknown;
}

export interface WithdrawalListFilters {
  /** `locked`, `settled` or `failed`. */
  status?: 'locked' | 'settled' | 'failed' | (string & {});
}

export interface WithdrawalConfirmation {
  id: string;
  status: 'settled' | string;
  replayed: boolean;
  [extra: string]: unknown;
}

// Webhook endpoints, deliveries and the event envelope: webhook-types.ts.
export type * from './webhook-types.js';

/** The sandbox clock of `GET /v1/sandbox/clock` and `POST /v1/sandbox/clock/advance`. */
export interface SandboxClock {
  /** The merchant's sandbox time, ISO 8601. */
  now: string;
  [extra: string]: unknown;
}

export interface UpstreamBehaviorPreset {
  ok: boolean;
  upstream: string;
  behavior: string;
  /** Seconds of the sandbox clock until the preset reverts to `success`. */
  expires_in: number;
  [extra: string]: unknown;
}

export interface SandboxReset {
  ok: boolean;
  cleared: { merchant_webhook_deliveries: number; merchant_api_logs: number };
  note: string;
  [extra: string]: unknown;
}

/** A one-time hosted-screen link (`POST /v1/kyc/sessions`, `POST /v1/kyc/profile-sessions`). */
export interface HostedScreenTicket {
  /** `kyc_<32 hex>` */
  id: string;
  hosted_url: string;
  /** Unix seconds. */
  expires_at: number;
  [extra: string]: unknown;
}

/** A ticket as the sandbox helper answers it. */
export interface HostedScreenTicketState extends HostedScreenTicket {
  purpose: 'kyc' | 'profile_update' | 'card_supplement' | 'step_up' | 'card_reveal' | (string & {});
  status: 'open' | 'completed' | 'used' | 'void' | (string & {});
  outcome: string | null;
}

export type HostedScreenSandboxOutcome = 'submitted' | 'approved' | 'declined';

export interface HostedScreenSettings {
  /** Origins allowed to frame the hosted screens (CSP frame-ancestors); empty: none. */
  frame_ancestors: string[];
  [extra: string]: unknown;
}

export interface KycRequirement {
  business: 'card_issuing' | 'remittance' | 'exchange' | 'high_value_transfer' | (string & {});
  min_kyc_level: number;
  [extra: string]: unknown;
}

export interface KycReviewBody {
  decision: 'approved' | 'rejected';
  /** With `approved`: 1 (default) or 2. */
  level?: 1 | 2;
  /** With `rejected`. */
  reason?: string;
}

export interface KycProfileReview {
  /** `kyp_<uuid>` */
  id: string;
  member_id: string;
  status: 'pending_review' | 'approved' | 'rejected' | (string & {});
  status_version: number;
  kyc_level: number;
  [extra: string]: unknown;
}

/** `POST /v1/merchant/deposit-address`, `GET /v1/merchant/deposit-addresses`. */
export interface MerchantDepositAddress {
  /** `dad_<uuid>`. */
  id: string;
  asset: string;
  network: string;
  /** The service's own address: never accepted as a withdrawal target. */
  address: string;
  created_at: string;
}

/** `GET /v1/qrpay/schemes`. */
export interface QrScheme {
  /** Our scheme id, e.g. `sg_paynow`. */
  id: string;
  name: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
  /** ISO 4217 alphabetic. */
  currency: string;
  /** Whether the service can pay this scheme now (its currency is an enabled asset). */
  payable: boolean;
}

/** `POST /v1/qrpay/decode`. */
export interface DecodedQr {
  scheme: string;
  scheme_name: string;
  payable: boolean;
  merchant_name: string;
  merchant_city: string;
  country: string;
  currency: string;
  /** At the currency's scale; null when the code carries no amount (the payer enters it). */
  amount: string | null;
  merchant_category_code: string;
  point_of_initiation: 'static' | 'dynamic' | null;
  reference: string | null;
}

export type QrPaymentStatus = 'processing' | 'completed' | 'failed' | 'refunded';

/** `POST /v1/qrpay/payments`, `GET /v1/qrpay/payments[/{id}]`. */
export interface QrPayment {
  /** `qrp_<uuid>`. */
  id: string;
  status: QrPaymentStatus;
  status_version: number;
  member_id: string;
  scheme: string;
  merchant_name: string;
  merchant_city: string;
  country: string;
  /** The asset debited (the QR currency). */
  asset: string;
  amount: string;
  note: string | null;
  /** When failed: `upstream_rejected`, `upstream_not_found`, `upstream_failed`, `operator`. */
  failure_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface CreateQrPaymentBody {
  /** The EMVCo merchant-presented QR payload, as scanned. */
  qr_code: string;
  /** Required when the QR has none; must equal it when it has one. */
  amount?: string;
  /** The funding asset: the QR currency (e.g. SGD for PayNow). */
  asset: string;
  note?: string;
}
