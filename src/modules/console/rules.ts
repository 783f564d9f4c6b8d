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
  'audit.read': ['owner'],
} as const satisfies Record<string, readonly ConsoleRole[]>;
export type Permission = keyof typeof permissions;

export function can(role: ConsoleRole, permission: Permission): boolean {
  return (permissions[permission] as readonly ConsoleRole[]).includes(role);
}

export function isRole(value: unknown): value is ConsoleRole {
  return typeof value === 'string' && (consoleRoles as readonly string[]).includes(value);
}

export interface SessionLimits {
  idleSeconds: number;
  maxSeconds: number;
}

/** A session is alive while used within the idle timeout and younger than the absolute one. */
export function sessionState(session: { created_at: Date | string; last_seen_at: Date | string }, now: Date, limits: SessionLimits): 'alive' | 'idle' | 'expired' {
  const t = now.getTime();
  if (t - new Date(session.created_at).getTime() >= limits.maxSeconds * 1000) return 'expired';
  if (t - new Date(session.last_seen_at).getTime() >= limits.idleSeconds * 1000) return 'idle';
  return 'alive';
}

/** `last_seen_at` is written at most once a minute per session (not on every page). */
export const touchIntervalSeconds = 60;
export function needsTouch(lastSeen: Date | string, now: Date): boolean {
  return now.getTime() - new Date(lastSeen).getTime() >= touchIntervalSeconds * 1000;
}

/**
 * The sign-in throttle: failures in the last 15 minutes, per e-mail address (guessing one
 * account's password) and per client address (trying many accounts). Past either bound the form
 * refuses every attempt, right or wrong, until failures age out of the window.
 */
export const loginWindowSeconds = 15 * 60;
export const loginFailuresPerEmailMax = 5;
export const loginFailuresPerIpMax = 20;

export function loginAllowed(failures: { byEmail: number; byIp: number }): boolean {
  return failures.byEmail < loginFailuresPerEmailMax && failures.byIp < loginFailuresPerIpMax;
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
  return text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
}
