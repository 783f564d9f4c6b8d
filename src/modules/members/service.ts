import type { Selectable, Transaction } from 'kysely';
import type { Database, Environment, Db } from '../../db/schema.js';
import type { MembersTable } from './tables.js';
import { ApiError, type ErrorCode } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import {
  findByExternalId,
  hasMemberIdForm,
  insertMembers,
  markSessionsRevoked,
  markSuspended,
  resolveMember,
  type NewMember,
} from './queries.js';
import { voidMemberTickets } from '../hosted-screens/index.js';

/** The codes each function can answer (beyond invalid input): the routes declare these lists. */
export const memberErrors = {
  create: ['duplicate_resource'],
  get: ['member_not_found'],
  suspend: ['member_not_found'],
  revokeSessions: ['member_not_found'],
} as const satisfies Record<string, readonly ErrorCode[]>;

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

/** A member to create: the merchant creating it and the request's fields. */
export interface MemberPlan {
  merchantId: string;
  environment: Environment;
  externalId: string;
  profile: Record<string, unknown>;
}

const duplicateMessage = 'A member with this external_member_id already exists.';

/**
 * Creates members, of any merchants, in one statement (group commit, docs/write-model.md; a lone
 * creation is a list of one), each at its merchant's time. One answer per plan, in order: the
 * member, or its refusal with nothing of it written; an external id already taken, before or by
 * an earlier plan of the list, is `duplicate_resource`.
 */
export async function createMembers(
  trx: Transaction<Database>,
  plans: readonly MemberPlan[],
): Promise<(ReturnType<typeof memberView> | Error)[]> {
  const answers: (ReturnType<typeof memberView> | Error)[] = new Array(plans.length);
  const rows: NewMember[] = [];
  for (const [i, plan] of plans.entries()) {
    // A look-up tries the service's id first: an external id of that form could name another of the
    // merchant's members in x-on-behalf-of (or a deposit's member_id), never reaching this one.
    if (hasMemberIdForm(plan.externalId)) {
      answers[i] = new ApiError(
        'invalid_request',
        "external_member_id cannot take the service's own member id form (mem_<uuid>).",
      );
      continue;
    }
    rows.push({ ord: i, id: newId('mem'), ...plan });
  }
  const inserted = new Map((await insertMembers(trx, rows)).map((r) => [r.id, r]));
  for (const r of rows) {
    const row = inserted.get(r.id);
    answers[r.ord] = row ? memberView(row) : new ApiError('duplicate_resource', duplicateMessage);
  }
  return answers;
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
  await markSuspended(trx, member.id, now);
  return { id: member.id, status: 'suspended' as const };
}

/** Signs a member out everywhere: sessions and hosted-screen links issued before now are void. */
export async function revokeSessions(
  trx: Db,
  merchantId: string,
  environment: Environment,
  externalId: string,
  now: Date,
) {
  // The reference accepts only the external id here; the internal form is refused like an unknown member.
  if (hasMemberIdForm(externalId)) throw new ApiError('member_not_found');
  const row = await findByExternalId(trx, merchantId, environment, externalId);
  if (!row) throw new ApiError('member_not_found');
  // Hosted-screen links and step-up challenges die with the sessions (extensions 9), voided
  // before the member's row is changed: the lock order of docs/locking.md (ticket, then member).
  await voidMemberTickets(trx, row.id);
  await markSessionsRevoked(trx, row.id, now);
  return { id: externalId, revoked: true as const };
}
