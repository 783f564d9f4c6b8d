import type { Kysely, RawBuilder } from 'kysely';
import type { Database, Trx } from '../db/schema.js';
import { describeStored } from './accounts.js';
import { countLedgerRows, firstRows, offendingRows, selectAssetTotals } from './queries/verify.js';

export interface LedgerReport {
  ok: boolean;
  problems: string[];
  checked: { entries: number; postings: number; accounts: number };
}

/** Bound on the problems each check reports (the report says when it stopped there). */
export const problemsPerCheckMax = 50;

/**
 * Checks the ledger's invariants over one snapshot (a read-only REPEATABLE READ transaction):
 * every entry has two or more postings that sum to zero, in the entry's asset and environment;
 * postings of each asset sum to zero per environment; each account's stored balance equals the
 * sum of its postings signed by its normal side; no member or merchant account is negative; a
 * platform account kept for a merchant is moved only by that merchant's entries; each merchant's
 * custody equals what its members hold plus its net settlement position (see `custodyMismatches`,
 * and docs/ledger.md "Custody").
 */
export async function verifyLedger(db: Kysely<Database>): Promise<LedgerReport> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const problems = [
        ...(await unbalancedEntries(trx)),
        ...(await mismatchedPostings(trx)),
        ...(await assetTotals(trx)),
        ...(await accountDrift(trx)),
        ...(await negativeAccounts(trx)),
        ...(await orphanMemberAccounts(trx)),
        ...(await misattributedPlatformPostings(trx)),
        ...(await custodyMismatches(trx)),
      ];
      const counts = await countLedgerRows(trx);
      return {
        ok: problems.length === 0,
        problems,
        checked: {
          entries: Number(counts.entries),
          postings: Number(counts.postings),
          accounts: Number(counts.accounts),
        },
      };
    });
}

/** Plain text of a row: a tampered row must not make the report itself fail. */
const label = (r: { owner_type: string; owner_id: string; bucket: string }) => describeStored(r);

/** A check that lists the rows its statement finds: a line for each, at most `problemsPerCheckMax` of them. */
function rowCheck<R>(statement: RawBuilder<R>, what: string, describe: (row: R) => string) {
  return async (trx: Trx): Promise<string[]> => {
    const found = (await firstRows(trx, statement, problemsPerCheckMax + 1)).map(describe);
    if (found.length <= problemsPerCheckMax) return found;
    return [...found.slice(0, problemsPerCheckMax), `... more ${what} not listed`];
  };
}

const unbalancedEntries = rowCheck(
  offendingRows.unbalancedEntries,
  'unbalanced entries',
  (r) => `entry ${r.id}: ${r.postings} postings summing to ${r.total} (needs at least 2 summing to 0)`,
);

const mismatchedPostings = rowCheck(
  offendingRows.mismatchedPostings,
  'mismatched postings',
  (r) =>
    `posting ${r.id} of entry ${r.entry_id}: asset ${r.asset}, entry ${r.entry_asset} in ${r.entry_env}, ` +
    `account ${r.account_asset} in ${r.account_env}`,
);

async function assetTotals(trx: Trx): Promise<string[]> {
  const rows = await selectAssetTotals(trx);
  return rows.map((r) => `asset ${r.asset} in ${r.environment}: postings sum to ${r.total}, not 0`);
}

const accountDrift = rowCheck(
  offendingRows.driftedAccounts,
  'drifted accounts',
  (r) =>
    `account ${r.id} (${label(r)}, ${r.asset}, ${r.environment}): stored balance ${r.balance}, postings ` +
    `give ${r.posted}`,
);

const negativeAccounts = rowCheck(
  offendingRows.negativeAccounts,
  'negative accounts',
  (r) => `account ${r.id} (${label(r)}, ${r.asset}, ${r.environment}): negative balance ${r.balance}`,
);

/** A member account whose member does not exist in the account's environment belongs to no merchant. */
const orphanMemberAccounts = rowCheck(
  offendingRows.orphanMemberAccounts,
  'orphan member accounts',
  (r) => `account ${r.id} (${label(r)}, ${r.asset}, ${r.environment}): no such member in ${r.environment}`,
);

/**
 * A platform account kept for a merchant (`owner_id` = the merchant, since migration 026) moved by
 * an entry of another merchant, or of none: the per-merchant split, and with it the settlement term
 * of the custody check, would no longer say whose money it is. The shared rows of before 026
 * (`owner_id` '') were moved by every merchant's entries and are not checked here.
 */
const misattributedPlatformPostings = rowCheck(
  offendingRows.misattributedPlatformPostings,
  'misattributed platform postings',
  (r) =>
    `posting ${r.id} of entry ${r.entry_id} (merchant ${r.merchant_id ?? 'none'}): moves ${label(r)} ` +
    `(${r.asset}, ${r.environment})`,
);

/**
 * For each environment, merchant and asset:
 *
 *   custody = sum of every account of the merchant's members (available, frozen, withdrawing,
 *             earn, card) + settlement
 *
 * where settlement is the net credit of the platform's settlement clearing accounts in the
 * merchant's entries (QR payments completed minus refunded, less the operator's custody
 * decreases, plus its increases): member money that left to an acquirer while the merchant still
 * holds it; it also counts the platform's `earn_interest` accounts in the merchant's entries
 * (interest the platform paid the merchant's members and still owes the merchant's custody, a
 * negative term; docs/earn.md). Custody is the stored balance; so are the members' buckets.
 *
 * Settlement is summed from postings by the entry's merchant, whichever platform row they are on:
 * the merchant's own rows (since migration 026, `owner_id` = the merchant; only its entries move
 * them, `misattributedPlatformPostings`) and its share of the shared rows of before 026
 * (`owner_id` ''), so a database from before the split verifies as it did.
 */
const custodyMismatches = rowCheck(
  offendingRows.custodyMismatches,
  'custody mismatches',
  (r) =>
    `custody of merchant ${r.merchant_id} (${r.asset}, ${r.environment}): ${r.custody}, but its members ` +
    `hold ${r.members} and its settlement position is ${r.settlement}`,
);
