/** Reads and writes of card replacements (the request, its reads, the executor's steps and lease). */
import { sql, type Insertable, type Kysely, type Updateable } from 'kysely';
import { dueFirst, earliestDue } from '../../../db/earliest-due.js';
import { ownedBy, inScope } from '../../../db/owned-by.js';
import type { Database } from '../../../db/schema.js';
import type { ClockScope } from '../../../platform/clock.js';
import { findOwned, type CardCaller, type Db, type Trx } from '../shared/queries.js';
import { withPrefix } from '../../../platform/ids.js';
import type { CardReplacementRow, CardReplacementsTable } from './tables.js';

export const openReplacementStatuses = ['requested', 'processing'] as const;
export const notLeased = sql<boolean>`(lease_until IS NULL OR lease_until < now())`;
const inFlightStatuses = ['requested', 'processing'] as const;

export async function inFlightReplacement(db: Db, cardId: string): Promise<CardReplacementRow | undefined> {
  return db
    .selectFrom('card_replacements')
    .selectAll()
    .where('card_id', '=', cardId)
    .where('status', 'in', [...inFlightStatuses])
    .executeTakeFirst();
}

/** A new request; undefined when the card already has one in flight (the partial unique index). */
export function insertReplacement(trx: Trx, values: Insertable<CardReplacementsTable>) {
  return (
    trx
      .insertInto('card_replacements')
      .values(values)
      // The predicate is a literal: PostgreSQL infers a partial unique index only from constants.
      .onConflict((oc) =>
        oc
          .column('card_id')
          .where(sql<boolean>`status IN ('requested', 'processing')`)
          .doNothing(),
      )
      .returningAll()
      .executeTakeFirst()
  );
}

export function findReplacement(db: Db, caller: CardCaller, id: string): Promise<CardReplacementRow | undefined> {
  return findOwned(db, 'card_replacements', caller, id);
}

/** The caller's replacements (a member's own, or all of the merchant's), optionally of one card: for `keysetPage`. */
export function replacementsQuery(db: Db, caller: CardCaller, cardId: string | undefined) {
  let q = db.selectFrom('card_replacements').selectAll().where(ownedBy(caller));
  if (cardId !== undefined) q = q.where('card_id', '=', withPrefix('crd', cardId));
  return q;
}

export function replacementById(db: Db, id: string): Promise<CardReplacementRow | undefined> {
  return db.selectFrom('card_replacements').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function cardIdOfReplacement(trx: Trx, id: string): Promise<string> {
  return (await trx.selectFrom('card_replacements').select('card_id').where('id', '=', id).executeTakeFirstOrThrow())
    .card_id;
}

export async function lockReplacement(trx: Trx, id: string): Promise<CardReplacementRow> {
  return trx.selectFrom('card_replacements').selectAll().where('id', '=', id).forUpdate().executeTakeFirstOrThrow();
}

/** The executor's lease on one open replacement (real time); undefined: leased by another run, or closed. */
export function leaseReplacement(db: Db, id: string, leaseSeconds: number) {
  return db
    .updateTable('card_replacements')
    .set({ lease_until: sql<Date>`now() + make_interval(secs => ${leaseSeconds})` as unknown as Date })
    .where('id', '=', id)
    .where('status', 'in', ['requested', 'processing'])
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', sql<Date>`now()`)]))
    .returningAll()
    .executeTakeFirst();
}

export async function releaseReplacementLease(db: Db, id: string): Promise<void> {
  await db.updateTable('card_replacements').set({ lease_until: null }).where('id', '=', id).execute();
}

/** One step of the executor recorded; answers the row. */
export function updateReplacement(trx: Trx, id: string, set: Updateable<CardReplacementsTable>) {
  return trx.updateTable('card_replacements').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** The issuer gave no usable answer: the attempt recorded, the next run set. */
export async function recordReplacementWait(trx: Trx, id: string, set: Updateable<CardReplacementsTable>) {
  await trx.updateTable('card_replacements').set(set).where('id', '=', id).execute();
}

/** The open replacements of a scope no run holds (the executor's timed process). */
function dueReplacements(db: Kysely<Database>, scope: ClockScope) {
  return db
    .selectFrom('card_replacements')
    .where(inScope(scope))
    .where('status', 'in', [...openReplacementStatuses])
    .where(notLeased);
}

export async function nextReplacementRun(db: Kysely<Database>, scope: ClockScope): Promise<Date | null> {
  return earliestDue(dueReplacements(db, scope), 'next_run_at');
}

export function dueReplacementIds(db: Kysely<Database>, scope: ClockScope, now: Date, limit: number) {
  return dueFirst(dueReplacements(db, scope).select('id'), 'next_run_at', now, limit).execute();
}

/** A replacement of the card `processing` (it ends the card itself: no expiry meanwhile). */
export function replacementUnderWay(trx: Db, cardId: string) {
  return trx
    .selectFrom('card_replacements')
    .select('id')
    .where('card_id', '=', cardId)
    .where('status', '=', 'processing')
    .executeTakeFirst();
}

/** Whether a replacement of the card is in one of `statuses` (`processing`: the executor has returned the card's
 * balance). */
/** Which of the cards have a replacement in one of `statuses` (one statement). */
export async function replacementsInFlight(
  db: Db,
  cardIds: readonly string[],
  statuses: Array<'requested' | 'processing'>,
): Promise<Set<string>> {
  if (cardIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('card_replacements')
    .select('card_id')
    .distinct()
    .where('card_id', 'in', [...new Set(cardIds)])
    .where('status', 'in', statuses)
    .execute();
  return new Set(rows.map((r) => r.card_id));
}

export async function replacementInFlight(
  db: Db,
  cardId: string,
  statuses: Array<'requested' | 'processing'>,
): Promise<boolean> {
  return (
    (await db
      .selectFrom('card_replacements')
      .select('id')
      .where('card_id', '=', cardId)
      .where('status', 'in', statuses)
      .executeTakeFirst()) !== undefined
  );
}
