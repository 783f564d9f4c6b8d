import { sql, type Insertable, type Selectable, type Transaction } from 'kysely';
import type { Database, Db } from '../../db/schema.js';
import { ownedBy } from '../../db/owned-by.js';
import type { WithdrawalStatus, WithdrawalsTable } from './tables.js';
import { scopeNowSql } from '../../platform/queries/clock.js';
import { type ListEnvelope, type PageParams } from '../../platform/routes/pagination.js';
import { keysetPage } from '../../db/keyset-page.js';
import { withPrefix } from '../../platform/ids.js';
import type { Caller } from '../../platform/caller.js';
import { inOrderOf } from '../../db/returned-rows.js';

/** Reads and writes of the withdrawals and blacklisted_addresses tables. */

type Row = Selectable<WithdrawalsTable>;

/**
 * A hex (EVM) address names one account whatever the case of its letters: `0xAbC…` (the EIP-55
 * checksum case) and `0xabc…` are the same. Compared exactly, a blacklisted or own deposit
 * address was let through by writing it in another case; such addresses are compared without
 * case. Others (base58, bech32) stay exact: there the case is part of the address.
 */
const hexAddress = /^0x[0-9a-fA-F]{40}$/;

/** The stored column and the value to compare it with: without case for a hex address, exactly otherwise. */
function addressKey(address: string) {
  const hex = hexAddress.test(address);
  return {
    hex,
    stored: hex ? sql<string>`lower(address)` : sql<string>`address`,
    sent: hex ? address.toLowerCase() : address,
  };
}

/**
 * Which of the addresses are refused (their indexes): blacklisted, or one of the service's own
 * deposit addresses. One statement for them all; each lookup uses its table's index on the
 * address as compared (`lower(address)` for hex).
 */
export async function refusedAddresses(
  db: Db,
  candidates: readonly { network: string; address: string }[],
): Promise<Set<number>> {
  if (candidates.length === 0) return new Set();
  const keys = candidates.map((c) => addressKey(c.address));
  // `address` in each subquery is its own table's; `i.hex` picks the comparison its index serves.
  const { rows } = await sql<{ ord: string }>`
    SELECT i.ord FROM unnest(
      ${candidates.map((c) => c.network)}::text[], ${keys.map((k) => k.sent)}::text[], ${keys.map((k) => k.hex)}::bool[]
    ) WITH ORDINALITY AS i(network, sent, hex, ord)
    WHERE CASE WHEN i.hex THEN
      EXISTS (SELECT 1 FROM blacklisted_addresses b WHERE b.network = i.network AND lower(b.address) = i.sent)
      OR EXISTS (SELECT 1 FROM deposit_addresses d WHERE d.network = i.network AND lower(d.address) = i.sent)
    ELSE
      EXISTS (SELECT 1 FROM blacklisted_addresses b WHERE b.network = i.network AND b.address = i.sent)
      OR EXISTS (SELECT 1 FROM deposit_addresses d WHERE d.network = i.network AND d.address = i.sent)
    END
  `.execute(db);
  return new Set(rows.map((r) => Number(r.ord) - 1));
}

export async function blacklistAddress(db: Db, network: string, address: string, reason: string): Promise<void> {
  await db
    .insertInto('blacklisted_addresses')
    .values({ network, address, reason })
    .onConflict((oc) => oc.columns(['network', 'address']).doUpdateSet({ reason }))
    .execute();
}

/** Removes the address in every letter case a hex address was listed in (each one refuses it). */
export async function unblacklistAddress(db: Db, network: string, address: string): Promise<void> {
  const { stored, sent } = addressKey(address);
  await db.deleteFrom('blacklisted_addresses').where('network', '=', network).where(stored, '=', sent).execute();
}

export async function findOwned(db: Db, caller: Caller, id: string): Promise<Row | undefined> {
  return db
    .selectFrom('withdrawals')
    .selectAll()
    .where('id', '=', withPrefix('wdr', id))
    .where(ownedBy(caller))
    .executeTakeFirst();
}

/** One page of the caller's withdrawals, newest first (the one keyset walk). */
export async function withdrawalPage(
  db: Db,
  caller: Caller,
  filter: { status?: WithdrawalStatus },
  page: PageParams,
): Promise<ListEnvelope<Row>> {
  let q = db.selectFrom('withdrawals').selectAll().where(ownedBy(caller));
  if (filter.status) q = q.where('status', '=', filter.status);
  return keysetPage(q, page);
}

/** New withdrawals, locked, each stamped with its merchant's clock (created and updated); one statement. */
export async function insertWithdrawals(
  trx: Transaction<Database>,
  values: readonly Omit<Insertable<WithdrawalsTable>, 'created_at' | 'updated_at'>[],
): Promise<Row[]> {
  if (values.length === 0) return [];
  const rows = await trx
    .insertInto('withdrawals')
    .values(
      values.map((v) => {
        const now = scopeNowSql(v.merchant_id, v.environment) as unknown as Date;
        return { ...v, created_at: now, updated_at: now };
      }),
    )
    .returningAll()
    .execute();
  return inOrderOf(values, rows);
}

/** A withdrawal a confirm or fail names: its caller (whose it must be) and the id as the path gave it. */
export interface NamedWithdrawal {
  caller: Caller;
  id: string;
}

export type LockedWithdrawal = Row & { external_member_id: string };

/**
 * The named withdrawals, each the caller's own or undefined, locked (`FOR NO KEY UPDATE`, in id
 * order) with their members' external ids: one statement for them all, in the order named.
 */
export async function lockOwnedMany(
  trx: Transaction<Database>,
  named: readonly NamedWithdrawal[],
): Promise<(LockedWithdrawal | undefined)[]> {
  if (named.length === 0) return [];
  const { rows } = await sql<LockedWithdrawal & { ord: string }>`
    SELECT w.*, m.external_member_id, i.ord FROM unnest(
      ${named.map((n) => withPrefix('wdr', n.id))}::text[], ${named.map((n) => n.caller.merchantId)}::text[],
      ${named.map((n) => n.caller.environment)}::text[], ${named.map((n) => n.caller.memberId ?? null)}::text[]
    ) WITH ORDINALITY AS i(id, merchant_id, environment, member_id, ord)
    JOIN withdrawals w ON w.id = i.id AND w.merchant_id = i.merchant_id AND w.environment = i.environment
      AND (i.member_id IS NULL OR w.member_id = i.member_id)
    JOIN members m ON m.id = w.member_id
    ORDER BY w.id
    FOR NO KEY UPDATE OF w
  `.execute(trx);
  const found: (LockedWithdrawal | undefined)[] = named.map(() => undefined);
  for (const { ord, ...row } of rows) found[Number(ord) - 1] = row;
  return found;
}

/**
 * Locked withdrawals moved to `target` (status version + 1, updated_at on each one's merchant's
 * clock): one statement, the moved rows answered in the order given.
 */
export async function moveLocked(
  trx: Transaction<Database>,
  rows: readonly Row[],
  target: 'settled' | 'failed',
): Promise<Row[]> {
  if (rows.length === 0) return [];
  const moved = await trx
    .updateTable('withdrawals')
    .set((eb) => ({
      status: target,
      status_version: eb('status_version', '+', 1),
      updated_at: scopeNowSql(
        sql.ref('withdrawals.merchant_id'),
        sql.ref('withdrawals.environment'),
      ) as unknown as Date,
    }))
    .where(
      'id',
      'in',
      rows.map((r) => r.id),
    )
    .where('status', '=', 'locked')
    .returningAll()
    .execute();
  return inOrderOf(rows, moved);
}
