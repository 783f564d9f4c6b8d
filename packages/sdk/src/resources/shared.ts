/** What every resource helper shares: its host (the client), its options, and the small helpers of its calls. */

import { randomUUID } from 'node:crypto';
import type { PaginateOptions } from '../pagination.js';
import type { RequestOptions, StreamRequestOptions } from '../request-options.js';
import type { OpenedStream } from '../transport.js';
import type { ListEnvelope } from '../types.js';

/** Options accepted by every write helper. */
export interface WriteOptions {
  /** Idempotency key to use instead of a generated one (pass the same key to retry a call yourself). */
  idempotencyKey?: string;
  /**
   * `x-step-up`: the `challenge_id` of a completed step-up challenge. Repeat the refused call with
   * the same body and the same `idempotencyKey` (`StepUpRequiredError.idempotencyKey`), or call
   * `StepUpRequiredError.repeat()`.
   */
  stepUp?: string;
}

export interface OnBehalfOfOptions {
  /** Member id (`mem_<uuid>` or the merchant's external member id). */
  onBehalfOf: string;
}

/** What the helpers need from the client. */
export interface ResourceHost {
  request<T = unknown>(opts: RequestOptions): Promise<T>;
  paginate<T>(path: string, opts?: PaginateOptions): AsyncIterable<T>;
  openStream(opts: StreamRequestOptions): Promise<OpenedStream>;
}

/** A path segment: a non-empty id, percent-encoded. */
export const seg = (id: string): string => {
  if (typeof id !== 'string' || id === '') throw new TypeError('id must be a non-empty string');
  return encodeURIComponent(id);
};

/** The caller's idempotency key, else a new UUID v4 (once per call; the client's retries reuse it). */
export const key = (opts?: WriteOptions): string => opts?.idempotencyKey ?? randomUUID();

/** What every write helper sends from its options: the key (generated once per call) and `x-step-up`. */
export const writeOpts = (opts?: WriteOptions) => ({ idempotencyKey: key(opts), stepUp: opts?.stepUp });

export const isoTime = (t: string | Date | undefined): string | undefined => (t instanceof Date ? t.toISOString() : t);

/** A non-paged list's items. */
export const data = async <T>(p: Promise<ListEnvelope<T>>): Promise<T[]> => (await p).data;

/** Every item of a paged list, read to the end. */
export const collect = async <T>(it: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};
