import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { scopeNowSql } from '../platform/clock.js';

/** An event's row without its time (`eventRow`). */
export type EventRow = Omit<Insertable<Database['events']>, 'created_at'>;

/** The outbox's statement (events/outbox.ts). */

/** Inserts an event's row, its time the merchant's time (a sandbox merchant's own clock). */
export async function insertEvent(trx: Transaction<Database> | Kysely<Database>, row: EventRow): Promise<void> {
  await insertEvents(trx, [row]);
}

/** Events in one statement, each at its merchant's time (a sandbox merchant's own clock): the envelope's created_at. */
export async function insertEvents(
  trx: Transaction<Database> | Kysely<Database>,
  rows: readonly EventRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await trx
    .insertInto('events')
    .values(
      rows.map((row) => ({ ...row, created_at: scopeNowSql(row.merchant_id, row.environment) as unknown as Date })),
    )
    .execute();
}
