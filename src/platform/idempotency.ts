import { sql, type ExpressionBuilder, type Kysely, type Transaction } from 'kysely';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHmac, randomUUID } from 'node:crypto';
import type { Database } from '../db/schema.js';
import { ApiError, type ErrorCode, type ErrorExtras } from './errors.js';
import { sha256Hex } from './ids.js';
import type { IdempotencyContext } from './request-context.js';
import { GroupCommitter } from './group-commit.js';
import { nonceExpiryMs, type NonceUse } from './nonces.js';

/*
 * Over 300 lines on purpose: one job, the idempotency record of a key from lock to replay. The
 * claim mode (`claimWrite`) is that record's third state (between absent and finished) and shares
 * the lock, the match and the store with `executeWrite`; split apart, the two halves would
 * import each other.
 */

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

export function requestHash(rawBody: Buffer | undefined, parsed: unknown, secrets?: { fields: readonly string[]; key: Buffer }): string {
  if (!rawBody || rawBody.length === 0) return sha256Hex('');
  if (parsed === undefined) return sha256Hex(rawBody);
  return sha256Hex(canonicalJson(secrets ? maskSecretFields(parsed, secrets.fields, secrets.key) : parsed));
}

/**
 * A body with its secret fields (a card PIN) replaced by a keyed HMAC of their JSON: the same
 * secret still gives the same hash (a changed PIN is another body), but a stored hash cannot be
 * reversed by trying the few possible values without the service's key.
 */
export function maskSecretFields(body: unknown, fields: readonly string[], key: Buffer): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const out: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const f of fields) {
    if (Object.hasOwn(out, f)) out[f] = `hmac:${createHmac('sha256', key).update(JSON.stringify(out[f]) ?? 'null').digest('hex')}`;
  }
  return out;
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

/**
 * What a `SameKeyRefusal` does besides refusing: `persist` writes the refusal's own record (a new
 * step-up challenge) in a transaction that commits although the effect is rolled back, and
 * answers the extra fields the error body carries; `afterCommit` runs once that record is
 * committed (sending the challenge's one-time code: an outside call never runs in a transaction).
 */
export interface SameKeyWork {
  persist: (trx: Transaction<Database>) => Promise<ErrorExtras>;
  afterCommit?: () => Promise<void>;
}

/**
 * A refusal that is not the key's result (the reference's retry rules: `step_up_required` is
 * retried with the same key after the hosted screen). In a write (`executeWrite`, `claimWrite`)
 * the effect is rolled back, `work.persist` runs and commits in its place, and the key keeps a
 * reservation instead of a result: the same key with the same body runs anew, another body or
 * endpoint is still 409 `idempotency_key_reused`. See docs/idempotency.md.
 */
export class SameKeyRefusal extends ApiError {
  constructor(code: ErrorCode, message: string | undefined, private readonly work: SameKeyWork) {
    super(code, message, {});
  }

  /** Writes the refusal's own record in `trx` and completes the body's extra fields with what it answers. */
  async persist(trx: Transaction<Database>): Promise<void> {
    Object.assign(this.extras, await this.work.persist(trx));
  }

  async afterCommit(): Promise<void> {
    await this.work.afterCommit?.();
  }
}

/**
 * A transaction for a write without a key: a `SameKeyRefusal` thrown by the effect rolls it back,
 * then the refusal's own record commits in a transaction of its own.
 */
async function transactionOrRefusal<T>(db: Kysely<Database>, effect: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  try {
    return await db.transaction().execute(effect);
  } catch (err) {
    if (err instanceof SameKeyRefusal) {
      await db.transaction().execute((trx) => err.persist(trx));
      await err.afterCommit();
    }
    throw err;
  }
}

export class ReplaySignal {
  constructor(readonly stored: StoredResult) {}
}

/**
 * A record with status 0 is a claim, not a result: a write whose effect commits before an
 * outside call (`claimWrite`) holds its key while the call runs. The body names the holder and
 * how long the claim lasts; after that a holder that stopped (a crash) is presumed gone.
 */
const claimStatus = 0;

/**
 * The record a `SameKeyRefusal` leaves: a claim that has already lapsed. It holds the endpoint
 * and the body's hash (another body or endpoint with the key: `idempotency_key_reused`) but no
 * result, so the same request with the key runs anew and replaces it.
 */
const reservation = JSON.stringify({ in_progress: 'retry_with_same_key', lease_until_ms: 0 });

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

/** The record, only while it is still the claim `claim` (a successor may have taken over a lapsed one). */
const ownClaim = (req: FastifyRequest, claim: string) => (eb: ExpressionBuilder<Database, 'idempotency_keys'>) => eb.and({
  merchant_id: req.auth!.merchantId,
  environment: req.auth!.environment,
  key: req.idempotency!.key,
  status_code: claimStatus,
  response_body: claim,
});

/**
 * What a found record means for this request: a replay of a finished result, 409
 * `idempotency_key_reused` (another body or endpoint), 409 `idempotency_in_progress` (a live
 * claim), or undefined for a lapsed claim (the caller may take the key over).
 */
function matchStored(req: FastifyRequest, stored: StoredResult): ReplaySignal | undefined {
  const idem = req.idempotency!;
  if (stored.endpoint !== idem.endpoint || stored.request_hash !== idem.requestHash) {
    idem.noStore = true;
    throw new ApiError('idempotency_key_reused');
  }
  const claim = claimOf(stored);
  if (claim) {
    if (claim.lease_until_ms > Date.now()) {
      idem.noStore = true;
      throw new ApiError('idempotency_in_progress');
    }
    return undefined;
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

async function writeRecord(db: Db, req: FastifyRequest, statusCode: number, body: string, replaceLapsedClaim: boolean): Promise<void> {
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
  await db
    .insertInto('idempotency_keys')
    .values(values)
    .onConflict((oc) =>
      oc.columns(['merchant_id', 'environment', 'key']).doUpdateSet({ ...values, created_at: sql<Date>`now()` })
        .where((eb) => eb.or([
          eb('idempotency_keys.created_at', '<=', sql<Date>`now() - make_interval(hours => ${idempotencyWindowHours})`),
          ...(replaceLapsedClaim ? [eb('idempotency_keys.status_code', '=', claimStatus)] : []),
        ])),
    )
    .execute();
}

async function store(db: Db, req: FastifyRequest, statusCode: number, body: string, replaceLapsedClaim = false): Promise<void> {
  await writeRecord(db, req, statusCode, body, replaceLapsedClaim);
  req.idempotency!.settled = true;
}

/**
 * Runs when the answer is sent: stores a result that did not come through executeWrite
 * (validation errors, non-transactional handlers), or settles this request's claim: the answer
 * replaces it when it is a result, else (5xx, an error about the key) the claim is released so
 * that a retry with the same key goes on where this one stopped.
 */
export async function storeAfterResponse(db: Kysely<Database>, req: FastifyRequest, statusCode: number, body: string): Promise<void> {
  const idem = req.idempotency;
  if (!idem) return;
  const claim = heldClaims.get(idem);
  if (claim !== undefined) {
    heldClaims.delete(idem);
    const own = ownClaim(req, claim);
    if (!idem.noStore && isStorableStatus(statusCode)) {
      await db.updateTable('idempotency_keys').set({ status_code: statusCode, response_body: body }).where(own).execute();
      idem.settled = true;
    } else {
      await db.deleteFrom('idempotency_keys').where(own).execute();
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
async function lockKey(trx: Transaction<Database>, req: FastifyRequest): Promise<ReplaySignal | { lapsedClaim: boolean }> {
  const idem = req.idempotency!;
  const auth = req.auth!;
  const lockName = `${auth.merchantId}|${auth.environment}|${idem.key}`;
  const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(hashtextextended(${lockName}, 0)) AS locked`.execute(trx);
  if (!rows[0]!.locked) {
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
  trx: Transaction<Database>, req: FastifyRequest, lapsedClaim: boolean,
  effect: (trx: Transaction<Database>) => Promise<T>, onDone: (value: T) => Promise<void>,
): Promise<{ value: T } | { refusal: ApiError }> {
  await sql`SAVEPOINT idempotent_effect`.execute(trx);
  try {
    const value = await effect(trx);
    await onDone(value);
    return { value };
  } catch (err) {
    if (!(err instanceof ApiError) || !isStorableStatus(err.status)) throw err;
    await sql`ROLLBACK TO SAVEPOINT idempotent_effect`.execute(trx);
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
 * row) and its result, serialized by the route's response schema, committed together. A crash before COMMIT leaves nothing: the key can
 * simply be retried.
 */
export async function executeWrite<T>(
  db: Kysely<Database>,
  req: FastifyRequest,
  reply: FastifyReply,
  effect: (trx: Transaction<Database>) => Promise<WriteResult<T>>,
  group?: WriteGroup,
): Promise<FastifyReply> {
  if (!req.idempotency) {
    const result = await transactionOrRefusal(db, effect);
    return reply.code(result.status).send(result.body);
  }
  if (group) {
    const auth = req.auth!;
    const grouped = await group.submit(`${auth.merchantId}|${auth.environment}`, { req, reply, effect: effect as GroupedWrite['effect'] });
    return answer(reply, grouped);
  }
  const outcome = await db.transaction().execute(async (trx) => {
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

/** What a write answers: a replay, its result, a refusal stored as its result, or an error (not stored). */
export type WriteOutcome = ReplaySignal | { status: number; body: string } | { refusal: ApiError } | { error: unknown };

export interface GroupedWrite {
  req: FastifyRequest;
  reply: FastifyReply;
  effect: (trx: Transaction<Database>) => Promise<WriteResult<unknown>>;
}

/** The group committer of idempotent writes (`createWriteGroup`). */
export type WriteGroup = GroupCommitter<GroupedWrite, WriteOutcome>;

async function answer(reply: FastifyReply, outcome: WriteOutcome): Promise<FastifyReply> {
  if (outcome instanceof ReplaySignal) return sendReplay(reply, outcome.stored);
  if ('refusal' in outcome) throw await afterRefusal(outcome.refusal);
  if ('error' in outcome) throw outcome.error;
  return reply.code(outcome.status).header('content-type', 'application/json; charset=utf-8').send(outcome.body);
}

interface PendingRecord {
  merchantId: string;
  environment: string;
  key: string;
  endpoint: string;
  requestHash: string;
  statusCode: number;
  body: string;
}

/**
 * Several idempotent writes in one transaction (group commit, docs/group-commit.md), in a fixed
 * number of statements besides each write's own effect:
 * 1. one statement takes the merchant's write lock (`pg_advisory_xact_lock`: the batches of one
 *    merchant in two processes take turns instead of locking its rows in two orders) and tries
 *    each key's lock (held elsewhere: 409 `idempotency_in_progress`, as `lockKey`);
 * 2. one statement reads the keys' records (after the locks: a statement's snapshot is taken
 *    when it starts, so the read must be a statement of its own);
 * 3. each effect behind a savepoint of its own: a refusal, or any error, is undone without
 *    touching its neighbours;
 * 4. one statement stores every result and refusal.
 * Two writes of the batch with one key: the second is answered from the first's result.
 */
export async function runWriteBatch(trx: Transaction<Database>, writes: readonly GroupedWrite[]): Promise<WriteOutcome[]> {
  const outcomes: (WriteOutcome | undefined)[] = writes.map(() => undefined);
  const lockNames = writes.map(({ req }) => `${req.auth!.merchantId}|${req.auth!.environment}|${req.idempotency!.key}`);
  // One merchant a batch (group-commit.ts); the list form keeps the statement one shape.
  const merchants = [...new Set(writes.map(({ req }) => `merchant-writes|${req.auth!.merchantId}|${req.auth!.environment}`))].sort();
  const { rows: locks } = await sql<{ ord: string; locked: boolean }>`
    WITH merchants AS MATERIALIZED (
      SELECT count(pg_advisory_xact_lock(hashtextextended(m, 0))) AS n FROM unnest(${merchants}::text[]) AS m
    )
    SELECT k.ord, pg_try_advisory_xact_lock(hashtextextended(k.name, 0)) AS locked
    FROM merchants, unnest(${lockNames}::text[]) WITH ORDINALITY AS k(name, ord)
  `.execute(trx);
  const locked = new Set(locks.filter((l) => l.locked).map((l) => Number(l.ord) - 1));
  const { rows: found } = await sql<StoredResult & { merchant_id: string; environment: string; key: string }>`
    SELECT k.merchant_id, k.environment, k.key, k.endpoint, k.request_hash, k.status_code, k.response_body, k.created_at
    FROM idempotency_keys k
    JOIN unnest(${writes.map(({ req }) => req.auth!.merchantId)}::text[], ${writes.map(({ req }) => req.auth!.environment)}::text[],
                ${writes.map(({ req }) => req.idempotency!.key)}::text[]) AS w(merchant_id, environment, key)
      ON k.merchant_id = w.merchant_id AND k.environment = w.environment AND k.key = w.key
    WHERE k.created_at > now() - make_interval(hours => ${idempotencyWindowHours})
  `.execute(trx);
  const records = new Map<string, StoredResult>(found.map((r) => [`${r.merchant_id}|${r.environment}|${r.key}`, r]));
  const pending = new Map<string, PendingRecord>();

  for (const [i, write] of writes.entries()) {
    const { req, reply, effect } = write;
    const idem = req.idempotency!;
    const name = lockNames[i]!;
    try {
      if (!locked.has(i)) {
        idem.noStore = true;
        throw new ApiError('idempotency_in_progress');
      }
      const earlier = pending.get(name);
      const stored = earlier ? storedOf(earlier) : records.get(name);
      const match = stored ? matchStored(req, stored) : undefined;
      if (match) {
        outcomes[i] = match;
        continue;
      }
      let body = '';
      const record = (statusCode: number, text: string) => pending.set(name, {
        merchantId: req.auth!.merchantId, environment: req.auth!.environment, key: idem.key,
        endpoint: idem.endpoint, requestHash: idem.requestHash, statusCode, body: text,
      });
      await sql`SAVEPOINT idempotent_effect`.execute(trx);
      try {
        const result = await effect(trx);
        body = reply.code(result.status).serialize(result.body) as string;
        record(result.status, body);
        outcomes[i] = { status: result.status, body };
      } catch (err) {
        await sql`ROLLBACK TO SAVEPOINT idempotent_effect`.execute(trx);
        if (!(err instanceof ApiError) || !isStorableStatus(err.status)) throw err;
        if (err instanceof SameKeyRefusal) {
          await err.persist(trx);
          record(claimStatus, reservation);
        } else {
          record(err.status, errorBodyFor(err, req));
        }
        outcomes[i] = { refusal: err };
      }
    } catch (err) {
      outcomes[i] = { error: err };
    }
  }

  if (pending.size > 0) {
    const rows = [...pending.values()];
    // A row older than the window is a new key, and a claim found here has lapsed (a live one
    // was refused above): both are overwritten by the holder of the key's lock.
    await sql`
      INSERT INTO idempotency_keys (merchant_id, environment, key, endpoint, request_hash, status_code, response_body)
      SELECT * FROM unnest(${rows.map((r) => r.merchantId)}::text[], ${rows.map((r) => r.environment)}::text[], ${rows.map((r) => r.key)}::text[],
                           ${rows.map((r) => r.endpoint)}::text[], ${rows.map((r) => r.requestHash)}::text[],
                           ${rows.map((r) => r.statusCode)}::int[], ${rows.map((r) => r.body)}::text[])
      ON CONFLICT (merchant_id, environment, key) DO UPDATE SET
        endpoint = excluded.endpoint, request_hash = excluded.request_hash, status_code = excluded.status_code,
        response_body = excluded.response_body, created_at = now()
      WHERE idempotency_keys.created_at <= now() - make_interval(hours => ${idempotencyWindowHours})
         OR idempotency_keys.status_code = ${claimStatus}
    `.execute(trx);
    for (const w of writes) {
      const idem = w.req.idempotency!;
      if (pending.has(`${w.req.auth!.merchantId}|${w.req.auth!.environment}|${idem.key}`)) idem.settled = true;
    }
  }
  return outcomes as WriteOutcome[];
}

function storedOf(r: PendingRecord): StoredResult {
  return { endpoint: r.endpoint, request_hash: r.requestHash, status_code: r.statusCode, response_body: r.body, created_at: new Date() };
}

/**
 * The group committer of a service: batches of at most `maxBatch` writes, `maxInFlight`
 * transactions at once (leave connections for reads and for writes that are not grouped).
 */
export function createWriteGroup(db: Kysely<Database>, options: { maxBatch: number; maxInFlight: number }): WriteGroup {
  return new GroupCommitter<GroupedWrite, WriteOutcome>({
    runBatch: (writes) => db.transaction().execute((trx) => runWriteBatch(trx, writes)),
  }, options);
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
  if (!idem) return { value: await transactionOrRefusal(db, effect) };
  const claim = JSON.stringify({ in_progress: randomUUID(), lease_until_ms: Date.now() + leaseMs } satisfies Claim);
  const outcome = await db.transaction().execute(async (trx) => {
    const found = await lockKey(trx, req);
    if (found instanceof ReplaySignal) return found;
    return effectOrRefusal(trx, req, found.lapsedClaim, effect, () => writeRecord(trx, req, claimStatus, claim, found.lapsedClaim));
  });
  if (outcome instanceof ReplaySignal) return { replay: outcome.stored };
  if ('refusal' in outcome) throw await afterRefusal(outcome.refusal);
  heldClaims.set(idem, claim);
  return outcome;
}

/** Once a refusal's transaction committed: a `SameKeyRefusal`'s work after commit; answers the refusal to throw. */
async function afterRefusal(refusal: ApiError): Promise<ApiError> {
  if (refusal instanceof SameKeyRefusal) await refusal.afterCommit();
  return refusal;
}

export async function purgeExpiredKeys(db: Kysely<Database>): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('created_at', '<=', sql<Date>`now() - make_interval(hours => ${idempotencyWindowHours})`).execute();
}
