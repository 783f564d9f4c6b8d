import { sql, type Transaction } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { newId } from '../../src/platform/ids.js';
import { accountSpec, assertEntry, type EntryInput } from '../../src/money/index.js';

/**
 * Posts an entry as the ledger did before migration 026: every platform line on the platform row
 * shared by all merchants (`owner_id` ''), the rest as `postEntry` does. For tests that build a
 * database from before the split (its rows stay and must keep reading and verifying). The lines
 * still name a merchant for their platform accounts (the type asks for one); it is dropped here.
 */
export async function postAsBeforeSplit(trx: Transaction<Database>, entry: EntryInput): Promise<{ entryId: string }> {
  assertEntry(entry);
  const specOf = (line: EntryInput['lines'][number]) => {
    const spec = accountSpec(line.account);
    return line.account.owner === 'platform' ? { ...spec, ownerId: '' } : spec;
  };
  const keyOf = (s: ReturnType<typeof specOf>) => `${s.ownerType}\u0000${s.ownerId}\u0000${s.bucket}`;
  const accounts = new Map<string, ReturnType<typeof specOf> & { delta: bigint }>();
  for (const line of entry.lines) {
    const spec = specOf(line);
    const signed = line.side === 'debit' ? line.amount : -line.amount;
    const account = accounts.get(keyOf(spec)) ?? { ...spec, delta: 0n };
    account.delta += spec.normalSide === 'debit' ? signed : -signed;
    accounts.set(keyOf(spec), account);
  }
  const keys = [...accounts.keys()].sort();
  const list = keys.map((k) => accounts.get(k)!);
  const entryId = newId('jrn');
  const { rows } = await sql<{ status: string }>`
    SELECT status FROM mwa_post_entry(
      ${entryId}, ${entry.environment}, ${entry.kind}, ${entry.referenceType}, ${entry.referenceId},
        ${entry.merchantId}, ${entry.asset},
      ${list.map((a) => a.ownerType)}::text[], ${list.map((a) => a.ownerId)}::text[],
        ${list.map((a) => a.bucket)}::text[],
      ${list.map((a) => a.normalSide)}::text[], ${list.map((a) => a.nonNegative)}::boolean[],
        ${list.map((a) => a.delta.toString())}::numeric[],
      ${entry.lines.map((l) => keys.indexOf(keyOf(specOf(l))) + 1)}::int[],
        ${entry.lines.map((l) => (l.side === 'debit' ? l.amount : -l.amount).toString())}::numeric[])
  `.execute(trx);
  if (rows[0]?.status !== 'ok') throw new Error(`legacy posting answered ${rows[0]?.status}`);
  return { entryId };
}
