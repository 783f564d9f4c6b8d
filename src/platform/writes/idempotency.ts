// Over 300 lines: the idempotency record of a key from lock to replay, one job (see the note below).
import type { Kysely, Transaction } from 'kysely';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { Database, Db } from '../../db/schema.js';
import { ApiError } from '../errors.js';
import { SameKeyRefusal, afterRefusal } from './same-key-refusal.js';
import type { IdempotencyContext } from '../http/request-context.js';
import { withConflictRetry } from './conflict-retry.js';
import {
  deleteExpiredKeys,
  deleteOwnClaim,
  findFreshKey,
  replaceOwnClaim,
  rollbackEffect,
  savepointEffect,
  tryKeyLock,
  upsertKeyRecord,
  type OwnClaim,
  type StoredResult,
} from '../queries/idempotency.js';

/*
 * Over 300 lines on purpose: one job, the idempotency record of a key from lock to replay. The
 * claim mode (`claimWrite`) is that record's third state (between absent and finished) and shares
 * the lock, the match and the store with `executeWrite`; split apart, the two halves would
 * import each other.
 */

export const idempotencyWindowHours = 24;

const findFresh = (db: Db, merchantId: string, environment: string, key: string) =>
  findFreshKey(db, merchantId, environment, key, idempotencyWindowHours);

/**
 * A transaction for a write without a key: a `SameKeyRefusal` thrown by the effect rolls it back,
 * then the refusal's own record commits in a transaction of its own.
 */
async function transactionOrRefusal<T>(
  db: Kysely<Database>,
  req: FastifyRequest,
  effect: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  try {
    return await requestTransaction(db, req, effect);
  } catch (err) {
    if (err instanceof SameKeyRefusal) {
      await requestTransaction(db, req, (trx) => err.persist(trx));
      await err.afterCommit();
    }
    throw err;
  }
}

/**
 * One whole transaction of a request, run again when PostgreSQL ended it in a deadlock or a
 * serialization failure (`withConflictRetry`, docs/locking.md): the key's lock and record are
 * inside it, so a rolled-back attempt left nothing, and the request's record flags are as before
 * it. A retry is logged: it means some write path took its locks out of the documented order.
 */
export function requestTransaction<T>(
  db: Kysely<Database>,
  req: FastifyRequest,
  effect: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  const idem = req.idempotency;
  const flags = idem && { settled: idem.settled, noStore: idem.noStore };
  return withConflictRetry(() => db.transaction().execute(effect), {
    beforeAttempt: () => {
      if (idem && flags) Object.assign(idem, flags);
    },
    onRetry: (info) =>
      req.log.warn(info, 'transaction ended by PostgreSQL (deadlock or serialization failure): run again'),
  });
}

export class ReplaySignal {
  constructor(readonly stored: StoredResult) {}
}

/**
 * A record with status 0 is a claim, not a result: a write whose effect commits before an
 * outside call (`claimWrite`) holds its key while the call runs. The body names the holder and
 * how long the claim lasts; after that a holder that stopped (a crash) is presumed gone.
 */
export const claimStatus = 0;

/**
 * The record a `SameKeyRefusal` leaves: a claim that has already lapsed. It holds the endpoint
 * and the body's hash (another body or endpoint with the key: `idempotency_key_reused`) but no
 * result, so the same request with the key runs anew and replaces it.
 */
export const reservation = JSON.stringify({ in_progress: 'retry_with_same_key', lease_until_ms: 0 });

interface Claim {
  in_progress: string;
  lease_until_ms: number;
}

function claimOf(stored: StoredResult): Claim | undefined {
  if (stored.status_code !== claimStatus) return undefined;
  try {
    const claim = JSON.parse(stored.response_body) as Claim;
    return typeof claim.lease_until_ms === 'number' ? claim : { in_progress: '', lease_until_ms: 0 };
  } catch {
    return { in_progress: '', lease_until_ms: 0 };
  }
}

/** The claim this request holds (the exact body written), kept apart from the request's other state. */
const heldClaims = new WeakMap<IdempotencyContext, string>();

/**
 * A claim's body for a request that holds its key for `leaseMs` (a write whose answer comes after
 * a provider call): what `claimWrite` and a claimed command's batch (write-batch.ts) store.
 */
export function newClaim(idem: IdempotencyContext, leaseMs: number): string {
  return JSON.stringify({ in_progress: randomUUID(), lease_until_ms: idem.now() + leaseMs } satisfies Claim);
}

/** The request now holds `claim` on its key: its answer replaces it (`storeAfterResponse`). */
export function holdClaim(idem: IdempotencyContext, claim: string): void {
  heldClaims.set(idem, claim);
}

/** The record, only while it is still the claim `claim` (a successor may have taken over a lapsed one). */
const ownClaim = (req: FastifyRequest, claim: string): OwnClaim => ({
  merchantId: req.auth!.merchantId,
  environment: req.auth!.environment,
  key: req.idempotency!.key,
  claimStatus,
  claim,
});

/**
 * What a found record means for this request: a replay of a finished result, 409
 * `idempotency_key_reused` (another body or endpoint), 409 `idempotency_in_progress` (a live
 * claim), or undefined for a lapsed claim (the caller may take the key over).
 */
export function matchStored(req: FastifyRequest, stored: StoredResult): ReplaySignal | undefined {
  const idem = req.idempotency!;
  if (stored.endpoint !== idem.endpoint || stored.request_hash !== idem.requestHash) {
    idem.noStore = true;
    throw new ApiError('idempotency_key_reused');
  }
  const claim = claimOf(stored);
  if (claim) {
    if (claim.lease_until_ms > idem.now()) {
      idem.noStore = true;
      throw new ApiError('idempotency_in_progress');
    }
    return undefined;
  }
  idem.settled = true;
  return new ReplaySignal(stored);
}

/**
 * The first result, byte for byte. A replayed error keeps the first request's `request_id`, and
 * its `X-Request-Id` says the same (the envelope's id and the header never differ); the replaying
 * request's own id stays in its log line.
 */
export function sendReplay(reply: FastifyReply, stored: StoredResult): FastifyReply {
  if (stored.status_code >= 400) {
    const requestId = storedRequestId(stored.response_body);
    if (requestId !== undefined) void reply.header('x-request-id', requestId);
  }
  return reply
    .code(stored.status_code)
    .header('x-idempotent-replay', 'true')
    .header('content-type', 'application/json; charset=utf-8')
    .send(stored.response_body);
}

function storedRequestId(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { request_id?: unknown };
    return typeof parsed.request_id === 'string' ? parsed.request_id : undefined;
  } catch {
    return undefined;
  }
}

/** Fast path before the handler: replay a finished result without opening a transaction. */
export async function beginIdempotency(db: Kysely<Database>, req: FastifyRequest): Promise<ReplaySignal | undefined> {
  const idem = req.idempotency!;
  const stored = await findFresh(db, req.auth!.merchantId, req.auth!.environment, idem.key);
  return stored ? matchStored(req, stored) : undefined;
}

async function writeRecord(
  db: Db,
  req: FastifyRequest,
  statusCode: number,
  body: string,
  replaceLapsedClaim: boolean,
): Promise<void> {
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
  // A row older than the window is a new key: it is overwritten, never replayed. A lapsed claim
  // is overwritten only by its successor, which holds the key's lock.
  await upsertKeyRecord(db, values, idempotencyWindowHours, replaceLapsedClaim ? claimStatus : undefined);
}

async function store(
  db: Db,
  req: FastifyRequest,
  statusCode: number,
  body: string,
  replaceLapsedClaim = false,
): Promise<void> {
  await writeRecord(db, req, statusCode, body, replaceLapsedClaim);
  req.idempotency!.settled = true;
}

/**
 * Runs when the answer is sent: stores a result that did not come through executeWrite
 * (validation errors, non-transactional handlers), or settles this request's claim: the answer
 * replaces it when it is a result, else (5xx, an error about the key) the claim is released so
 * that a retry with the same key goes on where this one stopped.
 */
export async function storeAfterResponse(
  db: Kysely<Database>,
  req: FastifyRequest,
  statusCode: number,
  body: string,
): Promise<void> {
  const idem = req.idempotency;
  if (!idem) return;
  const claim = heldClaims.get(idem);
  if (claim !== undefined) {
    heldClaims.delete(idem);
    const own = ownClaim(req, claim);
    if (!idem.noStore && isStorableStatus(statusCode)) {
      await replaceOwnClaim(db, own, statusCode, body);
      idem.settled = true;
    } else {
      await deleteOwnClaim(db, own);
    }
    return;
  }
  if (idem.settled || idem.noStore || !isStorableStatus(statusCode)) return;
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
 * Inside a write's transaction: takes the key's transaction-scoped advisory lock (held by a
 * parallel request with the same key: 409 `idempotency_in_progress` at once on PostgreSQL; on the
 * embedded database, one connection, transactions simply take turns), then reads the record.
 * Answers a replay, or whether a lapsed claim is there to be replaced.
 */
async function lockKey(
  trx: Transaction<Database>,
  req: FastifyRequest,
): Promise<ReplaySignal | { lapsedClaim: boolean }> {
  const idem = req.idempotency!;
  const auth = req.auth!;
  const lockName = `${auth.merchantId}|${auth.environment}|${idem.key}`;
  if (!(await tryKeyLock(trx, lockName))) {
    idem.noStore = true;
    throw new ApiError('idempotency_in_progress');
  }
  const stored = await findFresh(trx, auth.merchantId, auth.environment, idem.key);
  if (!stored) return { lapsedClaim: false };
  return matchStored(req, stored) ?? { lapsedClaim: true };
}

/**
 * Runs the effect behind a savepoint: a business refusal (an `ApiError` below 500) is undone and
 * stored as the key's result, then thrown. A `SameKeyRefusal` is undone too, but its own record
 * is written in the effect's place and the key keeps only a reservation (`reservation`).
 * `onDone` writes the record that goes with success.
 */
async function effectOrRefusal<T>(
  trx: Transaction<Database>,
  req: FastifyRequest,
  lapsedClaim: boolean,
  effect: (trx: Transaction<Database>) => Promise<T>,
  onDone: (value: T) => Promise<void>,
): Promise<{ value: T } | { refusal: ApiError }> {
  await savepointEffect(trx);
  try {
    const value = await effect(trx);
    await onDone(value);
    return { value };
  } catch (err) {
    if (!(err instanceof ApiError) || !isStorableStatus(err.status)) throw err;
    await rollbackEffect(trx);
    if (err instanceof SameKeyRefusal) {
      await err.persist(trx);
      // Any record found here is a lapsed claim or an earlier reservation (a result would have been replayed).
      await store(trx, req, claimStatus, reservation, true);
      return { refusal: err };
    }
    await store(trx, req, err.status, errorBodyFor(err, req), lapsedClaim);
    return { refusal: err };
  }
}

/**
 * Runs a write in one transaction together with its idempotency record: the key's lock
 * (`lockKey`), a replay of a finished result, or the effect (state change, ledger entry, event
 * row) and its result, serialized by the route's response schema, committed together. A crash before COMMIT leaves
 * nothing: the key can
 * simply be retried.
 */
export async function executeWrite<T>(
  db: Kysely<Database>,
  req: FastifyRequest,
  reply: FastifyReply,
  effect: (trx: Transaction<Database>) => Promise<WriteResult<T>>,
): Promise<FastifyReply> {
  if (!req.idempotency) {
    const result = await transactionOrRefusal(db, req, effect);
    return reply.code(result.status).send(result.body);
  }
  const outcome = await requestTransaction(db, req, async (trx) => {
    const found = await lockKey(trx, req);
    if (found instanceof ReplaySignal) return found;
    let body = '';
    const done = await effectOrRefusal(trx, req, found.lapsedClaim, effect, async (result) => {
      // Through the route's response schema for this status, before it is stored: the replay is
      // the same bytes as the first answer.
      body = reply.code(result.status).serialize(result.body) as string;
      await store(trx, req, result.status, body, found.lapsedClaim);
    });
    return 'refusal' in done ? done : { status: done.value.status, body };
  });
  if (outcome instanceof ReplaySignal) return sendReplay(reply, outcome.stored);
  if ('refusal' in outcome) throw await afterRefusal(outcome.refusal);
  return reply.code(outcome.status).header('content-type', 'application/json; charset=utf-8').send(outcome.body);
}

/**
 * For a write whose effect must commit before a call outside the database (a provider): the
 * effect and a claim on the key commit in one transaction (under the key's lock, like
 * `executeWrite`), the caller then makes its call and answers. Until the answer is sent, a
 * request with the same key gets 409 `idempotency_in_progress`; afterwards the answer replaces
 * the claim and is replayed (`storeAfterResponse`), or, for a 5xx, the claim is released so that
 * a retry with the key goes on where this request stopped. A claim whose holder stopped (a crash)
 * lapses after `leaseMs`; the next request with the key takes it over.
 *
 * Answers the effect's value, or a replay of the key's finished result for the caller to send.
 */
export async function claimWrite<T>(
  db: Kysely<Database>,
  req: FastifyRequest,
  leaseMs: number,
  effect: (trx: Transaction<Database>) => Promise<T>,
): Promise<{ value: T } | { replay: StoredResult }> {
  const idem = req.idempotency;
  if (!idem) return { value: await transactionOrRefusal(db, req, effect) };
  const claim = newClaim(idem, leaseMs);
  const outcome = await requestTransaction(db, req, async (trx) => {
    const found = await lockKey(trx, req);
    if (found instanceof ReplaySignal) return found;
    return effectOrRefusal(trx, req, found.lapsedClaim, effect, () =>
      writeRecord(trx, req, claimStatus, claim, found.lapsedClaim),
    );
  });
  if (outcome instanceof ReplaySignal) return { replay: outcome.stored };
  if ('refusal' in outcome) throw await afterRefusal(outcome.refusal);
  heldClaims.set(idem, claim);
  return outcome;
}

export async function purgeExpiredKeys(db: Kysely<Database>): Promise<void> {
  await deleteExpiredKeys(db, idempotencyWindowHours);
}
