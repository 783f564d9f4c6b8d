/** An order's ledger entries: the area chooses them, each referenced by the order. */
import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { postRowEntry, type EntryLine } from '../money/index.js';
import type { LifecycleOrderRow } from './store.js';

/**
 * Posts one of the order's ledger entries (the area's kind, asset and lines), referenced by the
 * order: with its id as the reference each kind posts once per order. In the caller's transaction,
 * by the claim's winner.
 */
export async function postOrderEntry(
  trx: Transaction<Database>,
  order: Pick<LifecycleOrderRow, 'id' | 'merchant_id' | 'environment'>,
  entry: { referenceType: string; kind: string; asset: string; lines: EntryLine[] },
): Promise<void> {
  await postRowEntry(trx, order, entry);
}
