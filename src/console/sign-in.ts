import type { Kysely } from 'kysely';
import type { Database, Db } from '../db/schema.js';
import { randomToken, sha256Hex } from '../platform/ids.js';
import { decoyHash, hashPassword, needsRehash, verifyPassword } from './password.js';
import {
  advanceSignInGeneration,
  findUser,
  findUserByEmail,
  rehashPassword,
  updateUser,
  type ConsoleUserRow,
} from './queries/users.js';
import {
  deleteOtherSessions,
  deleteSession,
  deleteUserSessions,
  findSession,
  insertSession,
  touchSession,
} from './queries/sessions.js';
import { spendRecoveryCode, unusedRecoveryCodes } from './queries/second-factor.js';
import {
  needsTouch,
  normaliseEmail,
  passwordProblem,
  sessionState,
  type ConsoleSession,
  type SessionLimits,
} from './rules.js';
import { recheckPassword, takeTotpCode } from './second-factor.js';
import { auditAccount } from './audit.js';
import { isRecoveryCodeShape, recoveryCodeHash } from './recovery.js';
import { clearAttempts, throttledAttempt, type LoginClient } from './throttle.js';

/**
 * Sign-in with its throttle, the second step of a two-step sign-in, the password change, sessions
 * with idle and absolute timeouts, sign-out (one or every browser). Times are real time
 * (`ctx.clock.real()`), never a merchant's sandbox clock: a session is a security window, like an
 * access token.
 */

export type SignInResult =
  | { kind: 'session'; token: string; email: string; recoveryCodesLeft?: number }
  | { kind: 'second_factor'; userId: string; generation: string }
  | { kind: 'throttled' }
  | { kind: 'wrong' }
  /** The two-step cookie was spent by a sign-in completed since it was made. */
  | { kind: 'spent' };

/**
 * Checks the throttle, then the password; a failure is counted against the address and the
 * client. An unknown address costs the same hash as a known one. On success a new session (a new
 * token: nothing of a session before sign-in carries over), or, for a user with a second factor,
 * the step that asks for its code (`completeSecondFactor`).
 */
export async function signIn(
  db: Kysely<Database>,
  input: { email: string; password: string; client: LoginClient; replacing?: string },
  now: Date,
  passwordCost: number,
): Promise<SignInResult> {
  const email = normaliseEmail(input.email) ?? input.email.trim().toLowerCase().slice(0, 254);
  let user: ConsoleUserRow | undefined;
  const outcome = await throttledAttempt(db, email, input.client, now, async () => {
    user = await findUserByEmail(db, email);
    const usable = user && user.status === 'active' && user.password_hash;
    const matches = await verifyPassword(input.password, usable ? user!.password_hash! : await decoyHash(passwordCost));
    return Boolean(usable && matches);
  });
  if (outcome !== 'ok') return { kind: outcome };
  // A hash made with weaker parameters than today's is replaced while the password is at hand.
  if (needsRehash(user!.password_hash!, passwordCost)) {
    await rehashPassword(db, user!.id, user!.password_hash!, await hashPassword(input.password, passwordCost));
  }
  if (user!.totp_secret)
    return { kind: 'second_factor', userId: user!.id, generation: String(user!.sign_in_generation) };
  const token = await startSession(db, user!, input, now);
  // No session only when the user's row went away meanwhile.
  return token === undefined ? { kind: 'wrong' } : { kind: 'session', token, email: user!.email };
}

/**
 * The current password of a signed-in user, asked again before a change of how the account signs
 * in (turning the second factor on): a session alone, perhaps taken from an unattended browser,
 * must not be able to bind the account to someone else's authenticator.
 */
export async function checkCurrentPassword(
  db: Kysely<Database>,
  session: ConsoleSession,
  password: string,
  client: LoginClient,
  now: Date,
): Promise<'ok' | 'throttled' | 'wrong'> {
  const user = await findUser(db, session.userId);
  return user ? recheckPassword(db, user, password, client, now) : 'wrong';
}

/**
 * A new session, in one transaction with what a completed sign-in changes: the throttle's
 * failures cleared, the user's sign-in generation advanced (spending every two-step cookie made
 * before; with `generation`, only if it is still that one: of two codes sent with one cookie, one
 * signs in), and the session the browser still held ended (`replacing`: its cookie is replaced
 * now, and a copy of it must not outlive it).
 */
async function startSession(
  db: Kysely<Database>,
  user: ConsoleUserRow,
  input: { client: LoginClient; replacing?: string; generation?: string },
  now: Date,
): Promise<string | undefined> {
  const token = randomToken(32);
  const started = await db.transaction().execute(async (trx) => {
    if (!(await advanceSignInGeneration(trx, user.id, input.generation))) return false;
    await clearAttempts(trx, user.email, input.client);
    await insertSession(trx, sha256Hex(token), user.id, now);
    if (input.replacing) await deleteSession(trx, sha256Hex(input.replacing));
    return true;
  });
  return started ? token : undefined;
}

/**
 * The second step of a sign-in with a second factor: the code of the user's authenticator, or one
 * of its recovery codes (told apart by their shape: 6 digits, or 16 letters and digits), under the
 * same throttle as the password: a wrong code of either kind is a failure. A TOTP code is accepted
 * once (its step is recorded); a recovery code is spent, in the transaction of its audit line.
 */
export async function completeSecondFactor(
  db: Kysely<Database>,
  totpKey: Buffer,
  input: { userId: string; generation: string; code: string; client: LoginClient; replacing?: string },
  now: Date,
): Promise<SignInResult> {
  const user = await findUser(db, input.userId);
  if (!user || user.status !== 'active' || !user.totp_secret) return { kind: 'wrong' };
  if (String(user.sign_in_generation) !== input.generation) return { kind: 'spent' };
  if (isRecoveryCodeShape(input.code)) {
    let left: number | undefined;
    const outcome = await throttledAttempt(db, user.email, input.client, now, async () => {
      left = await db.transaction().execute(async (trx) => {
        if (!(await spendRecoveryCode(trx, user.id, recoveryCodeHash(user.id, input.code)!, now))) return undefined;
        const n = await unusedRecoveryCodes(trx, user.id);
        await auditAccount(trx, user, 'user.recovery_code_use', `signed in with a recovery code; ${n} left`, now);
        return n;
      });
      return left !== undefined;
    });
    if (outcome !== 'ok') return { kind: outcome };
    const token = await startSession(db, user, input, now);
    return token === undefined
      ? { kind: 'spent' }
      : { kind: 'session', token, email: user.email, recoveryCodesLeft: left };
  }
  const outcome = await throttledAttempt(db, user.email, input.client, now, () =>
    takeTotpCode(db, totpKey, user, input.code, now),
  );
  if (outcome !== 'ok') return { kind: outcome };
  const token = await startSession(db, user, input, now);
  return token === undefined ? { kind: 'spent' } : { kind: 'session', token, email: user.email };
}

export type PasswordChangeResult =
  | { kind: 'changed'; sessionsEnded: number }
  | { kind: 'problem'; problem: string }
  | { kind: 'throttled' }
  | { kind: 'wrong' };

/**
 * A new password, after the current one (under the sign-in throttle). Every other session of the
 * user ends: whoever knew the old password and signed in elsewhere is out. This browser's session
 * stays. Audited.
 */
export async function changePassword(
  db: Kysely<Database>,
  session: ConsoleSession,
  input: { current: string; password: string; confirmation: string; client: LoginClient },
  now: Date,
  passwordCost: number,
): Promise<PasswordChangeResult> {
  const problem = passwordProblem(input.password, input.confirmation);
  if (problem) return { kind: 'problem', problem };
  const user = await findUser(db, session.userId);
  if (!user) return { kind: 'wrong' };
  const checked = await recheckPassword(db, user, input.current, input.client, now);
  if (checked !== 'ok') return { kind: checked };
  const hash = await hashPassword(input.password, passwordCost);
  const ended = await db.transaction().execute(async (trx) => {
    await updateUser(trx, user.id, { password_hash: hash, updated_at: now });
    const n = await deleteOtherSessions(trx, user.id, session.tokenHash);
    await auditAccount(trx, user, 'user.password_change', `${n} other sessions ended`, now);
    return n;
  });
  return { kind: 'changed', sessionsEnded: ended };
}

/** The session of a cookie, if alive; a session past a timeout is deleted. Touched at most once a minute
 * (`needsTouch`). */
export async function resumeSession(
  db: Db,
  token: string | undefined,
  now: Date,
  limits: SessionLimits,
): Promise<ConsoleSession | 'ended' | undefined> {
  if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
  const tokenHash = sha256Hex(token);
  const row = await findSession(db, tokenHash);
  if (!row) return undefined;
  if (row.status !== 'active' || sessionState(row, now, limits) !== 'alive') {
    await deleteSession(db, tokenHash);
    return 'ended';
  }
  if (needsTouch(row.last_seen_at, now, limits.idleSeconds)) await touchSession(db, tokenHash, now);
  return {
    tokenHash,
    userId: row.user_id,
    email: row.email,
    role: row.role,
    merchantId: row.merchant_id,
    merchantName: row.merchant_name,
  };
}

export async function signOut(db: Db, session: ConsoleSession): Promise<void> {
  await deleteSession(db, session.tokenHash);
}

/** Ends every session of the user, this one included. */
export async function signOutEverywhere(db: Db, session: ConsoleSession): Promise<number> {
  return deleteUserSessions(db, session.userId);
}
