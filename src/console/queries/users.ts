import { sql, type Expression, type ExpressionBuilder, type Selectable, type SqlBool, type UpdateObject } from 'kysely';
import type { Database, Db } from '../../db/schema.js';
import { newId } from '../../platform/ids.js';
import type { ConsoleRole, ConsoleUsersTable } from '../tables.js';

/** Reads and writes of the console's users. */

export type ConsoleUserRow = Selectable<ConsoleUsersTable>;

/** The console users whose `column` is `value`: every read of users starts here. */
function usersWhere(db: Db, column: 'id' | 'email' | 'invite_token_hash' | 'merchant_id', value: string) {
  return db.selectFrom('console_users').selectAll().where(column, '=', value);
}

export async function findUserByEmail(db: Db, email: string): Promise<ConsoleUserRow | undefined> {
  return usersWhere(db, 'email', email).executeTakeFirst();
}

export async function findUser(db: Db, id: string): Promise<ConsoleUserRow | undefined> {
  return usersWhere(db, 'id', id).executeTakeFirst();
}

export async function findUserByInvite(db: Db, tokenHash: string): Promise<ConsoleUserRow | undefined> {
  return usersWhere(db, 'invite_token_hash', tokenHash).forUpdate().executeTakeFirst();
}

export async function listUsers(db: Db, merchantId: string): Promise<ConsoleUserRow[]> {
  return usersWhere(db, 'merchant_id', merchantId).orderBy('created_at').limit(500).execute();
}

export async function insertUser(
  db: Db,
  values: {
    merchantId: string;
    email: string;
    role: ConsoleRole;
    status: 'invited' | 'active';
    passwordHash: string | null;
    inviteTokenHash: string | null;
    inviteExpiresAt: Date | null;
    now: Date;
  },
): Promise<ConsoleUserRow> {
  return db
    .insertInto('console_users')
    .values({
      id: newId('cus'),
      merchant_id: values.merchantId,
      email: values.email,
      role: values.role,
      status: values.status,
      password_hash: values.passwordHash,
      invite_token_hash: values.inviteTokenHash,
      invite_expires_at: values.inviteExpiresAt,
      created_at: values.now,
      updated_at: values.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateUser(
  db: Db,
  id: string,
  set: Partial<{
    role: ConsoleRole;
    status: 'invited' | 'active' | 'disabled';
    password_hash: string | null;
    invite_token_hash: string | null;
    invite_expires_at: Date | null;
    updated_at: Date;
  }>,
): Promise<ConsoleUserRow> {
  return db.updateTable('console_users').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/**
 * Updates one user's row, only while `guard` holds when one is given (a conditional update: of two
 * racing changes only one finds its condition). Answers whether the row was updated.
 */
export async function updateUserWhile(
  db: Db,
  id: string,
  set: UpdateObject<Database, 'console_users'>,
  guard?: (eb: ExpressionBuilder<Database, 'console_users'>) => Expression<SqlBool>,
): Promise<boolean> {
  let update = db.updateTable('console_users').set(set).where('id', '=', id);
  if (guard) update = update.where(guard);
  return Number((await update.executeTakeFirst()).numUpdatedRows) === 1;
}

/** A hash made with weaker parameters is replaced, unless the password changed meanwhile. */
export async function rehashPassword(db: Db, id: string, oldHash: string, newHash: string): Promise<void> {
  await updateUserWhile(db, id, { password_hash: newHash }, (eb) => eb('password_hash', '=', oldHash));
}

/**
 * Advances the user's sign-in generation (with `generation`, only if it is still that one).
 * Answers whether the row was updated.
 */
export async function advanceSignInGeneration(db: Db, id: string, generation: string | undefined): Promise<boolean> {
  return updateUserWhile(
    db,
    id,
    { sign_in_generation: sql`sign_in_generation + 1` },
    generation === undefined ? undefined : (eb) => eb('sign_in_generation', '=', generation),
  );
}
