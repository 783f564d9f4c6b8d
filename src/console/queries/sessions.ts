import type { Db } from '../../db/schema.js';

/** The console's sessions. */

export async function insertSession(db: Db, tokenHash: string, userId: string, now: Date): Promise<void> {
  await db
    .insertInto('console_sessions')
    .values({ token_hash: tokenHash, user_id: userId, created_at: now, last_seen_at: now })
    .execute();
}

export async function findSession(db: Db, tokenHash: string) {
  return db
    .selectFrom('console_sessions as s')
    .innerJoin('console_users as u', 'u.id', 's.user_id')
    .innerJoin('merchants as m', 'm.id', 'u.merchant_id')
    .select([
      's.token_hash',
      's.created_at',
      's.last_seen_at',
      'u.id as user_id',
      'u.email',
      'u.role',
      'u.status',
      'u.merchant_id',
      'm.name as merchant_name',
    ])
    .where('s.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export async function touchSession(db: Db, tokenHash: string, now: Date): Promise<void> {
  await db.updateTable('console_sessions').set({ last_seen_at: now }).where('token_hash', '=', tokenHash).execute();
}

export async function deleteSession(db: Db, tokenHash: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('token_hash', '=', tokenHash).execute();
}

export async function deleteUserSessions(db: Db, userId: string): Promise<number> {
  const r = await db.deleteFrom('console_sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Ends every session of the user but one (a password change keeps the browser that made it). */
export async function deleteOtherSessions(db: Db, userId: string, keepTokenHash: string): Promise<number> {
  const r = await db
    .deleteFrom('console_sessions')
    .where('user_id', '=', userId)
    .where('token_hash', '<>', keepTokenHash)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Sessions past the idle or the absolute timeout, and sign-in failures out of the window. */
export async function deleteStaleRows(
  db: Db,
  now: Date,
  limits: { idleSeconds: number; maxSeconds: number; failureWindowSeconds: number },
) {
  const before = (seconds: number) => new Date(now.getTime() - seconds * 1000);
  const sessions = await db
    .deleteFrom('console_sessions')
    .where((eb) =>
      eb.or([eb('last_seen_at', '<=', before(limits.idleSeconds)), eb('created_at', '<=', before(limits.maxSeconds))]),
    )
    .executeTakeFirst();
  const failures = await db
    .deleteFrom('console_login_failures')
    .where('failed_at', '<=', before(limits.failureWindowSeconds))
    .executeTakeFirst();
  return { sessions: Number(sessions.numDeletedRows), failures: Number(failures.numDeletedRows) };
}
