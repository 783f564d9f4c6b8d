import type { Db } from '../../db/schema.js';
import { updateUserWhile } from './users.js';

/** A user's second factor: the authenticator's secret and steps, and the recovery codes. */

/** Takes a TOTP step: only a step later than the last one taken (a code works once). */
export async function takeTotpStep(db: Db, userId: string, step: number): Promise<boolean> {
  return updateUserWhile(db, userId, { totp_last_step: step }, (eb) =>
    eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', String(step))]),
  );
}

/** Keeps a sealed secret aside until a first code confirms it; not while a factor is on. */
export async function storePendingTotpSecret(db: Db, userId: string, sealed: string): Promise<void> {
  await updateUserWhile(db, userId, { totp_pending_secret: sealed }, (eb) => eb('totp_secret', 'is', null));
}

/** The secret set up becomes the factor, with the step of its first code taken. */
export async function enableTotp(db: Db, userId: string, secret: string, step: number, now: Date): Promise<void> {
  await updateUserWhile(db, userId, {
    totp_secret: secret,
    totp_pending_secret: null,
    totp_last_step: step,
    updated_at: now,
  });
}

/**
 * Turns the factor off (and drops one being set up); with `expectedSecret`, only if the factor is
 * still that one. Answers whether the row was updated.
 */
export async function clearTotp(db: Db, userId: string, now: Date, expectedSecret?: string): Promise<boolean> {
  return updateUserWhile(
    db,
    userId,
    { totp_secret: null, totp_pending_secret: null, totp_last_step: null, updated_at: now },
    expectedSecret === undefined ? undefined : (eb) => eb('totp_secret', '=', expectedSecret),
  );
}

// Recovery codes ------------------------------------------------------------------------------

/** Replaces the user's set: the old codes stop working in the same transaction. */
export async function replaceRecoveryCodes(
  db: Db,
  userId: string,
  hashes: readonly string[],
  now: Date,
): Promise<void> {
  await deleteRecoveryCodes(db, userId);
  if (hashes.length)
    await db
      .insertInto('console_recovery_codes')
      .values(hashes.map((h) => ({ user_id: userId, code_hash: h, created_at: now })))
      .execute();
}

export async function deleteRecoveryCodes(db: Db, userId: string): Promise<number> {
  const r = await db.deleteFrom('console_recovery_codes').where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Spends one unused code: a conditional update, so of two uses of one code only one wins. */
export async function spendRecoveryCode(db: Db, userId: string, codeHash: string, now: Date): Promise<boolean> {
  const r = await db
    .updateTable('console_recovery_codes')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function unusedRecoveryCodes(db: Db, userId: string): Promise<number> {
  const r = await db
    .selectFrom('console_recovery_codes')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
