import { sql, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { StoredResult } from './idempotency.js';

/** The two statements of a write batch (platform/writes/write-batch.ts, docs/group-commit.md). */

/** One row per write of the batch (`ord` from 1): its nonce fresh or not, its key locked, its record. */
export type KeyClaim = { ord: number; fresh: boolean | null; locked: boolean } & Partial<StoredResult>;

/** What `mwa_claim_keys` takes: one entry per write, in the batch's order, but `merchantLocks`. */
export interface KeyClaimArgs {
  /** The merchants' write locks to take first, sorted (none for a solo batch). */
  merchantLocks: string[];
  keyLocks: string[];
  merchantIds: string[];
  environments: string[];
  keys: string[];
  windowHours: number;
  nonces: (string | null)[];
  nonceExpires: (string | null)[];
  nonceNow: (string | null)[];
}

/**
 * Step 1 of a batch (`mwa_claim_keys`): the merchants' write locks, the writes' nonces, each
 * key's lock and each locked key's record, in one statement.
 */
export async function claimKeys(trx: Transaction<Database>, a: KeyClaimArgs): Promise<KeyClaim[]> {
  const { rows } = await sql<KeyClaim>`
    SELECT ord, fresh, locked, endpoint, request_hash, status_code, response_body, created_at
    FROM mwa_claim_keys(${a.merchantLocks}::text[], ${a.keyLocks}::text[],
      ${a.merchantIds}::text[],
                        ${a.environments}::text[],
                          ${a.keys}::text[],
                        ${a.windowHours}::int, ${a.nonces}::text[],
                          ${a.nonceExpires}::timestamptz[], ${a.nonceNow}::timestamptz[])
  `.execute(trx);
  return rows;
}

/** A result or refusal to store as its key's record. */
export interface ResultRow {
  merchantId: string;
  environment: string;
  key: string;
  endpoint: string;
  requestHash: string;
  statusCode: number;
  body: string;
}

/**
 * Step 3 of a batch (`mwa_store_results_across`): every record in one statement. A row older than
 * the window, and a claim (status `claimStatus`), are overwritten.
 */
export async function storeResults(
  trx: Transaction<Database>,
  rows: readonly ResultRow[],
  windowHours: number,
  claimStatus: number,
): Promise<void> {
  await sql`
      SELECT mwa_store_results_across(${rows.map((r) => r.merchantId)}::text[],
        ${rows.map((r) => r.environment)}::text[],
                               ${rows.map((r) => r.key)}::text[], ${rows.map((r) => r.endpoint)}::text[],
                                 ${rows.map((r) => r.requestHash)}::text[],
                               ${rows.map((r) => r.statusCode)}::int[], ${rows.map((r) => r.body)}::text[],
                                 ${windowHours}::int, ${claimStatus}::int)
    `.execute(trx);
}
