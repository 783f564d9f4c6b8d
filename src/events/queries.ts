import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { scopeNowSql } from '../platform/clock.js';

/** An event's row without its time (`eventRow`). */
export type EventRow = Omit<Insertable<Database['events']>, 'created_at'>;

/** The outbox's statement (events/outbox.ts). */

/** Inserts an event's row, its time the merchant's time (a sandbox merchant's own clock). */
export async function insertEvent(trx: Transaction<Database> | Kysely<Database>, row: EventRow): Promise<void> {
  await trx
    .insertInto('events')
    // The merchant's time (a sandbox merchant's own clock): the envelope's created_at.
    .values({ ...row, created_at: scopeNowSql(row.merchant_id, row.environment) as unknown as Date })
    .execute();
}
