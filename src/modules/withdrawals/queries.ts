import { sql, type Insertable, type Selectable, type Transaction } from 'kysely';
import { claimStatusMove } from '../../db/status-move.js';
import type { Database, Db } from '../../db/schema.js';
import { ownedBy } from '../../db/owned-by.js';
import type { WithdrawalStatus, WithdrawalsTable } from './tables.js';
import { scopeNowSql } from '../../platform/queries/clock.js';
import { type ListEnvelope, type PageParams } from '../../platform/routes/pagination.js';
import { keysetPage } from '../../db/keyset-page.js';
import { withPrefix } from '../../platform/ids.js';
import type { Caller } from '../../platform/caller.js';

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
    stored: hex ? sql<string>`lower(address)` : sql<string>`address`,
    sent: hex ? address.toLowerCase() : address,
  };
}

/** Blacklisted, or one of the service's own deposit addresses. */
export async function addressRefused(db: Db, network: string, address: string): Promise<boolean> {
  const { stored, sent } = addressKey(address);
  // One statement (a round trip less on a withdrawal's path); `address` in each subquery is its own table's.
  const { rows } = await sql<{ refused: boolean }>`
    SELECT EXISTS (SELECT 1 FROM blacklisted_addresses WHERE network = ${network} AND ${stored} = ${sent})
        OR EXISTS (SELECT 1 FROM deposit_addresses WHERE network = ${network} AND ${stored} = ${sent}) AS refused
  `.execute(db);
  return rows[0]?.refused === true;
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

export async function memberExternalId(db: Db, memberId: string): Promise<{ external_member_id: string }> {
  return db.selectFrom('members').select('external_member_id').where('id', '=', memberId).executeTakeFirstOrThrow();
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

/** A new withdrawal, locked, stamped with the merchant's clock (created and updated). */
export function insertWithdrawal(
  trx: Transaction<Database>,
  values: Omit<Insertable<WithdrawalsTable>, 'created_at' | 'updated_at'>,
): Promise<Row> {
  return trx
    .insertInto('withdrawals')
    .values({
      ...values,
      created_at: scopeNowSql(values.merchant_id, values.environment) as unknown as Date,
      updated_at: scopeNowSql(values.merchant_id, values.environment) as unknown as Date,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The claim of a locked withdrawal's move (one conditional UPDATE): the row moved, or undefined. */
export function claimMove(
  trx: Transaction<Database>,
  caller: Caller,
  id: string,
  target: 'settled' | 'failed',
): Promise<Row | undefined> {
  return claimStatusMove<Row>(trx, 'withdrawals', id, {
    from: 'locked',
    to: target,
    at: scopeNowSql(caller.merchantId, caller.environment),
  });
}
