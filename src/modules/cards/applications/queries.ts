import type { Insertable, Updateable } from 'kysely';
import { resolveMember } from '../../members/index.js';
import { dueFirst, earliestDue } from '../../../db/earliest-due.js';
import { inScope } from '../../../db/owned-by.js';
import type { ClockScope } from '../../../platform/clock.js';
import { findOwned, type CardCaller, type Db } from '../shared/queries.js';
import type { CardApplicationRow, CardApplicationsTable, CardSupplementImagesTable } from './tables.js';

/** Reads and writes of card applications, their supplement images and their reconciliation. */

/** The caller's application by its id, locked when `forUpdate`. */
export function findApplication(
  db: Db,
  caller: CardCaller,
  id: string,
  forUpdate = false,
): Promise<CardApplicationRow | undefined> {
  return findOwned(db, 'card_applications', caller, id, forUpdate);
}

export function sourceAssetOfApplication(db: Db, id: string): Promise<{ source_asset: string }> {
  return db.selectFrom('card_applications').select('source_asset').where('id', '=', id).executeTakeFirstOrThrow();
}

export function insertApplication(trx: Db, values: Insertable<CardApplicationsTable>): Promise<CardApplicationRow> {
  return trx.insertInto('card_applications').values(values).returningAll().executeTakeFirstOrThrow();
}

/** A change of an application by id; answers the row. */
export function updateApplication(
  trx: Db,
  id: string,
  set: Updateable<CardApplicationsTable>,
): Promise<CardApplicationRow> {
  return trx.updateTable('card_applications').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** A change of an application by id, answering nothing. */
export async function setApplication(trx: Db, id: string, set: Updateable<CardApplicationsTable>): Promise<void> {
  await trx.updateTable('card_applications').set(set).where('id', '=', id).execute();
}

/** The member's KYC level (the `card_issuing` gate), read through the members area in the caller's transaction. */
export async function kycLevelOf(trx: Db, scope: ClockScope, memberId: string): Promise<number> {
  const member = await resolveMember(trx, scope.merchantId, scope.environment, memberId);
  if (!member) throw new Error(`no member ${memberId}`);
  return member.kyc_level;
}

export async function insertSupplementImage(trx: Db, values: Insertable<CardSupplementImagesTable>): Promise<void> {
  await trx.insertInto('card_supplement_images').values(values).execute();
}

/** Applications of the scope whose submission outcome is not known yet. */
const openApplications = (db: Db, scope: ClockScope) =>
  db
    .selectFrom('card_applications')
    .where(inScope(scope))
    .where('status', '=', 'pending')
    .where('upstream_outcome', '<>', 'accepted')
    .where('next_check_at', 'is not', null);

/** Timed process `card.application_reconcile`: the earliest next check of the scope's open applications. */
export async function nextApplicationCheck(db: Db, scope: ClockScope): Promise<Date | null> {
  return earliestDue(openApplications(db, scope), 'next_check_at');
}

/** The scope's open applications whose check is due, the longest waiting first. */
export function dueApplicationChecks(db: Db, scope: ClockScope, now: Date, limit: number) {
  return dueFirst(openApplications(db, scope).selectAll(), 'next_check_at', now, limit).execute();
}

/** The scope's applications waiting for a supplement (the supplement expiry's timed process). */
const pendingSupplements = (db: Db, scope: ClockScope) =>
  db
    .selectFrom('card_applications')
    .where(inScope(scope))
    .where('status', '=', 'need_docs')
    .where('supplement_status', '=', 'pending');

/** Timed process `card.supplement_expiry`: the earliest expiry of the scope's pending supplements. */
export async function nextSupplementExpiry(db: Db, scope: ClockScope): Promise<Date | null> {
  return earliestDue(pendingSupplements(db, scope), 'supplement_expires_at');
}

/** The scope's pending supplements expired at `now`, the earliest first. */
export function expiredSupplementIds(db: Db, scope: ClockScope, now: Date, limit: number) {
  return dueFirst(pendingSupplements(db, scope).select('id'), 'supplement_expires_at', now, limit).execute();
}
