import type { ColumnType, Generated } from 'kysely';
import type { Environment, Json, Timestamp } from '../db/columns.js';

/** Tables the request pipeline reads and writes: merchants, keys, tokens, idempotency, nonces, rate windows, call log.
 * */

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

/** A sandbox merchant's clock: real time plus this offset (migration 011, src/platform/clock.ts). */
export interface SandboxClocksTable {
  merchant_id: string;
  offset_ms: ColumnType<string, string | bigint | undefined, string | bigint>;
  updated_at: Generated<Date>;
  /** Real time until which one advance holds this clock (migration 013); NULL or past: free. */
  advance_lease_until: Generated<Date | null>;
}

export interface PlatformTables {
  merchants: MerchantsTable;
  merchant_principals: MerchantPrincipalsTable;
  api_keys: ApiKeysTable;
  access_tokens: AccessTokensTable;
  idempotency_keys: IdempotencyKeysTable;
  signature_nonces: SignatureNoncesTable;
  rate_limit_windows: RateLimitWindowsTable;
  api_call_logs: ApiCallLogsTable;
  sandbox_clocks: SandboxClocksTable;
}
