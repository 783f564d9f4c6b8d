import type { Kysely, Transaction } from 'kysely';
import type { Database, Environment, Db } from '../db/schema.js';
import { verifyPassword } from './password.js';
import { findUser, type ConsoleUserRow } from './queries/users.js';
import { deleteOtherSessions } from './queries/sessions.js';
import {
  clearTotp,
  deleteRecoveryCodes,
  enableTotp,
  replaceRecoveryCodes,
  storePendingTotpSecret,
  takeTotpStep,
  unusedRecoveryCodes,
} from './queries/second-factor.js';
import type { ConsoleSession } from './rules.js';
import { matchTotp, newTotpSecret, openSecret, sealSecret } from './totp.js';
import { newRecoveryCodes, recoveryCodeHash } from './recovery.js';
import { throttledAttempt, type LoginClient } from './throttle.js';
import { audit, auditAccount } from './audit.js';

/**
 * A console user's second factor (docs/console.md, "Two-step sign-in", "Recovery codes"): the
 * authenticator's codes, turning it on and off, the recovery codes, and the checks of the
 * password and of a code that the account's forms ask for again, under the sign-in throttle.
 */

/** The password check of every form that asks again for it, under the sign-in throttle. */
export async function recheckPassword(
  db: Kysely<Database>,
  user: ConsoleUserRow,
  password: string,
  client: LoginClient,
  now: Date,
): Promise<'ok' | 'throttled' | 'wrong'> {
  return throttledAttempt(db, user.email, client, now, async () =>
    Boolean(user.password_hash && (await verifyPassword(password, user.password_hash))),
  );
}

/**
 * Whether `code` is a current code of the user's authenticator not used before; its step is taken
 * with a conditional update: of two submissions of one code, one wins.
 */
export async function takeTotpCode(
  db: Db,
  totpKey: Buffer,
  user: ConsoleUserRow,
  code: string,
  now: Date,
): Promise<boolean> {
  if (!user.totp_secret) return false;
  const lastStep = user.totp_last_step === null ? null : Number(user.totp_last_step);
  const step = matchTotp(openSecret(totpKey, user.id, user.totp_secret), code, now.getTime(), lastStep);
  return step !== undefined && (await takeTotpStep(db, user.id, step));
}

/** A new set of recovery codes for the user, replacing the old set; the codes are shown once. */
async function issueRecoveryCodes(trx: Transaction<Database>, userId: string, now: Date): Promise<string[]> {
  const codes = newRecoveryCodes();
  await replaceRecoveryCodes(
    trx,
    userId,
    codes.map((c) => recoveryCodeHash(userId, c)!),
    now,
  );
  return codes;
}

export type RecoveryCodesResult =
  { kind: 'codes'; codes: string[] } | { kind: 'throttled' } | { kind: 'wrong' } | { kind: 'no_second_factor' };

/**
 * A new set of recovery codes, after the user proves again who it is: its password, or a current
 * code of its authenticator (a recovery code does not make new ones). A wrong answer counts in
 * the sign-in throttle, so a session left open is no way to guess the password. The old set stops
 * working in the same transaction; audited.
 */
export async function regenerateRecoveryCodes(
  db: Kysely<Database>,
  totpKey: Buffer,
  session: ConsoleSession,
  proof: { password: string; code: string; client: LoginClient },
  now: Date,
): Promise<RecoveryCodesResult> {
  const user = await findUser(db, session.userId);
  if (!user?.totp_secret) return { kind: 'no_second_factor' };
  if (proof.code.trim() !== '') {
    const checked = await throttledAttempt(db, user.email, proof.client, now, () =>
      takeTotpCode(db, totpKey, user, proof.code, now),
    );
    if (checked !== 'ok') return { kind: checked };
  } else {
    const checked = await recheckPassword(db, user, proof.password, proof.client, now);
    if (checked !== 'ok') return { kind: checked };
  }
  const codes = await db.transaction().execute(async (trx) => {
    const fresh = await issueRecoveryCodes(trx, user.id, now);
    await auditAccount(
      trx,
      user,
      'user.recovery_codes_new',
      `${fresh.length} new recovery codes; the old set no longer works`,
      now,
    );
    return fresh;
  });
  return { kind: 'codes', codes };
}

export async function recoveryCodesLeft(db: Db, session: ConsoleSession): Promise<number> {
  return unusedRecoveryCodes(db, session.userId);
}

/**
 * Begins setting up the second factor: a new secret, kept aside until a first code confirms it.
 * Not while one is on (a hand-made post): replacing the factor, and getting new recovery codes
 * with it, would then need neither the password nor a code. Turn it off first (with a code).
 */
export async function startTotpSetup(db: Db, totpKey: Buffer, session: ConsoleSession): Promise<Buffer> {
  const secret = newTotpSecret();
  await storePendingTotpSecret(db, session.userId, sealSecret(totpKey, session.userId, secret));
  return secret;
}

export async function totpStatus(
  db: Db,
  totpKey: Buffer,
  session: ConsoleSession,
): Promise<{ enabled: boolean; pending: Buffer | undefined }> {
  const user = await findUser(db, session.userId);
  return {
    enabled: Boolean(user?.totp_secret),
    pending: user?.totp_pending_secret ? openSecret(totpKey, session.userId, user.totp_pending_secret) : undefined,
  };
}

/**
 * The first code of the secret being set up turns the second factor on, makes the first set of
 * recovery codes and ends every other session of the user. Answers the codes (to show once), or
 * undefined when the code was not right.
 */
export async function confirmTotpSetup(
  trx: Transaction<Database>,
  totpKey: Buffer,
  session: ConsoleSession,
  code: string,
  now: Date,
): Promise<string[] | undefined> {
  const user = await findUser(trx, session.userId);
  if (!user?.totp_pending_secret || user.totp_secret) return undefined;
  const step = matchTotp(openSecret(totpKey, user.id, user.totp_pending_secret), code, now.getTime(), null);
  if (step === undefined) return undefined;
  await enableTotp(trx, user.id, user.totp_pending_secret, step, now);
  // Sessions opened elsewhere with the password alone (perhaps by whoever made the person want a
  // second factor) end; this browser's stays.
  await deleteOtherSessions(trx, user.id, session.tokenHash);
  return issueRecoveryCodes(trx, user.id, now);
}

export type TotpDisableResult = 'disabled' | 'throttled' | 'wrong';

/**
 * Turning the second factor off takes a current code of the authenticator, under the sign-in
 * throttle (a wrong code counts as a failure; once throttled even a right code is refused). The
 * code's step is taken (`takeTotpCode`): a code already used, here or at sign-in, does not work.
 * The factor and its recovery codes go in one transaction with the audit line, and every other
 * session of the user ends.
 */
export async function disableTotp(
  db: Kysely<Database>,
  totpKey: Buffer,
  session: ConsoleSession,
  input: { code: string; client: LoginClient },
  environment: Environment,
  now: Date,
): Promise<TotpDisableResult> {
  const user = await findUser(db, session.userId);
  if (!user?.totp_secret) return 'wrong';
  const checked = await throttledAttempt(db, user.email, input.client, now, () =>
    takeTotpCode(db, totpKey, user, input.code, now),
  );
  if (checked !== 'ok') return checked;
  return db.transaction().execute(async (trx) => {
    // The factor checked is the one turned off (not one set up again meanwhile).
    if (!(await clearTotp(trx, user.id, now, user.totp_secret!))) return 'wrong';
    await deleteRecoveryCodes(trx, user.id);
    // A change of how the account signs in ends the user's other sessions, as a password change does.
    const ended = await deleteOtherSessions(trx, user.id, session.tokenHash);
    await audit(trx, session, environment, 'user.totp_disable', user.id, `${ended} other sessions ended`, now);
    return 'disabled';
  });
}
