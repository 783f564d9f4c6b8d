// Over 300 lines: one batch's transaction, its claims, steps and records sharing one state (group-commit.md).
import type { Transaction } from 'kysely';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../db/schema.js';
import { ApiError } from '../errors.js';
import type { GroupCommitter } from './group-commit.js';
import { nonceExpiryMs } from './nonces.js';
import { conflictStateOf } from './conflict-retry.js';
import {
  ReplaySignal,
  claimStatus,
  newClaim,
  errorBodyFor,
  idempotencyWindowHours,
  isStorableStatus,
  matchStored,
  reservation,
  type WriteResult,
} from './idempotency.js';
import { SameKeyRefusal } from './same-key-refusal.js';
import { rollbackEffect, savepointEffect, type StoredResult } from '../queries/idempotency.js';
import { claimKeys, storeResults, type ResultRow } from '../queries/write-batch.js';
import { writeSteps } from './write-steps.js';

/*
 * Group commit of idempotent writes (docs/group-commit.md): the same record rules as
 * `executeWrite` (idempotency.ts), for a batch of writes in one transaction. The committer that
 * gathers the writes and answers them is write-group.ts.
 */

/**
 * What a write answers: a replay, its result, a refusal stored as its result, an error (not
 * stored), or, for a claimed write, the value its effect returned with the claim stored on its key.
 */
export type WriteOutcome =
  | ReplaySignal
  | { status: number; body: string }
  | { refusal: ApiError }
  | { error: unknown }
  | { claimed: unknown; claim: string };

/**
 * A grouped route's effect for many of its writes at once: one answer per item, in order, its
 * result or its refusal (an `Error`; an `ApiError` below 500 is stored as the key's result). A
 * refused item must have written nothing, since no savepoint separates the items; throwing fails
 * the whole batch, whose writes then run one by one through their own effects (a write alone in
 * its batch is answered with the error, as a failed transaction of its own would be).
 */
export type BatchEffect = (
  trx: Transaction<Database>,
  items: readonly unknown[],
) => Promise<(WriteResult<unknown> | Error | typeof writeAlone)[]>;

/**
 * A batch effect's answer for an item it can write only behind a savepoint of its own (it would
 * consume something, a step-up challenge, before a check that may still refuse it): the call
 * answers nothing after it and has written nothing of it or of the items after it. The batch
 * writes that item alone (its command's effect for a list of one, told so by `alone`), then gives
 * the items after it to the batch effect again: each merchant's writes keep their order.
 */
export const writeAlone: unique symbol = Symbol('writeAlone');

/** How a command's batch effect is called: `alone` when its list of one runs behind a savepoint (or as the whole
 * transaction), so that the item may write and then be refused. */
export interface WriteMode {
  alone: boolean;
}

export interface GroupedWrite {
  req: FastifyRequest;
  reply: FastifyReply;
  effect: (trx: Transaction<Database>) => Promise<WriteResult<unknown>>;
  /** The route's batch effect and this write's item for it: used unless the write runs again alone after its batch
   * failed. */
  batch?: { effect: BatchEffect; item: unknown; locksRowsFirst?: boolean };
  /**
   * A claimed write (a command with `after`, route.ts): its effect's success stores a claim on
   * the key for this long, not the result; the answer, made after the commit, replaces it.
   */
  claimLeaseMs?: number;
}

/**
 * Thrown by a batch of one write run without a savepoint (`bare`) whose effect failed: the
 * transaction holds part of the effect, so it is rolled back and the batch runs again with the
 * savepoint (write-group.ts). A lone write's normal path thus saves the savepoint's statement;
 * only its refusals pay a second transaction.
 */
export class BareEffectFailed extends Error {
  constructor() {
    super('a lone write without a savepoint failed: run its batch again with one');
  }
}

/** The group committer of idempotent writes (`createWriteGroup`). */
export type WriteGroup = GroupCommitter<GroupedWrite, WriteOutcome>;

interface PendingRecord extends ResultRow {
  /** When the result was recorded, on the request clock (the stored row takes the database's time). */
  recordedAtMs: number;
}

/**
 * Several idempotent writes in one transaction (group commit, docs/group-commit.md), in a fixed
 * number of statements besides each write's own effect:
 * 1. one statement (`mwa_claim_keys`, migration 033) takes the write lock of every merchant of
 *    the batch, in one global order (`pg_advisory_xact_lock`: batches sharing a merchant, in
 *    this process or another, take turns instead of locking its rows in two orders), consumes the writes' nonces (those
 * the pipeline left
 *    to the batch: a used one is `nonce_reused`, not stored), tries each key's lock (held
 *    elsewhere: 409 `idempotency_in_progress`, as `lockKey`) and reads each locked key's record;
 * 2. the writes to run: those of one batch effect together in its own statements
 *    (`BatchEffect`), except in a fallback run; any other behind a savepoint of its own: a
 *    refusal, or any error, is undone without touching its neighbours;
 * 3. one statement stores every result and refusal (`mwa_store_results_across`, migration 051).
 * Two writes of the batch with one key: the second is answered from the first's result (or runs
 * after it, when the first failed without one).
 */
export async function runWriteBatch(
  trx: Transaction<Database>,
  writes: readonly GroupedWrite[],
  options: {
    stats?: { together: number };
    fallback?: boolean;
    locked?: () => void;
    /** A batch of one write runs its effect without a savepoint; a failure throws `BareEffectFailed`. */
    bare?: boolean;
  } = {},
): Promise<WriteOutcome[]> {
  const outcomes: (WriteOutcome | undefined)[] = writes.map(() => undefined);
  // Every merchant's write lock, in one global order (byte order): two batches that share
  // merchants take their locks in the same order and cannot wait on each other in a cycle. Only
  // for batches of batch effects, whose writes lock no row before the money: a write run alone
  // behind a savepoint (a solo batch) locks its member or card first and the merchant's lock at its
  // posting, as every other transaction does (docs/locking.md); taken here, before its rows, it
  // waited in a cycle with a card's close holding the card and wanting the merchant's lock. A batch
  // effect that locks rows first (card top-ups: the cards) takes each merchant's lock at its postings.
  const lockMerchants = writes.every((w) => w.batch !== undefined && !w.batch.locksRowsFirst);
  const merchants = lockMerchants
    ? [...new Set(writes.map(({ req }) => merchantLockOf(req.auth!.merchantId, req.auth!.environment)))].sort((a, b) =>
        a < b ? -1 : a > b ? 1 : 0,
      )
    : [];
  const lockNames = writes.map(({ req }) => keyLockOf(req));
  const nonces = nonceArgs(writes);
  const claims = await claimKeys(trx, {
    merchantLocks: merchants,
    keyLocks: lockNames,
    merchantIds: writes.map(({ req }) => req.auth!.merchantId),
    environments: writes.map(({ req }) => req.auth!.environment),
    keys: writes.map(({ req }) => req.idempotency!.key),
    windowHours: idempotencyWindowHours,
    ...nonces,
  });
  // The merchants' write locks are held: their next batch may start and wait for them
  // (group-commit.ts). A batch that took none frees its merchants only when it ends.
  if (lockMerchants) options.locked?.();
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
      merchantId: req.auth!.merchantId,
      environment: req.auth!.environment,
      key: idem.key,
      endpoint: idem.endpoint,
      requestHash: idem.requestHash,
      statusCode,
      body: text,
      recordedAtMs: idem.now(),
    });
  };
  /** A write's effect answered: its result or its refusal becomes the key's record. Its effect's writes stay. */
  const succeeded = (i: number, result: WriteResult<unknown>) => {
    const lease = writes[i]!.claimLeaseMs;
    if (lease !== undefined) {
      const claim = newClaim(writes[i]!.req.idempotency!, lease);
      record(i, claimStatus, claim);
      outcomes[i] = { claimed: result.body, claim };
      return;
    }
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

  /** A write run alone behind its savepoint, or answered from the result of an earlier write with its key. */
  const runAlone = async (i: number) => {
    const { req, effect } = writes[i]!;
    const name = lockNames[i]!;
    try {
      if (!toRun.has(i)) {
        // A later write with the key of one that ran before it.
        const earlier = pending.get(name);
        const stored = earlier ? storedOf(earlier) : records.get(name);
        const match = stored ? matchStored(req, stored) : undefined;
        if (match) {
          outcomes[i] = match;
          return;
        }
      }
      const bare = options.bare && writes.length === 1;
      if (!bare) await savepointEffect(trx);
      try {
        succeeded(i, await effect(trx));
      } catch (err) {
        // A deadlock ends the whole batch: its transaction keeps the locks taken before the
        // savepoint, so only running the batch again from its first statement is safe.
        if (conflictStateOf(err) !== undefined) throw err;
        if (bare) throw new BareEffectFailed();
        await rollbackEffect(trx);
        await refused(i, err);
      }
    } catch (err) {
      if (conflictStateOf(err) !== undefined || err instanceof BareEffectFailed) throw err;
      outcomes[i] = { error: err };
    }
  };

  // The writes run in steps (write-steps.ts): the writes of one batch effect in a step run together,
  // without savepoints (a lone one too: fewer statements than its own effect, except in a fallback
  // run), the others one by one.
  const alone = Symbol('alone');
  const kindOf = (i: number): BatchEffect | typeof alone => {
    const batch = writes[i]!.batch;
    return toRun.has(i) && batch && !options.fallback ? batch.effect : alone;
  };
  const waiting = [...writes.keys()].filter((i) => outcomes[i] === undefined);
  const merchantOf = (i: number) => `${writes[i]!.req.auth!.merchantId}|${writes[i]!.req.auth!.environment}`;
  for (const { kind, step } of writeSteps(waiting, merchantOf, kindOf)) {
    if (kind === alone) {
      for (const i of step) await runAlone(i);
      continue;
    }
    let rest = step;
    while (rest.length > 0) {
      const answers = await kind(
        trx,
        rest.map((i) => writes[i]!.batch!.item),
      );
      let k = 0;
      for (; k < rest.length && answers[k] !== writeAlone; k++) {
        const a = answers[k] as WriteResult<unknown> | Error | undefined;
        if (a === undefined) throw new Error('write batch: the batch effect answered fewer items than it was given');
        const i = rest[k]!;
        toRun.delete(i);
        if (a instanceof Error) await refused(i, a);
        else succeeded(i, a);
      }
      if (options.stats) options.stats.together += k;
      if (k === rest.length) break;
      await runAlone(rest[k]!);
      rest = rest.slice(k + 1);
    }
  }

  if (pending.size > 0) {
    const rows = [...pending.values()];
    // A row older than the window is a new key, and a claim found here has lapsed (a live one
    // was refused above): both are overwritten by the holder of the key's lock.
    await storeResults(trx, rows, idempotencyWindowHours, claimStatus);
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
  return {
    endpoint: r.endpoint,
    request_hash: r.requestHash,
    status_code: r.statusCode,
    response_body: r.body,
    created_at: new Date(r.recordedAtMs),
  };
}
