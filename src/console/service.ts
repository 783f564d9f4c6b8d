import type { Kysely, Transaction } from 'kysely';
import type { Database, Db } from '../db/schema.js';
import { ApiError, invalidFields, type ErrorCode } from '../platform/errors.js';
import { randomToken, sha256Hex } from '../platform/ids.js';
import { getMerchant } from '../modules/merchants/index.js';
import { decoyHash, hashPassword, needsRehash, verifyPassword } from './password.js';
import {
  advanceSignInGeneration,
  findUser,
  findUserByEmail,
  findUserByInvite,
  insertUser,
  listUsers,
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
import { clearTotp, deleteRecoveryCodes, spendRecoveryCode, unusedRecoveryCodes } from './queries/second-factor.js';
import {
  inviteTtlSeconds,
  needsTouch,
  normaliseEmail,
  passwordProblem,
  sessionState,
  type ConsoleSession,
  type SessionLimits,
} from './rules.js';
import { recheckPassword, takeTotpCode } from './second-factor.js';
import { auditAccount } from './audit.js';
import type { ConsoleRole } from './tables.js';
import { isRecoveryCodeShape, recoveryCodeHash } from './recovery.js';
import { clearAttempts, throttledAttempt, type LoginClient } from './throttle.js';
import { isoOrNull } from '../platform/dates.js';

export type { ConsoleSession } from './rules.js';

/**
 * The console's accounts: invites (operator API), the password set through the invite link,
 * sign-in with its throttle, sessions with idle and absolute timeouts, sign-out (one or every
 * browser); the second factor is second-factor.ts, the audit log audit.ts. Times are real time
 * (`ctx.clock.real()`), never a merchant's sandbox clock: a session is a security window, like an
 * access token.
 */

export const consoleErrors = {
  invite: ['not_found', 'invalid_fields', 'state_invalid'],
  patchUser: ['not_found'],
  resetSecondFactor: ['not_found'],
} as const satisfies Record<string, readonly ErrorCode[]>;

export function userView(u: ConsoleUserRow) {
  return {
    id: u.id,
    merchant_id: u.merchant_id,
    email: u.email,
    role: u.role,
    status: u.status,
    invite_expires_at: u.status === 'invited' ? isoOrNull(u.invite_expires_at) : null,
    two_step: Boolean(u.totp_secret),
    created_at: isoOrNull(u.created_at)!,
  };
}

/**
 * Invites a person by e-mail address (operator). A new address becomes an `invited` user; an
 * address already invited gets a fresh link (the old one stops working) and the role given. The
 * answer carries the invite path once: the operator sends it (the service sends no e-mail).
 */
export async function inviteUser(
  trx: Transaction<Database>,
  merchantId: string,
  input: { email: string; role: ConsoleRole },
  now: Date,
) {
  await getMerchant(trx, merchantId);
  const email = normaliseEmail(input.email);
  if (!email) throw invalidFields([{ key: 'email', reason: 'pattern' }]);
  const token = randomToken(32);
  const invite = {
    invite_token_hash: sha256Hex(token),
    invite_expires_at: new Date(now.getTime() + inviteTtlSeconds * 1000),
  };
  const existing = await findUserByEmail(trx, email);
  let user: ConsoleUserRow;
  if (existing) {
    if (existing.merchant_id !== merchantId)
      throw invalidFields([{ key: 'email', reason: 'taken' }], 'this address belongs to a user of another merchant');
    if (existing.status !== 'invited')
      throw new ApiError('state_invalid', 'This user has already set a password; change the role with PATCH.');
    user = await updateUser(trx, existing.id, { ...invite, role: input.role, updated_at: now });
  } else {
    user = await insertUser(trx, {
      merchantId,
      email,
      role: input.role,
      status: 'invited',
      passwordHash: null,
      inviteTokenHash: invite.invite_token_hash,
      inviteExpiresAt: invite.invite_expires_at,
      now,
    });
  }
  return { ...userView(user), invite_path: `/console/invite/${token}` };
}

export async function listConsoleUsers(db: Db, merchantId: string) {
  await getMerchant(db, merchantId);
  return { data: (await listUsers(db, merchantId)).map(userView) };
}

/** Role change or disabling (operator). Disabling ends every session of the user at once. */
export async function patchUser(
  trx: Transaction<Database>,
  id: string,
  patch: { role?: ConsoleRole; disabled?: boolean },
  now: Date,
) {
  const user = await findUser(trx, id);
  if (!user) throw new ApiError('not_found', 'No such console user.');
  const set: Parameters<typeof updateUser>[2] = { updated_at: now };
  if (patch.role) set.role = patch.role;
  if (patch.disabled === true) set.status = 'disabled';
  if (patch.disabled === false && user.status === 'disabled') set.status = user.password_hash ? 'active' : 'invited';
  const updated = await updateUser(trx, id, set);
  if (patch.disabled === true || patch.role) await deleteUserSessions(trx, id);
  return userView(updated);
}

/**
 * The operator's reset of a user's second factor (a lost phone): the TOTP secret (and one being
 * set up) and every recovery code are deleted, and every session of the user ends, so whoever
 * holds a session cannot stay in. The user signs in with the password alone and can set up a new
 * factor. Written in the audit log (as the operator). A user without a second factor is reset all
 * the same (its sessions end): the call can be repeated.
 */
export async function resetSecondFactor(trx: Transaction<Database>, id: string, now: Date) {
  const user = await findUser(trx, id);
  if (!user) throw new ApiError('not_found', 'No such console user.');
  const hadTotp = Boolean(user.totp_secret);
  await clearTotp(trx, id, now);
  const codes = await unusedRecoveryCodes(trx, id);
  await deleteRecoveryCodes(trx, id);
  const sessions = await deleteUserSessions(trx, id);
  await auditAccount(
    trx,
    { ...user, actor: 'operator' },
    'operator.second_factor_reset',
    `${user.email}: ${hadTotp ? 'two-step sign-in turned off' : 'two-step sign-in was off'}, ${codes} unused ` +
      `recovery codes deleted, ${sessions} sessions ended`,
    now,
  );
  const updated = await findUser(trx, id);
  return { ...userView(updated!), sessions_ended: sessions };
}

/** The invite behind a link, if it can still be used. */
export async function openInvite(db: Db, token: string, now: Date): Promise<ConsoleUserRow | undefined> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
  const user = await findUserByInvite(db, sha256Hex(token));
  if (!user || user.status !== 'invited' || !user.invite_expires_at || new Date(user.invite_expires_at) <= now)
    return undefined;
  return user;
}

/** Sets the password and spends the link. Answers false when the link is no longer usable. */
export async function acceptInvite(
  trx: Transaction<Database>,
  token: string,
  password: string,
  now: Date,
  passwordCost: number,
): Promise<boolean> {
  const user = await openInvite(trx, token, now);
  if (!user) return false;
  await updateUser(trx, user.id, {
    password_hash: await hashPassword(password, passwordCost),
    status: 'active',
    invite_token_hash: null,
    invite_expires_at: null,
    updated_at: now,
  });
  return true;
}

/** A user with a password already set (the demo merchant's owner at first start). */
export async function createActiveUser(
  trx: Transaction<Database>,
  merchantId: string,
  email: string,
  role: ConsoleRole,
  password: string,
  now: Date,
  passwordCost: number,
) {
  return insertUser(trx, {
    merchantId,
    email,
    role,
    status: 'active',
    passwordHash: await hashPassword(password, passwordCost),
    inviteTokenHash: null,
    inviteExpiresAt: null,
    now,
  });
}

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
