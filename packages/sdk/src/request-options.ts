/** What a call of `MerchantWalletClient.request` (and of every resource helper, through it) may say. */

import type { HttpMethod, QueryParams } from './types.js';

/** Options of one call that are not part of the request itself. */
export interface CallOptions {
  /** Timeout of each attempt of the call, ms (connect + request + full response). Default: the client's `timeoutMs`. */
  timeoutMs?: number;
  /**
   * Cancels the call: it rejects with `MerchantWalletAbortError` whether it is waiting for the
   * token, for an answer or before a retry, and is not retried. A write cancelled after it was
   * sent may still have run: repeat it with the same idempotency key to learn its outcome.
   */
  signal?: AbortSignal;
}

export interface RequestOptions extends CallOptions {
  method: HttpMethod;
  /** Path relative to the base address, e.g. `/v1/members`. May already carry a query string. */
  path: string;
  /** Query parameters, appended in insertion order; `undefined` values are skipped. */
  query?: QueryParams;
  /** JSON body; serialised once and sent (and signed) as exactly those bytes. */
  body?: unknown;
  /** Member id for on-behalf-of endpoints (`x-on-behalf-of`). */
  onBehalfOf?: string;
  /**
   * `x-idempotency-key`. Default: a UUID v4 generated once per call for POST, PUT and PATCH (kept for
   * every retry of the call); none for GET and DELETE. `false` sends none.
   */
  idempotencyKey?: string | false;
  /**
   * `x-step-up`: the `challenge_id` of a `step_up_required` answer, once the member completed its
   * hosted screen. Send it with the same body and the same `idempotencyKey` as the refused call
   * (or use `StepUpRequiredError.repeat()`).
   */
  stepUp?: string;
  /**
   * Extra headers (names case-insensitive). They are applied last and override computed ones; `undefined` removes one.
   */
  headers?: Record<string, string | undefined>;
  /**
   * Advanced: exact body bytes to send instead of `body` (signed as given; content-type stays application/json unless
   * overridden).
   */
  rawBody?: string | Buffer | Uint8Array;
  /** Advanced: sign the request. Default: every method other than GET and HEAD. */
  sign?: boolean;
  /** Advanced: send the access token. Default true. */
  auth?: boolean;
  /** Advanced: fixed `x-timestamp` (Unix seconds) used for the header and the signature. */
  timestamp?: number | string;
  /** Advanced: fixed `x-nonce` used for the header and the signature (reused by retries: meant for `requestRaw`). */
  nonce?: string;
}

/** `MerchantWalletClient.openStream`: a GET whose answer is read as it arrives (server-sent events). */
export interface StreamRequestOptions extends CallOptions {
  /** Path relative to the base address, e.g. `/v1/events/stream`. */
  path: string;
  query?: QueryParams;
  /** Extra headers, e.g. `last-event-id`; `accept` is `text/event-stream` unless given. */
  headers?: Record<string, string | undefined>;
  /**
   * Longest silence of an open stream before it counts as broken, ms. Default 45000 (three of the server's 15-second
   * keep-alives).
   */
  idleTimeoutMs?: number;
}
