import type { Insertable, Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** The simulated notifier's books (upstreams/notifier/simulator.ts): `upstream_sim_notifications`. */

/** A member's latest messages, newest first. */
export function selectSimNotifications(db: Kysely<Database>, memberId: string, limit: number) {
  return db
    .selectFrom('upstream_sim_notifications')
    .selectAll()
    .where('member_id', '=', memberId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function insertSimNotification(
  db: Kysely<Database>,
  message: Insertable<Database['upstream_sim_notifications']>,
): Promise<void> {
  await db.insertInto('upstream_sim_notifications').values(message).execute();
}
