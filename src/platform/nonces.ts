import { sql, type Kysely } from 'kysely';
import type { Database, Environment } from '../db/schema.js';
import type { FastifyRequest } from 'fastify';
import { nonceWindowSeconds, timestampToleranceSeconds } from './signing.js';
import { idempotencyWindowHours, matchStored, type ReplaySignal, type StoredResult } from './idempotency.js';

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
  const { rows } = await sql<{ nonce: string }>`
    INSERT INTO signature_nonces (merchant_id, environment, nonce, expires_at)
    VALUES (${use.merchantId}, ${use.environment}, ${use.nonce}, ${expiresAt})
    ON CONFLICT (merchant_id, environment, nonce) DO UPDATE SET expires_at = excluded.expires_at
      WHERE signature_nonces.expires_at <= ${now}
    RETURNING nonce
  `.execute(db);
  return rows.length === 1;
}

export async function purgeExpiredNonces(db: Kysely<Database>, nowMs = Date.now()): Promise<void> {
  await db.deleteFrom('signature_nonces').where('expires_at', '<=', new Date(nowMs)).execute();
}

/**
 * A signed idempotent request's first two reads in one statement: the nonce is consumed (as
 * `consumeNonce`) and the key's finished record, if any, read. Answers whether the nonce was
 * fresh, and a replay when the key has a result to replay.
 */
export async function consumeNonceAndBegin(db: Kysely<Database>, req: FastifyRequest, use: NonceUse): Promise<{ fresh: boolean; replay?: ReplaySignal }> {
  const idem = req.idempotency!;
  const expiresAt = new Date(nonceExpiryMs(use.timestampSeconds, use.nowMs));
  const { rows } = await sql<{ fresh: boolean } & Partial<StoredResult>>`
    WITH nonce AS (
      INSERT INTO signature_nonces (merchant_id, environment, nonce, expires_at)
      VALUES (${use.merchantId}, ${use.environment}, ${use.nonce}, ${expiresAt})
      ON CONFLICT (merchant_id, environment, nonce) DO UPDATE SET expires_at = excluded.expires_at
        WHERE signature_nonces.expires_at <= ${new Date(use.nowMs)}
      RETURNING 1
    )
    SELECT EXISTS (SELECT 1 FROM nonce) AS fresh, k.endpoint, k.request_hash, k.status_code, k.response_body, k.created_at
    FROM (SELECT 1) AS one
    LEFT JOIN idempotency_keys k ON k.merchant_id = ${req.auth!.merchantId} AND k.environment = ${req.auth!.environment} AND k.key = ${idem.key}
      AND k.created_at > now() - make_interval(hours => ${idempotencyWindowHours})
  `.execute(db);
  const row = rows[0]!;
  if (!row.fresh) return { fresh: false };
  if (row.endpoint === null || row.endpoint === undefined) return { fresh: true };
  return { fresh: true, replay: matchStored(req, row as StoredResult) };
}
