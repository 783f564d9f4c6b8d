import { sql, type Kysely, type Transaction } from 'kysely';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../db/schema.js';
import { ApiError } from './errors.js';
import { GroupCommitter, type BatchOptions } from './group-commit.js';
import { statementDeclined, type BatchStatement, type StatementRow, type StatementWrite } from './batch-statement.js';
import { nonceExpiryMs } from './nonces.js';
import { conflictStateOf, withConflictRetry } from './conflict-retry.js';
import {
  ReplaySignal, SameKeyRefusal, afterRefusal, claimStatus, executeWrite, sendReplay, errorBodyFor, idempotencyWindowHours, isStorableStatus, matchStored, reservation,
  type StoredResult, type WriteResult,
} from './idempotency.js';

/*
 * Group commit of idempotent writes (docs/group-commit.md): the same record rules as
 * `executeWrite` (idempotency.ts), for a batch of writes in one transaction.
 */

/** What a write answers: a replay, its result, a refusal stored as its result, or an error (not stored). */
export type WriteOutcome = ReplaySignal | { status: number; body: string } | { refusal: ApiError } | { error: unknown };

/**
 * A grouped route's effect for many of its writes at once: one answer per item, in order, its
 * result or its refusal (an `Error`; an `ApiError` below 500 is stored as the key's result). A
 * refused item must have written nothing, since no savepoint separates the items; throwing fails
 * the whole batch, whose writes then run one by one through their own effects (a write alone in
 * its batch is answered with the error, as a failed transaction of its own would be).
 */
export type BatchEffect = (trx: Transaction<Database>, items: readonly unknown[]) => Promise<(WriteResult<unknown> | Error)[]>;

export interface GroupedWrite {
  req: FastifyRequest;
  reply: FastifyReply;
  effect: (trx: Transaction<Database>) => Promise<WriteResult<unknown>>;
  /** The route's batch effect and this write's item for it: used unless the write runs again alone after its batch failed. */
  batch?: { effect: BatchEffect; item: unknown; statement?: StatementOf };
}

/** A write's statement, its part of it, and that part prepared (`BatchStatement.prepare`, begun when the write was submitted). */
interface StatementOf {
  run: BatchStatement;
  write: StatementWrite;
  prepared: Promise<unknown>;
}

/** The group committer of idempotent writes (`createWriteGroup`). */
export type WriteGroup = GroupCommitter<GroupedWrite, WriteOutcome>;

async function answer(reply: FastifyReply, outcome: WriteOutcome): Promise<FastifyReply> {
  if (outcome instanceof ReplaySignal) return sendReplay(reply, outcome.stored);
  if ('refusal' in outcome) throw await afterRefusal(outcome.refusal);
  if ('error' in outcome) throw outcome.error;
  return reply.code(outcome.status).header('content-type', 'application/json; charset=utf-8').send(outcome.body);
}

/**
 * `executeWrite` for a route declared `commit: 'grouped'`: a write with an idempotency key goes
 * through the service's group committer (partition: the merchant and environment); one without
 * a key runs alone as before.
 */
export async function executeGroupedWrite<T>(
  db: Kysely<Database>, group: WriteGroup, req: FastifyRequest, reply: FastifyReply,
  effect: (trx: Transaction<Database>) => Promise<WriteResult<T>>, batch?: GroupedWrite['batch'],
): Promise<FastifyReply> {
  if (!req.idempotency) return executeWrite(db, req, reply, effect);
  const auth = req.auth!;
  const write: GroupedWrite = { req, reply, effect: effect as GroupedWrite['effect'], ...(batch ? { batch } : {}) };
  return answer(reply, await group.submit(`${auth.merchantId}|${auth.environment}`, write));
}

interface PendingRecord {
  merchantId: string;
  environment: string;
  key: string;
  endpoint: string;
  requestHash: string;
  statusCode: number;
  body: string;
  /** When the result was recorded, on the request clock (the stored row takes the database's time). */
  recordedAtMs: number;
}

/**
 * Several idempotent writes in one transaction (group commit, docs/group-commit.md), in a fixed
 * number of statements besides each write's own effect:
 * 1. one statement (`mwa_claim_keys`, migration 033) takes the merchant's write lock
 *    (`pg_advisory_xact_lock`: the batches of one merchant in two processes take turns instead
 *    of locking its rows in two orders), consumes the writes' nonces (those the pipeline left
 *    to the batch: a used one is `nonce_reused`, not stored), tries each key's lock (held
 *    elsewhere: 409 `idempotency_in_progress`, as `lockKey`) and reads each locked key's record;
 * 2. the writes to run: those of one batch effect together in its own statements
 *    (`BatchEffect`), except in a fallback run; any other behind a savepoint of its own: a
 *    refusal, or any error, is undone without touching its neighbours;
 * 3. one statement stores every result and refusal.
 * Two writes of the batch with one key: the second is answered from the first's result (or runs
 * after it, when the first failed without one).
 */
export async function runWriteBatch(
  trx: Transaction<Database>, writes: readonly GroupedWrite[], options: { stats?: { together: number }; fallback?: boolean } = {},
): Promise<WriteOutcome[]> {
  const outcomes: (WriteOutcome | undefined)[] = writes.map(() => undefined);
  // One merchant a batch (group-commit.ts); the list form keeps the statement one shape.
  const merchants = [...new Set(writes.map(({ req }) => merchantLockOf(req.auth!.merchantId, req.auth!.environment)))].sort();
  const lockNames = writes.map(({ req }) => keyLockOf(req));
  const nonces = nonceArgs(writes);
  const { rows: claims } = await sql<{ ord: number; fresh: boolean | null; locked: boolean } & Partial<StoredResult>>`
    SELECT ord, fresh, locked, endpoint, request_hash, status_code, response_body, created_at
    FROM mwa_claim_keys(${merchants}::text[], ${lockNames}::text[], ${writes.map(({ req }) => req.auth!.merchantId)}::text[],
                        ${writes.map(({ req }) => req.auth!.environment)}::text[], ${writes.map(({ req }) => req.idempotency!.key)}::text[],
                        ${idempotencyWindowHours}::int, ${nonces.nonces}::text[], ${nonces.nonceExpires}::timestamptz[], ${nonces.nonceNow}::timestamptz[])
  `.execute(trx);
  const stale = new Set(claims.filter((c) => c.fresh === false).map((c) => Number(c.ord) - 1));
  const locked = new Set(claims.filter((c) => c.locked).map((c) => Number(c.ord) - 1));
  const records = new Map<string, StoredResult>(
    claims.filter((c) => c.endpoint != null).map((c) => [lockNames[Number(c.ord) - 1]!, c as StoredResult]),
  );
  const pending = new Map<string, PendingRecord>();
  const record = (i: number, statusCode: number, text: string) => {
    const { req } = writes[i]!;
    const idem = req.idempotency!;
    pending.set(lockNames[i]!, {
      merchantId: req.auth!.merchantId, environment: req.auth!.environment, key: idem.key,
      endpoint: idem.endpoint, requestHash: idem.requestHash, statusCode, body: text, recordedAtMs: idem.now(),
    });
  };
  /** A write's effect answered: its result or its refusal becomes the key's record. Its effect's writes stay. */
  const succeeded = (i: number, result: WriteResult<unknown>) => {
    const body = writes[i]!.reply.code(result.status).serialize(result.body) as string;
    record(i, result.status, body);
    outcomes[i] = { status: result.status, body };
  };
  /** A write's effect failed with nothing of it written: a stored refusal, or an error (no record). */
  const refused = async (i: number, err: unknown) => {
    if (!(err instanceof ApiError) || !isStorableStatus(err.status)) {
      outcomes[i] = { error: err };
      return;
    }
    if (err instanceof SameKeyRefusal) {
      await err.persist(trx);
      record(i, claimStatus, reservation);
    } else {
      record(i, err.status, errorBodyFor(err, writes[i]!.req));
    }
    outcomes[i] = { refusal: err };
  };

  // What each write is, before any effect: refused (its key held elsewhere, reused), replayed,
  // to run, or a later write with the key of one that runs (answered after it, below).
  const toRun = new Set<number>();
  const running = new Set<string>();
  for (const [i, { req }] of writes.entries()) {
    const name = lockNames[i]!;
    if (stale.has(i)) {
      // Run again alone after its batch failed, a write may find its nonce used by that batch
      // itself, committed though its outcome was unknown: its key's result then answers it. A
      // request that reused a nonce has no result of its own to find.
      const stored = options.fallback ? records.get(name) : undefined;
      const match = stored ? matchStored(req, stored) : undefined;
      if (match) {
        outcomes[i] = match;
        continue;
      }
      req.idempotency!.noStore = true;
      outcomes[i] = { error: new ApiError('nonce_reused') };
      continue;
    }
    if (running.has(name)) continue;
    try {
      if (!locked.has(i)) {
        req.idempotency!.noStore = true;
        throw new ApiError('idempotency_in_progress');
      }
      const stored = records.get(name);
      const match = stored ? matchStored(req, stored) : undefined;
      if (match) {
        outcomes[i] = match;
        continue;
      }
      toRun.add(i);
      running.add(name);
    } catch (err) {
      outcomes[i] = { error: err };
    }
  }

  // The writes of one batch effect together, without savepoints; one alone too (fewer statements
  // than its own effect), except when it runs again because its batch failed.
  const byEffect = new Map<BatchEffect, number[]>();
  for (const i of toRun) {
    const batch = writes[i]!.batch;
    if (batch && !options.fallback) byEffect.set(batch.effect, [...(byEffect.get(batch.effect) ?? []), i]);
  }
  for (const [effect, indexes] of byEffect) {
    const answers = await effect(trx, indexes.map((i) => writes[i]!.batch!.item));
    if (options.stats) options.stats.together += indexes.length;
    for (const [k, i] of indexes.entries()) {
      const a = answers[k];
      if (a === undefined) throw new Error('write batch: the batch effect answered fewer items than it was given');
      toRun.delete(i);
      if (a instanceof Error) await refused(i, a);
      else succeeded(i, a);
    }
  }

  for (const [i, write] of writes.entries()) {
    if (outcomes[i] !== undefined) continue;
    const { req, effect } = write;
    const name = lockNames[i]!;
    try {
      if (!toRun.has(i)) {
        // A later write with the key of one that ran before it.
        const earlier = pending.get(name);
        const stored = earlier ? storedOf(earlier) : records.get(name);
        const match = stored ? matchStored(req, stored) : undefined;
        if (match) {
          outcomes[i] = match;
          continue;
        }
      }
      await sql`SAVEPOINT idempotent_effect`.execute(trx);
      try {
        succeeded(i, await effect(trx));
      } catch (err) {
        // A deadlock ends the whole batch: its transaction keeps the locks taken before the
        // savepoint, so only running the batch again from its first statement is safe.
        if (conflictStateOf(err) !== undefined) throw err;
        await sql`ROLLBACK TO SAVEPOINT idempotent_effect`.execute(trx);
        await refused(i, err);
      }
    } catch (err) {
      if (conflictStateOf(err) !== undefined) throw err;
      outcomes[i] = { error: err };
    }
  }

  if (pending.size > 0) {
    const rows = [...pending.values()];
    if (rows.some((r) => r.merchantId !== rows[0]!.merchantId || r.environment !== rows[0]!.environment)) {
      throw new Error('write batch: a batch holds the writes of one merchant');
    }
    // A row older than the window is a new key, and a claim found here has lapsed (a live one
    // was refused above): both are overwritten by the holder of the key's lock (mwa_store_results).
    await sql`
      SELECT mwa_store_results(${rows[0]!.merchantId}, ${rows[0]!.environment}, ${rows.map((r) => r.key)}::text[],
                               ${rows.map((r) => r.endpoint)}::text[], ${rows.map((r) => r.requestHash)}::text[],
                               ${rows.map((r) => r.statusCode)}::int[], ${rows.map((r) => r.body)}::text[], ${idempotencyWindowHours}::int, ${claimStatus}::int)
    `.execute(trx);
    for (const w of writes) {
      const idem = w.req.idempotency!;
      if (pending.has(keyLockOf(w.req))) idem.settled = true;
    }
  }
  return outcomes as WriteOutcome[];
}

/** The name of a merchant's write lock, as `mwa_post_entries` (migration 031) spells it. */
const merchantLockOf = (merchantId: string, environment: string) => `merchant-writes|${merchantId}|${environment}`;

/** The name of a write's key lock (`pg_try_advisory_xact_lock`), as `lockKey` names it. */
const keyLockOf = (req: FastifyRequest) => `${req.auth!.merchantId}|${req.auth!.environment}|${req.idempotency!.key}`;

/** The nonces the pipeline left to the batch, as `mwa_claim_keys` takes them (null: none). */
function nonceArgs(writes: readonly GroupedWrite[]) {
  const uses = writes.map(({ req }) => req.idempotency!.nonce);
  return {
    nonces: uses.map((n) => n?.nonce ?? null),
    nonceExpires: uses.map((n) => (n ? new Date(nonceExpiryMs(n.timestampSeconds, n.nowMs)).toISOString() : null)),
    nonceNow: uses.map((n) => (n ? new Date(n.nowMs).toISOString() : null)),
  };
}

function storedOf(r: PendingRecord): StoredResult {
  return { endpoint: r.endpoint, request_hash: r.requestHash, status_code: r.statusCode, response_body: r.body, created_at: new Date(r.recordedAtMs) };
}

/**
 * The group committer of a service: batches of at most `maxBatch` writes, `maxInFlight`
 * transactions at once (leave connections for reads and for writes that are not grouped).
 */
export function createWriteGroup(db: Kysely<Database>, options: BatchOptions): WriteGroup {
  const inTransaction = (writes: readonly GroupedWrite[], fallback?: boolean) =>
    db.transaction().execute((trx) => runWriteBatch(trx, writes, { stats: group.stats, fallback }));
  const run = (writes: readonly GroupedWrite[], fallback?: boolean) => {
    const statement = fallback ? undefined : writes[0]!.batch?.statement?.run;
    if (statement && writes.every((w) => w.batch?.statement?.run === statement)) {
      return runStatementBatch(db, writes, statement, group.stats, inTransaction);
    }
    return inTransaction(writes, fallback);
  };
  const group: WriteGroup = new GroupCommitter<GroupedWrite, WriteOutcome>({
    runBatch: (writes, fallback) => runAgainAfterConflict(writes, () => run(writes, fallback)),
  }, options);
  return group;
}

/**
 * A batch (its one statement, or its transaction) ended by PostgreSQL in a deadlock or a
 * serialization failure is run again whole (`withConflictRetry`, docs/locking.md): the keys'
 * locks, the nonces and the records are inside it, so nothing of the failed attempt stays, and
 * each write's record flags are as before it. Without this a lone write was answered 500.
 */
function runAgainAfterConflict(writes: readonly GroupedWrite[], batch: () => Promise<WriteOutcome[]>): Promise<WriteOutcome[]> {
  const flags = writes.map(({ req }) => ({ settled: req.idempotency!.settled, noStore: req.idempotency!.noStore }));
  return withConflictRetry(batch, {
    beforeAttempt: () => writes.forEach(({ req }, i) => Object.assign(req.idempotency!, flags[i])),
    onRetry: (info) => writes[0]!.req.log.warn({ ...info, writes: writes.length }, 'write batch ended by PostgreSQL (deadlock or serialization failure): run again'),
  });
}

/** The writes of a batch through their route's `BatchStatement`, or in a transaction when it declines them. */
async function runStatementBatch(
  db: Kysely<Database>, writes: readonly GroupedWrite[], statement: BatchStatement, stats: { together: number },
  inTransaction: (writes: readonly GroupedWrite[]) => Promise<WriteOutcome[]>,
): Promise<WriteOutcome[]> {
  const { merchantId, environment } = writes[0]!.req.auth!;
  if (writes.some(({ req }) => req.auth!.merchantId !== merchantId || req.auth!.environment !== environment)) {
    throw new Error('write batch: a batch statement takes the writes of one merchant');
  }
  const lockNames = writes.map(({ req }) => keyLockOf(req));
  const prepared = await Promise.all(writes.map((w) => w.batch!.statement!.prepared));
  let rows: StatementRow[];
  try {
    rows = await statement.run(db, {
      merchantId, environment, merchantLock: merchantLockOf(merchantId, environment),
      keyLocks: lockNames, keys: writes.map(({ req }) => req.idempotency!.key),
      endpoints: writes.map(({ req }) => req.idempotency!.endpoint), requestHashes: writes.map(({ req }) => req.idempotency!.requestHash),
      ...nonceArgs(writes), windowHours: idempotencyWindowHours, claimStatus,
    }, writes.map((w) => w.batch!.statement!.write), prepared);
  } catch (err) {
    if ((err as { code?: unknown } | null)?.code !== statementDeclined) throw err;
    return inTransaction(writes);
  }
  if (rows.length !== writes.length) throw new Error('write batch: the statement answered another number of writes than it was given');
  const outcomes: WriteOutcome[] = [];
  const results = new Map<string, StoredResult>();
  for (const [i, { req }] of writes.entries()) {
    const row = rows[i]!;
    const idem = req.idempotency!;
    if (row.fresh === false) {
      idem.noStore = true;
      outcomes[i] = { error: new ApiError('nonce_reused') };
    } else if (!row.locked) {
      idem.noStore = true;
      outcomes[i] = { error: new ApiError('idempotency_in_progress') };
    } else if (row.ran) {
      stats.together++;
      idem.settled = true;
      if (row.record) results.set(lockNames[i]!, row.record);
      outcomes[i] = row.answer!;
    } else {
      // A key's record, or the result of an earlier write of the batch with its key.
      const stored = row.record ?? results.get(lockNames[i]!);
      try {
        const match = stored ? matchStored(req, stored) : undefined;
        // A claim for this request declines the statement (`statementDeclined`): none is left here.
        if (!match) throw new Error('write batch: the statement neither ran a write nor found its result');
        outcomes[i] = match;
      } catch (err) {
        outcomes[i] = { error: err };
      }
    }
  }
  return outcomes;
}

