import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { ticketIdShape, type Ticket } from './rules.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Reads a ticket by id (any state), locking it when `forUpdate` inside a transaction. */
export async function findTicket(db: Db, id: string, forUpdate = false): Promise<Ticket | undefined> {
  if (!ticketIdShape.test(id)) return undefined;
  let q = db.selectFrom('hosted_tickets').selectAll().where('id', '=', id);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** `sessions/revoke`: every ticket of the member not yet spent becomes void. */
export async function voidMemberTickets(trx: Db, memberId: string): Promise<number> {
  const rows = await trx
    .updateTable('hosted_tickets')
    .set({ status: 'void' })
    .where('member_id', '=', memberId)
    .where('status', 'in', ['open', 'completed'])
    .returning('id')
    .execute();
  return rows.length;
}
