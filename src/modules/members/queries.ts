/** Reads of the members table. The lookup by either id is also the request pipeline's on-behalf-of step (injected as
 * ctx.resolveMember). */
import { sql, type Selectable, type Transaction } from 'kysely';
import type { Database, Environment, Db } from '../../db/schema.js';
import { inScope } from '../../db/owned-by.js';
import type { MembersTable } from './tables.js';
import { scopeNowSql } from '../../platform/queries/clock.js';

const internalId = /^mem_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The service's own member id form (`mem_<uuid>`), which a look-up tries first. */
export function isInternalMemberId(value: string): boolean {
  return internalId.test(value);
}

/**
 * The member id form in any letter case: never an external id (creation refuses it, and
 * `sessions/revoke`, which takes only the external id, refuses it as an unknown member).
 */
const memberIdForm = new RegExp(internalId.source, 'i');
export function hasMemberIdForm(value: string): boolean {
  return memberIdForm.test(value);
}

/**
 * A member by either of its ids: the service's `mem_<uuid>` or the merchant's external id. The
 * internal form is tried first when the value has its shape; each lookup uses an index.
 */
export async function resolveMember(db: Db, merchantId: string, environment: Environment, idOrExternal: string) {
  if (isInternalMemberId(idOrExternal)) {
    // By the primary key alone, the merchant checked here: with the merchant in the statement, a
    // plan PostgreSQL made while the table was small read the merchant's index and filtered
    // every member of the merchant.
    const byId = await db.selectFrom('members').selectAll().where('id', '=', idOrExternal).executeTakeFirst();
    if (byId && byId.merchant_id === merchantId && byId.environment === environment) return byId;
  }
  return db
    .selectFrom('members')
    .selectAll()
    .where(inScope({ merchantId, environment }))
    .where('external_member_id', '=', idOrExternal)
    .executeTakeFirst();
}

/**
 * The member's row locked (FOR NO KEY UPDATE) to the end of the transaction: what one member does
 * that must not interleave is serialised on it (its CVV unblock calls; kyc/queries.ts locks it
 * the same way as it reads it).
 */
export async function lockMember(trx: Db, memberId: string): Promise<void> {
  await trx.selectFrom('members').select('id').where('id', '=', memberId).forNoKeyUpdate().executeTakeFirst();
}

/** The member's external id, for the events about it ('' when there is no such member). */
export async function externalMemberIdOf(db: Db, memberId: string): Promise<string> {
  const row = await db.selectFrom('members').select('external_member_id').where('id', '=', memberId).executeTakeFirst();
  return row?.external_member_id ?? '';
}

/** A member of `insertMembers`: `ord` its place in the caller's list. */
export interface NewMember {
  ord: number;
  id: string;
  merchantId: string;
  environment: Environment;
  externalId: string;
  profile: Record<string, unknown>;
}

/**
 * Inserts members, of any merchants, in one statement, in the given order, each created at its
 * merchant's time; an external id already taken (before, or earlier in the list) inserts nothing.
 * The rows inserted.
 */
export async function insertMembers(
  trx: Transaction<Database>,
  members: readonly NewMember[],
): Promise<Selectable<MembersTable>[]> {
  if (members.length === 0) return [];
  const { rows } = await sql<Selectable<MembersTable>>`
    INSERT INTO members AS m (id, merchant_id, environment, external_member_id, profile, sessions_revoked_at,
      created_at, updated_at)
    SELECT i.id, i.merchant_id, i.environment, i.external_member_id, i.profile, NULL, i.now, i.now
    FROM (
      SELECT u.*, ${scopeNowSql(sql.ref('u.merchant_id'), sql.ref('u.environment'))} AS now
      FROM unnest(${members.map((m) => m.id)}::text[], ${members.map((m) => m.merchantId)}::text[],
        ${members.map((m) => m.environment)}::text[],
                  ${members.map((m) => m.externalId)}::text[],
                    ${members.map((m) => JSON.stringify(m.profile))}::jsonb[])
        WITH ORDINALITY AS u(id, merchant_id, environment, external_member_id, profile, ord)
    ) i
    ORDER BY i.ord
    ON CONFLICT (merchant_id, environment, external_member_id) DO NOTHING
    RETURNING m.*
  `.execute(trx);
  return rows;
}

export async function markSuspended(db: Db, id: string, now: Date): Promise<void> {
  await db.updateTable('members').set({ status: 'suspended', updated_at: now }).where('id', '=', id).execute();
}

/** The member's internal id by its external id, within the merchant and environment. */
export function findByExternalId(db: Db, merchantId: string, environment: Environment, externalId: string) {
  return db
    .selectFrom('members')
    .select('id')
    .where(inScope({ merchantId, environment }))
    .where('external_member_id', '=', externalId)
    .executeTakeFirst();
}

export async function markSessionsRevoked(db: Db, id: string, now: Date): Promise<void> {
  await db.updateTable('members').set({ sessions_revoked_at: now, updated_at: now }).where('id', '=', id).execute();
}
