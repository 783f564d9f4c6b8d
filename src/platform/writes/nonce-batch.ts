import type { Kysely } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import { TurnBatcher } from '../../db/turn-batch.js';
import { idempotencyWindowHours } from './idempotency.js';
import type { StoredResult } from '../queries/idempotency.js';
import { nonceExpiryMs, type NonceUse } from './nonces.js';
import { insertNonces } from '../queries/nonces.js';

/**
 * The nonces of signed requests that arrive together, consumed in one statement (issue 16: the
 * nonce statement was the one round trip every signed request still made on its own; a batch of
 * deposits makes seven for all of them). Each request keeps its own answer: whether its nonce was
 * fresh and, for an idempotent request, its key's finished record within the window, as
 * `consumeNonce` (nonces.ts) answers one request.
 *
 * Requests are gathered for one turn of the event loop (those whose bytes arrived together),
 * then sent as one autocommitted statement; several such statements may run at once. Two of them
 * inserting the same nonce take its row in the same (sorted) order, so they cannot deadlock: one
 * waits for the other and finds the nonce used.
 */

export interface NonceCheck {
  use: NonceUse;
  /** The idempotency key whose finished record to read with it (idempotent requests). */
  key?: { merchantId: string; environment: Environment; key: string };
}

export interface NonceAnswer {
  fresh: boolean;
  /** The key's record within the window, when one was asked for and exists. */
  record?: StoredResult;
}

/** Most nonces in one statement; more waiting start another statement at once. */
export const nonceBatchMax = 64;

export class NonceBatcher {
  private readonly batcher: TurnBatcher<NonceCheck, NonceAnswer>;

  constructor(db: Kysely<Database>) {
    this.batcher = new TurnBatcher((checks) => consumeNonces(db, checks), nonceBatchMax);
  }

  /** Statements run (`batches`) and nonces consumed (`items`) since start-up, for /metrics. */
  get stats(): { readonly batches: number; readonly items: number } {
    return this.batcher.stats;
  }

  check(check: NonceCheck): Promise<NonceAnswer> {
    return this.batcher.add(check);
  }
}

/**
 * Consumes many nonces in one statement, and reads the records of the keys given. A nonce named
 * twice in the list is fresh for its first request only. An expired row is taken over as in
 * `consumeNonce`, judged at the earliest request time of the list: a request of the list never
 * takes over a nonce that has not expired for every request in it (the requests' times are
 * milliseconds apart).
 */
export async function consumeNonces(db: Kysely<Database>, checks: readonly NonceCheck[]): Promise<NonceAnswer[]> {
  const nameOf = ({ use }: NonceCheck) => `${use.merchantId}\u0000${use.environment}\u0000${use.nonce}`;
  const first = new Map<string, number>();
  checks.forEach((c, i) => {
    if (!first.has(nameOf(c))) first.set(nameOf(c), i);
  });
  // Sorted, so that two statements inserting the same nonces lock them in one order.
  const sent = [...first.values()].sort((a, b) => (nameOf(checks[a]!) < nameOf(checks[b]!) ? -1 : 1));
  const nowMs = Math.min(...checks.map((c) => c.use.nowMs));
  const col = <T>(read: (c: NonceCheck) => T) => sent.map((i) => read(checks[i]!));
  const rows = await insertNonces(
    db,
    {
      merchantIds: col((c) => c.use.merchantId),
      environments: col((c) => c.use.environment),
      nonces: col((c) => c.use.nonce),
      expiresAt: col((c) => new Date(nonceExpiryMs(c.use.timestampSeconds, c.use.nowMs)).toISOString()),
      keyMerchantIds: col((c) => c.key?.merchantId ?? null),
      keyEnvironments: col((c) => c.key?.environment ?? null),
      keys: col((c) => c.key?.key ?? null),
    },
    new Date(nowMs),
    idempotencyWindowHours,
  );
  const bySent = new Map<number, NonceAnswer>();
  for (const row of rows) {
    const i = sent[Number(row.ord) - 1]!;
    bySent.set(
      i,
      row.fresh && row.endpoint != null ? { fresh: true, record: row as StoredResult } : { fresh: row.fresh },
    );
  }
  return checks.map((c, i) => {
    const firstIndex = first.get(nameOf(c))!;
    if (firstIndex !== i) return { fresh: false };
    const answer = bySent.get(i);
    if (!answer) throw new Error('nonces: a nonce of the batch got no answer');
    return answer;
  });
}
