import type { Transaction } from 'kysely';
import type { Database, Db } from '../db/schema.js';
import { ApiError, invalidFields, type ErrorCode } from '../platform/errors.js';
import { randomToken, sha256Hex } from '../platform/ids.js';
import { getMerchant } from '../modules/merchants/index.js';
import { hashPassword } from './password.js';
import {
  findUser,
  findUserByEmail,
  findUserByInvite,
  insertUser,
  listUsers,
  updateUser,
  type ConsoleUserRow,
} from './queries/users.js';
import { deleteUserSessions } from './queries/sessions.js';
import { clearTotp, deleteRecoveryCodes, unusedRecoveryCodes } from './queries/second-factor.js';
import { inviteTtlSeconds, normaliseEmail } from './rules.js';
import { auditAccount } from './audit.js';
import type { ConsoleRole } from './tables.js';
import { isoOrNull } from '../platform/dates.js';

/**
 * The console's accounts: invites (operator API), the password set through the invite link, the
 * operator's changes of a user; sign-in and sessions are sign-in.ts, the second factor
 * second-factor.ts, the audit log audit.ts. Times are real time (`ctx.clock.real()`), never a
 * merchant's sandbox clock.
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
