import { sql, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';

/** The posting statement of one entry (money/posting.ts): the database function `mwa_post_entry`. */

/** One entry's arguments: its accounts (in key order) with their changes, and its lines. */
export interface PostEntryArgs {
  entryId: string;
  environment: string;
  kind: string;
  referenceType: string;
  referenceId: string;
  merchantId: string;
  asset: string;
  ownerTypes: string[];
  ownerIds: string[];
  buckets: string[];
  normalSides: string[];
  nonNegative: boolean[];
  /** Each account's balance change, a decimal string. */
  deltas: string[];
  /** Each line's account, an index from 1 into the accounts. */
  lineAccounts: number[];
  /** Each line's signed amount (debit positive), a decimal string. */
  lineAmounts: string[];
}

/** `ok`, `duplicate`, or `short` with the (1-based) account that would fall below zero. */
export async function callPostEntry(
  trx: Transaction<Database>,
  a: PostEntryArgs,
): Promise<{ status: string; account_index: number | null } | undefined> {
  const { rows } = await sql<{ status: string; account_index: number | null }>`
      SELECT status, account_index FROM mwa_post_entry(
        ${a.entryId}, ${a.environment}, ${a.kind}, ${a.referenceType}, ${a.referenceId},
          ${a.merchantId}, ${a.asset},
        ${a.ownerTypes}::text[], ${a.ownerIds}::text[],
          ${a.buckets}::text[],
        ${a.normalSides}::text[], ${a.nonNegative}::boolean[],
          ${a.deltas}::numeric[],
        ${a.lineAccounts}::int[],
          ${a.lineAmounts}::numeric[])
    `.execute(trx);
  return rows[0];
}

/**
 * The merchant's write lock (the one every posting of the merchant takes first, migration 031),
 * held to the end of the transaction: taken before any row by a write that must lock rows a batch
 * of batch effects locks after it (docs/locking.md).
 */
export async function lockMerchantWrites(
  trx: Transaction<Database>,
  scope: { merchantId: string; environment: string },
): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`merchant-writes|${scope.merchantId}|${scope.environment}`},
    0))`.execute(trx);
}
