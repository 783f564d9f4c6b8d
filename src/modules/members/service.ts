import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { scopeNowSql } from '../../platform/clock.js';
import type { Database, Environment } from '../../db/schema.js';
import type { MembersTable } from './tables.js';
import { ApiError, type ErrorCode } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { hasMemberIdForm, resolveMember } from './queries.js';
import { voidMemberTickets } from '../hosted-screens/queries.js';

/** The codes each function can answer (beyond invalid input): the routes declare these lists. */
export const memberErrors = {
  create: ['duplicate_resource'],
  get: ['member_not_found'],
  suspend: ['member_not_found'],
  revokeSessions: ['member_not_found'],
} as const satisfies Record<string, readonly ErrorCode[]>;

type Db = Kysely<Database> | Transaction<Database>;

/** The member as the API shows it; `kycProfileStatus` is its KYC profile's status (null: no profile yet). */
export function memberView(m: Selectable<MembersTable>, kycProfileStatus: string | null = null) {
  return {
    id: m.id,
    external_member_id: m.external_member_id,
    status: m.status,
    kyc_level: m.kyc_level,
    kyc_profile_status: kycProfileStatus,
    profile: m.profile ?? {},
    created_at: new Date(m.created_at).toISOString(),
  };
}

/** `now`: the merchant's time (ctx.clock), as for the writes below. */
export async function createMember(trx: Db, merchantId: string, environment: Environment, externalId: string, profile: Record<string, unknown>, now: Date) {
  // A look-up tries the service's id first: an external id of that form could name another of the
  // merchant's members in x-on-behalf-of (or a deposit's member_id), never reaching this one.
  if (hasMemberIdForm(externalId)) {
    throw new ApiError('invalid_request', 'external_member_id cannot take the service\'s own member id form (mem_<uuid>).');
  }
  const row = await trx
    .insertInto('members')
    .values({
      id: newId('mem'),
      merchant_id: merchantId,
      environment,
      external_member_id: externalId,
      profile: JSON.stringify(profile),
      sessions_revoked_at: null,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.columns(['merchant_id', 'environment', 'external_member_id']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new ApiError('duplicate_resource', 'A member with this external_member_id already exists.');
  return memberView(row);
}

export async function getMember(db: Db, merchantId: string, environment: Environment, id: string) {
  const row = await resolveMember(db, merchantId, environment, id);
  if (!row) throw new ApiError('member_not_found');
  return row;
}

export async function suspendMember(trx: Db, merchantId: string, environment: Environment, id: string, now: Date) {
  const member = await getMember(trx, merchantId, environment, id);
  // Its hosted-screen links and step-up challenges die too: the pages already refuse a suspended
  // member, but the sandbox helper completed an open link as if the member had submitted it.
  // The tickets before the member's row: the lock order (docs/locking.md) a screen's submission
  // takes too (its ticket, then the member); the other order deadlocked with it.
  await voidMemberTickets(trx, member.id);
  await trx.updateTable('members').set({ status: 'suspended', updated_at: now }).where('id', '=', member.id).execute();
  return { id: member.id, status: 'suspended' as const };
}

/** Signs a member out everywhere: sessions and hosted-screen links issued before now are void. */
export async function revokeSessions(trx: Db, merchantId: string, environment: Environment, externalId: string, now: Date) {
  // The reference accepts only the external id here; the internal form is refused like an unknown member.
  if (hasMemberIdForm(externalId)) throw new ApiError('member_not_found');
  const row = await trx.selectFrom('members').select('id')
    .where('merchant_id', '=', merchantId)
    .where('environment', '=', environment)
    .where('external_member_id', '=', externalId)
    .executeTakeFirst();
  if (!row) throw new ApiError('member_not_found');
  // Hosted-screen links and step-up challenges die with the sessions (extensions 9), voided
  // before the member's row is changed: the lock order of docs/locking.md (ticket, then member).
  await voidMemberTickets(trx, row.id);
  await trx.updateTable('members').set({ sessions_revoked_at: now, updated_at: now }).where('id', '=', row.id).execute();
  return { id: externalId, revoked: true as const };
}
