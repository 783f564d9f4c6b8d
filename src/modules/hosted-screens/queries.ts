import type { Insertable } from 'kysely';
import type { Environment, Db } from '../../db/schema.js';
import { inScope } from '../../db/owned-by.js';
import { ticketIdShape, type Ticket } from './rules.js';
import type { HostedTicketsTable, MerchantBrandingTable, TicketPurpose } from './tables.js';

/** Reads a ticket by id (any state), locking it when `forUpdate` inside a transaction. */
export async function findTicket(db: Db, id: string, forUpdate = false): Promise<Ticket | undefined> {
  if (!ticketIdShape.test(id)) return undefined;
  let q = db.selectFrom('hosted_tickets').selectAll().where('id', '=', id);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

/**
 * `sessions/revoke`: every ticket of the member not yet spent becomes void, and so does every used
 * step-up challenge: a used one can still let the request that consumed it be retried after a lost
 * answer (step-up `resumeVerdict`), and a member signed out must authorise anew.
 */
export async function voidMemberTickets(trx: Db, memberId: string): Promise<number> {
  const rows = await trx
    .updateTable('hosted_tickets')
    .set({ status: 'void' })
    .where('member_id', '=', memberId)
    .where((eb) =>
      eb.or([
        eb('status', 'in', ['open', 'completed']),
        eb.and([eb('status', '=', 'used'), eb('purpose', '=', 'step_up')]),
      ]),
    )
    .returning('id')
    .execute();
  return rows.length;
}

/**
 * The open tickets of one purpose on one object become void: the work they were issued for is
 * over (a card supplement's work order was submitted), so none of them may act on the next one.
 * By member first (its index); spent tickets are left as they are.
 */
export async function voidSubjectTickets(
  trx: Db,
  memberId: string,
  purpose: TicketPurpose,
  subjectId: string,
): Promise<number> {
  const rows = await trx
    .updateTable('hosted_tickets')
    .set({ status: 'void' })
    .where('member_id', '=', memberId)
    .where('purpose', '=', purpose)
    .where('subject_id', '=', subjectId)
    .where('status', '=', 'open')
    .returning('id')
    .execute();
  return rows.length;
}

/** The origins allowed to frame this merchant's screens in this environment (none when never set). */
export async function frameAncestorsOf(db: Db, merchantId: string, environment: Environment): Promise<string[]> {
  const row = await db
    .selectFrom('hosted_screen_settings')
    .select('frame_ancestors')
    .where(inScope({ merchantId, environment }))
    .executeTakeFirst();
  const list: unknown =
    typeof row?.frame_ancestors === 'string' ? JSON.parse(row.frame_ancestors) : row?.frame_ancestors;
  return Array.isArray(list) ? list.filter((o): o is string => typeof o === 'string') : [];
}

export async function putFrameAncestors(
  db: Db,
  merchantId: string,
  environment: Environment,
  origins: readonly string[],
  now: Date,
): Promise<void> {
  const value = JSON.stringify(origins);
  await db
    .insertInto('hosted_screen_settings')
    .values({ merchant_id: merchantId, environment, frame_ancestors: value, updated_at: now })
    .onConflict((oc) =>
      oc.columns(['merchant_id', 'environment']).doUpdateSet({ frame_ancestors: value, updated_at: now }),
    )
    .execute();
}

/** A screen ticket is spent (`completed`, with the step-up `outcome` when there is one); false if it was no longer
 * open. */
export async function completeTicket(trx: Db, id: string, now: Date, outcome: string | null = null): Promise<boolean> {
  const row = await trx
    .updateTable('hosted_tickets')
    .set({ status: 'completed', outcome, completed_at: now })
    .where('id', '=', id)
    .where('status', '=', 'open')
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** A ticket becomes void (declined, too many wrong codes); false if it was already spent or void. */
export async function voidTicket(trx: Db, id: string, outcome: string | null = null): Promise<boolean> {
  const row = await trx
    .updateTable('hosted_tickets')
    .set({ status: 'void', ...(outcome === null ? {} : { outcome }) })
    .where('id', '=', id)
    .where('status', 'in', ['open', 'completed'])
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Writes a new ticket; answers it as written. */
export async function insertTicket(db: Db, values: Insertable<HostedTicketsTable>): Promise<Ticket> {
  return db.insertInto('hosted_tickets').values(values).returningAll().executeTakeFirstOrThrow();
}

/** The merchant's name and branding (none: nulls); undefined for an unknown merchant. */
export async function brandingOf(db: Db, merchantId: string) {
  return db
    .selectFrom('merchants')
    .leftJoin('merchant_branding as b', 'b.merchant_id', 'merchants.id')
    .select(['merchants.name', 'b.display_name', 'b.accent_color', 'b.logo_type', 'b.logo_etag', 'b.updated_at'])
    .where('merchants.id', '=', merchantId)
    .executeTakeFirst();
}

export async function logoOf(db: Db, merchantId: string) {
  return db
    .selectFrom('merchant_branding')
    .select(['logo', 'logo_type', 'logo_etag'])
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
}

/** Writes the merchant's branding row (made with no logo the first time). */
export async function upsertBranding(
  db: Db,
  merchantId: string,
  values: Omit<Insertable<MerchantBrandingTable>, 'merchant_id'>,
): Promise<void> {
  await db
    .insertInto('merchant_branding')
    .values({ merchant_id: merchantId, logo: null, logo_type: null, logo_etag: null, ...values })
    .onConflict((oc) => oc.column('merchant_id').doUpdateSet(values))
    .execute();
}
