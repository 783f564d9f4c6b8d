import type { ColumnType, Generated } from 'kysely';

export type Environment = 'sandbox' | 'production';
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json<T> = ColumnType<T, string, string>;

export interface MerchantsTable {
  id: string;
  name: string;
  status: Generated<string>;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface MerchantPrincipalsTable {
  merchant_id: string;
  environment: Environment;
  created_at: Generated<Date>;
}

export interface ApiKeysTable {
  id: string;
  merchant_id: string;
  environment: Environment;
  client_id: string;
  api_key_hash: string;
  signing_key: string;
  scopes: Json<string[]>;
  pending_scopes: Json<string[]>;
  ip_allowlist: Generated<string>;
  disabled: Generated<boolean>;
  expires_at: Date | string | null;
  rotated_from: string | null;
  /** Moves on every stop of the key; tokens of an older generation are dead (migration 009). */
  token_generation: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface AccessTokensTable {
  token_hash: string;
  key_id: string;
  expires_at: Date | string;
  /** The key's token generation at issue. */
  key_generation: Generated<number>;
  created_at: Generated<Date>;
}

export interface IdempotencyKeysTable {
  merchant_id: string;
  environment: Environment;
  key: string;
  endpoint: string;
  request_hash: string;
  status_code: number;
  response_body: string;
  created_at: Generated<Date>;
}

export interface SignatureNoncesTable {
  merchant_id: string;
  environment: Environment;
  nonce: string;
  expires_at: Date | string;
}

export interface RateLimitWindowsTable {
  subject: string;
  bucket: string;
  window_start: bigint | string;
  hits: number;
}

export interface ApiCallLogsTable {
  id: Generated<bigint>;
  merchant_id: string;
  environment: Environment;
  request_id: string;
  method: string;
  path: string;
  status_code: number;
  duration_ms: number;
  created_at: Generated<Date>;
}

export interface MembersTable {
  seq: Generated<bigint>;
  id: string;
  merchant_id: string;
  environment: Environment;
  external_member_id: string;
  status: Generated<string>;
  kyc_level: Generated<number>;
  profile: Json<Record<string, unknown>>;
  sessions_revoked_at: Date | null;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

import type { LedgerTables } from '../ledger/tables.js';
import type { MoneyFlowTables } from '../modules/tables.js';
import type { JobTables } from '../jobs/tables.js';
import type { OperatorAlertsTable } from '../operator/alerts.js';
import type { WebhookTables } from '../modules/webhooks/tables.js';
import type { UpstreamTables } from '../upstreams/tables.js';
import type { QrPayTables } from '../modules/qrpay/tables.js';

export interface PlatformTables {
  merchants: MerchantsTable;
  merchant_principals: MerchantPrincipalsTable;
  api_keys: ApiKeysTable;
  access_tokens: AccessTokensTable;
  idempotency_keys: IdempotencyKeysTable;
  signature_nonces: SignatureNoncesTable;
  rate_limit_windows: RateLimitWindowsTable;
  api_call_logs: ApiCallLogsTable;
  members: MembersTable;
}

/** One Kysely schema composed of each area's tables; each area owns its file. */
export interface Database extends PlatformTables, LedgerTables, MoneyFlowTables, JobTables, WebhookTables, UpstreamTables, QrPayTables {
  operator_alerts: OperatorAlertsTable;
}
