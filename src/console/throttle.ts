import type { Kysely } from 'kysely';
import type { Database, Db } from '../db/schema.js';
import { sourceSubject } from '../platform/auth/rate-limit.js';
import {
  clearFailures,
  countFailures,
  releaseAttempt,
  reserveAttempt,
  type AttemptSource,
} from './queries/sign-in-failures.js';
import { accountWindowSeconds, loginAllowed, loginWindowSeconds } from './rules.js';

/** The sign-in throttle's bookkeeping around one guess (the rule itself: rules.ts#loginAllowed). */

/** The browser an attempt comes from: its address, and its device cookie as checked for an account (device.ts). */
export interface LoginClient {
  ip: string;
  deviceFor(email: string): string | undefined;
}

const sourceOf = (email: string, client: LoginClient): AttemptSource => ({
  email,
  ip: sourceSubject(client.ip),
  device: client.deviceFor(email),
});

/**
 * One guess under the sign-in throttle (rules.ts#loginAllowed: a known browser's own failures, or
 * the client address's and the account's). The attempt is written as a failure before it is
 * checked and the others are counted after, so guesses sent together cannot all read the count
 * before any of them writes it; a right answer, or a refusal by the throttle, takes its row back.
 * A client is its IPv4 address or its IPv6 /64.
 */
export async function throttledAttempt(
  db: Kysely<Database>,
  email: string,
  client: LoginClient,
  now: Date,
  check: () => Promise<boolean>,
): Promise<'ok' | 'throttled' | 'wrong'> {
  const source = sourceOf(email, client);
  const since = {
    client: new Date(now.getTime() - loginWindowSeconds * 1000),
    account: new Date(now.getTime() - accountWindowSeconds * 1000),
  };
  const attempt = await reserveAttempt(db, source, now, since.account);
  if (!loginAllowed(await countFailures(db, source, since, attempt), now)) {
    await releaseAttempt(db, attempt);
    return 'throttled';
  }
  if (!(await check())) return 'wrong';
  await releaseAttempt(db, attempt);
  return 'ok';
}

/** After a complete sign-in: the failures of this browser (or of its address on the account) are cleared. */
export async function clearAttempts(db: Db, email: string, client: LoginClient): Promise<void> {
  await clearFailures(db, sourceOf(email, client));
}
