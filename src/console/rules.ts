import type { ConsoleRole } from './tables.js';
import { passwordLengthMax, passwordLengthMin } from './password.js';

/** Pure rules of the console: who may do what, when a session ends, when sign-in is throttled. */

export const consoleRoles = ['owner', 'developer', 'viewer'] as const satisfies readonly ConsoleRole[];

/**
 * Every change the console can make, and the roles allowed to make it. Checked on the server for
 * every POST (the pages only hide what a role cannot do). A viewer changes nothing.
 */
export const permissions = {
  'keys.write': ['owner', 'developer'],
  'webhooks.write': ['owner', 'developer'],
  'sandbox.write': ['owner', 'developer'],
  'withdrawals.write': ['owner'],
  'monitors.write': ['owner', 'developer'],
  'exports.write': ['owner', 'developer'],
  'audit.read': ['owner'],
  'branding.write': ['owner'],
} as const satisfies Record<string, readonly ConsoleRole[]>;
export type Permission = keyof typeof permissions;

export function can(role: ConsoleRole, permission: Permission): boolean {
  return (permissions[permission] as readonly ConsoleRole[]).includes(role);
}

/** What a confirm page tells a role that may not make its change ("Your role (viewer) cannot change keys."). */
export function refusalFor(role: ConsoleRole, permission: Permission, what: string): string | undefined {
  return can(role, permission) ? undefined : `Your role (${role}) cannot ${what}.`;
}

export function isRole(value: unknown): value is ConsoleRole {
  return typeof value === 'string' && (consoleRoles as readonly string[]).includes(value);
}

export interface SessionLimits {
  idleSeconds: number;
  maxSeconds: number;
}

/** A session is alive while used within the idle timeout and younger than the absolute one. */
export function sessionState(
  session: { created_at: Date | string; last_seen_at: Date | string },
  now: Date,
  limits: SessionLimits,
): 'alive' | 'idle' | 'expired' {
  const t = now.getTime();
  if (t - new Date(session.created_at).getTime() >= limits.maxSeconds * 1000) return 'expired';
  if (t - new Date(session.last_seen_at).getTime() >= limits.idleSeconds * 1000) return 'idle';
  return 'alive';
}

/**
 * `last_seen_at` is written at most once a minute per session (not on every page), and at least
 * every half idle timeout, so that a session used more often than that never ends as idle
 * however short the timeout is configured.
 */
export const touchIntervalSeconds = 60;
export function needsTouch(lastSeen: Date | string, now: Date, idleSeconds: number): boolean {
  return now.getTime() - new Date(lastSeen).getTime() >= Math.min(touchIntervalSeconds, idleSeconds / 2) * 1000;
}

/**
 * The sign-in throttle (docs/console.md, "Sign-in throttle"). A stranger must not be able to lock
 * a person out, and a guesser must be bounded per account however many addresses it has, so
 * attempts are told apart by where they come from:
 *
 * - From a browser that signed in to this account before (its device cookie names the account):
 *   only that browser's own failures count, 5 in 15 minutes. Nobody else can spend this budget, so
 *   neither a guesser on the same office network nor one on the other side of the world keeps
 *   the person out of the browsers they use.
 * - From anywhere else: the client address's failures (20 in 15 minutes, whatever the accounts),
 *   and the account's failures from unknown browsers over 24 hours: 5 free, then each attempt
 *   waits 30 seconds after the last failure, doubling with every failure up to 15 minutes. A
 *   delay, never a lock: the wait is over 15 minutes after the last failure, and a guesser with
 *   any number of addresses gets about 4 tries an hour on one account.
 *
 * Past a bound every attempt is refused unchecked, right or wrong.
 */
export const loginWindowSeconds = 15 * 60;
export const accountWindowSeconds = 24 * 3600;
export const loginFailuresPerDeviceMax = 5;
export const loginFailuresPerIpMax = 20;
export const accountFailuresFree = 5;
export const accountDelaySecondsFirst = 30;
export const accountDelaySecondsMax = 15 * 60;

/** How long after its last failure an account takes the next attempt from an unknown browser. */
export function accountDelaySeconds(failures: number): number {
  if (failures < accountFailuresFree) return 0;
  return Math.min(accountDelaySecondsFirst * 2 ** Math.min(failures - accountFailuresFree, 16), accountDelaySecondsMax);
}

/** Other failures than the attempt's own, as the throttle counts them (`device` for a known browser). */
export type LoginFailures =
  | { kind: 'device'; device: number }
  | { kind: 'unknown'; byIp: number; byAccount: number; lastAccountFailure: Date | undefined };

export function loginAllowed(failures: LoginFailures, now: Date): boolean {
  if (failures.kind === 'device') return failures.device < loginFailuresPerDeviceMax;
  if (failures.byIp >= loginFailuresPerIpMax) return false;
  const delayMs = accountDelaySeconds(failures.byAccount) * 1000;
  return (
    delayMs === 0 ||
    failures.lastAccountFailure === undefined ||
    now.getTime() - failures.lastAccountFailure.getTime() >= delayMs
  );
}

/** Invite links are valid for 7 days. */
export const inviteTtlSeconds = 7 * 24 * 3600;

const emailShape = /^[^\s@<>"',;]{1,64}@[A-Za-z0-9.-]{1,190}\.[A-Za-z]{2,63}$/;
export function normaliseEmail(value: string): string | undefined {
  const email = value.trim().toLowerCase();
  return email.length <= 254 && emailShape.test(email) ? email : undefined;
}

/** The new password's problem, if any (length only: composition rules make passwords worse). */
export function passwordProblem(password: string, confirmation: string): string | undefined {
  if (password.length < passwordLengthMin) return `Use at least ${passwordLengthMin} characters.`;
  if (password.length > passwordLengthMax) return `Use at most ${passwordLengthMax} characters.`;
  if (password !== confirmation) return 'The two passwords are not the same.';
  return undefined;
}

/** One allow-list textarea split into lines as the platform reads it, with the line numbers kept. */
export function allowlistLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
}

/** A signed-in user as every console page sees it. */
export interface ConsoleSession {
  tokenHash: string;
  userId: string;
  email: string;
  role: ConsoleRole;
  merchantId: string;
  merchantName: string;
}
