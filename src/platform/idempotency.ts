import { sql, type Kysely, type Transaction } from 'kysely';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../db/schema.js';
import { ApiError } from './errors.js';
import { sha256Hex } from './ids.js';

export const idempotencyWindowHours = 24;
const keyShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isKeyShape(key: string): boolean {
  return keyShape.test(key);
}

/** Bodies are compared by content, not by bytes: key order and white space do not make another body. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function requestHash(rawBody: Buffer | undefined, parsed: unknown): string {
  if (!rawBody || rawBody.length === 0) return sha256Hex('');
  return sha256Hex(parsed === undefined ? rawBody : canonicalJson(parsed));
}

export interface StoredResult {
  endpoint: string;
  request_hash: string;
  status_code: number;
  response_body: string;
  created_at: Date;
}

type Db = Kysely<Database> | Transaction<Database>;

async function findFresh(db: Db, merchantId: string, environment: string, key: string): Promise<StoredResult | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .select(['endpoint', 'request_hash', 'status_code', 'response_body', 'created_at'])
    .where('merchant_id', '=', merchantId)
    .where('environment', '=', environment as 'sandbox')
    .where('key', '=', key)
    .where('created_at', '>', sql<Date>`now() - make_interval(hours => ${idempotencyWindowHours})`)
    .executeTakeFirst();
}

export class ReplaySignal {
  constructor(readonly stored: StoredResult) {}
}

/** Throws for a key reused with another body or endpoint; answers whether a stored result exists. */
function matchStored(req: FastifyRequest, stored: StoredResult): ReplaySignal {
  const idem = req.idempotency!;
  if (stored.endpoint !== idem.endpoint || stored.request_hash !== idem.requestHash) {
    idem.noStore = true;
    throw new ApiError('idempotency_key_reused');
  }
  idem.settled = true;
  return new ReplaySignal(stored);
}

export function sendReplay(reply: FastifyReply, stored: StoredResult): FastifyReply {
  return reply
    .code(stored.status_code)
    .header('x-idempotent-replay', 'true')
    .header('content-type', 'application/json; charset=utf-8')
    .send(stored.response_body);
}

/** Fast path before the handler: replay a finished result without opening a transaction. */
export async function beginIdempotency(db: Kysely<Database>, req: FastifyRequest): Promise<ReplaySignal | undefined> {
  const idem = req.idempotency!;
  const stored = await findFresh(db, req.auth!.merchantId, req.auth!.environment, idem.key);
  return stored ? matchStored(req, stored) : undefined;
}

async function store(db: Db, req: FastifyRequest, statusCode: number, body: string): Promise<void> {
  const idem = req.idempotency!;
  const values = {
    merchant_id: req.auth!.merchantId,
    environment: req.auth!.environment,
    key: idem.key,
    endpoint: idem.endpoint,
    request_hash: idem.requestHash,
    status_code: statusCode,
    response_body: body,
  };
  // A row older than the window is a new key: it is overwritten, never replayed.
  await db
    .insertInto('idempotency_keys')
    .values(values)
    .onConflict((oc) =>
      oc.columns(['merchant_id', 'environment', 'key']).doUpdateSet({ ...values, created_at: sql<Date>`now()` })
        .where('idempotency_keys.created_at', '<=', sql<Date>`now() - make_interval(hours => ${idempotencyWindowHours})`),
    )
    .execute();
  idem.settled = true;
}

/** Stores a result that did not come through executeWrite (validation errors, non-transactional handlers). */
export async function storeAfterResponse(db: Kysely<Database>, req: FastifyRequest, statusCode: number, body: string): Promise<void> {
  const idem = req.idempotency;
  if (!idem || idem.settled || idem.noStore || !isStorableStatus(statusCode)) return;
  await store(db, req, statusCode, body);
}

/** 5xx answers are not results: the reference says to retry them with the same key. */
export function isStorableStatus(statusCode: number): boolean {
  return statusCode < 500 && statusCode !== 429 && statusCode !== 401;
}

export interface WriteResult<T> {
  status: number;
  body: T;
}

export function errorBodyFor(err: ApiError, req: FastifyRequest): string {
  return JSON.stringify(err.body(req.id));
}

/**
 * Runs a write in one transaction together with its idempotency record. With a key, a
 * transaction-scoped advisory lock on the key makes a parallel request with the same key answer
 * `idempotency_in_progress` (on PostgreSQL) or wait and replay (embedded, one connection); the
 * effect sits behind a savepoint so that a business refusal is stored as the key's result while
 * the effect is undone. A crash before COMMIT leaves nothing: the key can simply be retried.
 */
export async function executeWrite<T>(
  db: Kysely<Database>,
  req: FastifyRequest,
  reply: FastifyReply,
  effect: (trx: Transaction<Database>) => Promise<WriteResult<T>>,
): Promise<FastifyReply> {
  const idem = req.idempotency;
  if (!idem) {
    const result = await db.transaction().execute(effect);
    return reply.code(result.status).send(result.body);
  }
  const auth = req.auth!;
  let refusal: ApiError | undefined;
  const outcome = await db.transaction().execute(async (trx) => {
    const lockKey = `${auth.merchantId}|${auth.environment}|${idem.key}`;
    const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(hashtextextended(${lockKey}, 0)) AS locked`.execute(trx);
    if (!rows[0]!.locked) {
      idem.noStore = true;
      throw new ApiError('idempotency_in_progress');
    }
    const stored = await findFresh(trx, auth.merchantId, auth.environment, idem.key);
    if (stored) return matchStored(req, stored);
    await sql`SAVEPOINT idempotent_effect`.execute(trx);
    try {
      const result = await effect(trx);
      const body = JSON.stringify(result.body);
      await store(trx, req, result.status, body);
      return { status: result.status, body };
    } catch (err) {
      if (!(err instanceof ApiError) || !isStorableStatus(err.status)) throw err;
      await sql`ROLLBACK TO SAVEPOINT idempotent_effect`.execute(trx);
      await store(trx, req, err.status, errorBodyFor(err, req));
      refusal = err;
      return undefined;
    }
  });
  if (refusal) throw refusal;
  if (outcome instanceof ReplaySignal) return sendReplay(reply, outcome.stored);
  return reply.code(outcome!.status).header('content-type', 'application/json; charset=utf-8').send(outcome!.body);
}

export async function purgeExpiredKeys(db: Kysely<Database>): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('created_at', '<=', sql<Date>`now() - make_interval(hours => ${idempotencyWindowHours})`).execute();
}
