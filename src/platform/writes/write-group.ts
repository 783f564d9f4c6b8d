import type { Kysely, Transaction } from 'kysely';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../db/schema.js';
import { GroupCommitter, type BatchOptions } from './group-commit.js';
import { withConflictRetry } from './conflict-retry.js';
import { ReplaySignal, executeWrite, holdClaim, sendReplay, type WriteResult } from './idempotency.js';
import { afterRefusal } from './same-key-refusal.js';
import {
  BareEffectFailed,
  runWriteBatch,
  type GroupedWrite,
  type WriteGroup,
  type WriteOutcome,
} from './write-batch.js';

/*
 * The group committer of idempotent writes (docs/group-commit.md): a grouped route's write is
 * submitted to it and answered from its batch's outcome; a batch runs in runWriteBatch
 * (write-batch.ts), again whole after a deadlock.
 */

/** A claimed write's effect committed: its value, the claim now held on its key. */
export interface Claimed {
  claimed: unknown;
}

async function answer(
  req: FastifyRequest,
  reply: FastifyReply,
  outcome: WriteOutcome,
): Promise<FastifyReply | Claimed> {
  if (outcome instanceof ReplaySignal) return sendReplay(reply, outcome.stored);
  if ('refusal' in outcome) throw await afterRefusal(outcome.refusal);
  if ('error' in outcome) throw outcome.error;
  if ('claimed' in outcome) {
    holdClaim(req.idempotency!, outcome.claim);
    return { claimed: outcome.claimed };
  }
  return reply.code(outcome.status).header('content-type', 'application/json; charset=utf-8').send(outcome.body);
}

/**
 * What a deployment keeps inside one batch (`GROUP_COMMIT_PARTITION`): `none`, one partition, so
 * writes arriving together commit together whatever their merchant (a single PostgreSQL);
 * `merchant`, a merchant's writes only (an engine sharded by merchant, where a transaction cannot
 * cross shards).
 */
export type WritePartitioning = 'none' | 'merchant';

/**
 * `executeWrite` for a grouped route (a command, route.ts): a write with an idempotency key goes
 * through the service's group committer; one without a key runs alone in its own transaction.
 */
export async function executeGroupedWrite<T>(
  db: Kysely<Database>,
  group: WriteGroup,
  partitioning: WritePartitioning,
  req: FastifyRequest,
  reply: FastifyReply,
  effect: (trx: Transaction<Database>) => Promise<WriteResult<T>>,
  options: Pick<GroupedWrite, 'batch' | 'claimLeaseMs'> = {},
): Promise<FastifyReply | Claimed> {
  if (!req.idempotency) {
    if (options.claimLeaseMs === undefined) return executeWrite(db, req, reply, effect);
    return { claimed: (await db.transaction().execute(effect)).body };
  }
  const auth = req.auth!;
  const order = `${auth.merchantId}|${auth.environment}`;
  const write: GroupedWrite = { req, reply, effect: effect as GroupedWrite['effect'], ...options };
  // A write without a batch effect locks its own rows (a member, a card, an order) before the
  // money, the order every other transaction takes them in (docs/locking.md): it runs in a batch
  // of its own, which takes no merchant lock before its effect (runWriteBatch). A batch effect that
  // locks rows first (card top-ups) is batched only with its own writes: no other write's posting
  // takes a merchant's lock before its rows in the batch's transaction.
  const lane = write.batch?.locksRowsFirst ? write.batch.effect : undefined;
  const partition = partitioning === 'merchant' ? order : '';
  return answer(req, reply, await group.submit(partition, order, write, !write.batch, lane));
}

/**
 * The group committer of a service: batches of at most `maxBatch` writes, `maxInFlight`
 * transactions at once (leave connections for reads and for writes that are not grouped).
 */
export function createWriteGroup(db: Kysely<Database>, options: BatchOptions): WriteGroup {
  const run = (writes: readonly GroupedWrite[], fallback: boolean | undefined, locked?: () => void, bare = false) =>
    db.transaction().execute((trx) => runWriteBatch(trx, writes, { stats: group.stats, fallback, locked, bare }));
  // A batch of one write runs its effect without a savepoint (one statement less); when the effect
  // fails, its transaction is rolled back whole and the batch runs again with the savepoint, which
  // stores a refusal as the key's result (BareEffectFailed).
  const runBare = (writes: readonly GroupedWrite[], fallback?: boolean, locked?: () => void) => {
    const flags = flagsOf(writes);
    return run(writes, fallback, locked, !fallback).catch((err: unknown) => {
      if (!(err instanceof BareEffectFailed)) throw err;
      flags.restore();
      return run(writes, fallback, locked);
    });
  };
  const group: WriteGroup = new GroupCommitter<GroupedWrite, WriteOutcome>(
    {
      runBatch: (writes, fallback, locked) => runAgainAfterConflict(writes, () => runBare(writes, fallback, locked)),
    },
    options,
  );
  return group;
}

/** The writes' record flags as they are now, to put back before a batch runs again. */
function flagsOf(writes: readonly GroupedWrite[]) {
  const flags = writes.map(({ req }) => ({ settled: req.idempotency!.settled, noStore: req.idempotency!.noStore }));
  return { restore: () => writes.forEach(({ req }, i) => Object.assign(req.idempotency!, flags[i])) };
}

/**
 * A batch's transaction ended by PostgreSQL in a deadlock or a
 * serialization failure is run again whole (`withConflictRetry`, docs/locking.md): the keys'
 * locks, the nonces and the records are inside it, so nothing of the failed attempt stays, and
 * each write's record flags are as before it. Without this a lone write was answered 500.
 */
function runAgainAfterConflict(
  writes: readonly GroupedWrite[],
  batch: () => Promise<WriteOutcome[]>,
): Promise<WriteOutcome[]> {
  const flags = flagsOf(writes);
  return withConflictRetry(batch, {
    beforeAttempt: flags.restore,
    onRetry: (info) =>
      writes[0]!.req.log.warn(
        { ...info, writes: writes.length },
        'write batch ended by PostgreSQL (deadlock or serialization failure): run again',
      ),
  });
}
