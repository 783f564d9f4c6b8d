import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ApiError } from './errors.js';
import type { StoredResult } from './idempotency.js';

/**
 * A grouped route's whole batch in one autocommitted statement (docs/group-commit.md "One
 * statement a batch"): the claim (`mwa_claim_keys`), the effect of the writes that run and their
 * records (`mwa_store_results`) in one database function, so a batch costs one round trip and its
 * commit. `prepare` makes a write's own part of the statement (its checks, ids and rendered
 * answers) when the write is submitted, while an earlier batch of its merchant is still running,
 * so that a batch's statement is sent as soon as the previous one commits; a refusal is part of
 * what it prepares, not a rejection (a rejection fails the batch, as `run` throwing does). `run`
 * gets what the claim needs and each write's prepared part, in order. A write runs when its nonce
 * is fresh (or it has none), its key's lock was taken, the key has no record within the window,
 * and no earlier write of the batch has its key; a claim on a key for its very request declines
 * the whole statement (`statementDeclined`). Throwing (the statement failed, so nothing of it
 * committed, or its outcome is unknown) fails the batch: the committer then runs each write again
 * alone in a transaction, which answers a write whose statement did commit from its key.
 */
export interface BatchStatement<I = unknown, P = unknown> {
  prepare(db: Kysely<Database>, write: StatementWrite<I>): Promise<P>;
  run(db: Kysely<Database>, claims: StatementClaims, writes: readonly StatementWrite<I>[], prepared: readonly P[]): Promise<StatementRow[]>;
}

export interface StatementClaims {
  merchantId: string;
  environment: string;
  /** The merchant's write lock (`merchant-writes|…`), taken first. */
  merchantLock: string;
  keyLocks: string[];
  keys: string[];
  endpoints: string[];
  requestHashes: string[];
  nonces: (string | null)[];
  nonceExpires: (string | null)[];
  nonceNow: (string | null)[];
  windowHours: number;
  /** The status a claim's record has (`claimStatus`): a lapsed one is replaced. */
  claimStatus: number;
}

export interface StatementWrite<I = unknown> {
  item: I;
  /** The route's answer for a result: its status and the body its response schema makes. */
  render(body: unknown): { status: number; body: string };
  /** The refusal an error of the write's effect is (a domain error mapped to the reference's code), or undefined when it is no refusal to store. */
  refusalOf(err: unknown): ApiError | undefined;
  /** The body stored for a refusal (the error envelope with this request's id). */
  refusalBody(err: ApiError): string;
}

/** What the statement did with one write. */
export interface StatementRow {
  /** The nonce: null when the request had none, false when it was used. */
  fresh: boolean | null;
  /** The key's lock was taken (false: held by another transaction). */
  locked: boolean;
  ran: boolean;
  /** A write that did not run: its key's record within the window, if any. */
  record?: StoredResult;
  /** A write that ran: its answer, the body stored under its key, or its refusal (stored too). */
  answer?: { status: number; body: string } | { refusal: ApiError };
}

/**
 * The SQLSTATE a `BatchStatement` raises, keeping nothing, when a key of the batch holds a claim
 * for its very request (a record that is no result: in progress, or lapsed and to run anew). The
 * batch then runs in a transaction (`runWriteBatch`), which judges such a key at the request's
 * time and in the batch's order.
 */
export const statementDeclined = 'MWB01';
