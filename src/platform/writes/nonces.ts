import type { Kysely } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import { nonceWindowSeconds, timestampToleranceSeconds } from '../auth/signing.js';
import { deleteExpiredNonces, insertNonce } from '../queries/nonces.js';

export interface NonceUse {
  merchantId: string;
  environment: Environment;
  nonce: string;
  /** The request's verified `x-timestamp`, Unix seconds. */
  timestampSeconds: number;
  /** The request-security clock, milliseconds. */
  nowMs: number;
}

/**
 * Until when a nonce must be kept: five minutes from first use (the reference's nonce window), and
 * at least until its timestamp has left the tolerance, so that the same signed bytes cannot be
 * sent again while the timestamp would still be accepted. Timestamps are whole seconds, accepted
 * while `floor(now) - timestamp <= tolerance`, that is until `(timestamp + tolerance + 1) s`.
 */
export function nonceExpiryMs(timestampSeconds: number, nowMs: number): number {
  return Math.max(nowMs + nonceWindowSeconds * 1000, (timestampSeconds + timestampToleranceSeconds + 1) * 1000);
}

/**
 * Consumes a nonce for the merchant and environment. True when it was fresh. An expired row is
 * taken over in the same statement, so the window is exact without waiting for cleanup.
 */
export async function consumeNonce(db: Kysely<Database>, use: NonceUse): Promise<boolean> {
  const now = new Date(use.nowMs);
  const expiresAt = new Date(nonceExpiryMs(use.timestampSeconds, use.nowMs));
  return insertNonce(db, { ...use, expiresAt }, now);
}

export async function purgeExpiredNonces(db: Kysely<Database>, nowMs: number): Promise<void> {
  await deleteExpiredNonces(db, new Date(nowMs));
}
