/**
 * Errors. Every failure the SDK reports is a `MerchantWalletError`; branch on `code`
 * (the contract), never on `message` or on `status`.
 */

export type ResponseHeaders = Record<string, string | string[] | undefined>;

/** `type` of the error class by HTTP status (reference: Errors). */
const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found',
  409: 'idempotency_error',
  429: 'rate_limit_error',
  500: 'api_error',
  502: 'upstream_error',
  504: 'upstream_timeout',
};

/** Code used when a response carries no readable error code. */
const FALLBACK_CODE_BY_STATUS: Record<number, string> = {
  404: 'not_found',
  429: 'rate_limited',
  500: 'api_error',
  502: 'upstream_error',
  504: 'upstream_timeout',
};

export interface MerchantWalletErrorInit {
  status: number;
  code: string;
  type: string;
  message: string;
  requestId: string;
  body: Record<string, unknown>;
  /** The response body as received ('' when none). */
  rawBody?: string;
  headers?: ResponseHeaders;
  cause?: unknown;
}

export class MerchantWalletError extends Error {
  /** HTTP status (0 when no HTTP answer was received). */
  readonly status: number;
  /** Error code: the contract. */
  readonly code: string;
  /** Error class (`invalid_request_error`, `rate_limit_error`, ...). */
  readonly type: string;
  /** `request_id` of the body, else the `x-request-id` header, else ''. */
  readonly requestId: string;
  /** The whole (unwrapped) error body including extra fields like `retry_after`, `fields`, `challenge_id`. */
  readonly body: Record<string, unknown>;
  /** The response body exactly as received ('' when no HTTP answer was received). */
  readonly rawBody: string;
  /** Response headers ({} when no HTTP answer was received). */
  readonly headers: ResponseHeaders;

  constructor(init: MerchantWalletErrorInit) {
    const suffix = init.requestId ? ` (request_id ${init.requestId})` : '';
    super(`${init.code}: ${init.message}${suffix}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'MerchantWalletError';
    this.status = init.status;
    this.code = init.code;
    this.type = init.type;
    this.requestId = init.requestId;
    this.body = init.body;
    this.rawBody = init.rawBody ?? '';
    this.headers = init.headers ?? {};
  }

  /** The envelope's `request_id` (same as `requestId`). */
  get request_id(): string {
    return this.requestId;
  }
}

/*
 * One class per error `type` of the reference's table (Errors), so that a caller can branch with
 * `instanceof` as with stripe-node; `code` stays the contract inside each class. The class comes
 * from the envelope's `type`, else from the HTTP status; a type the SDK does not know stays a
 * plain `MerchantWalletError`.
 */

/** 400 `invalid_request_error`: your mistake or a business refusal (`insufficient_balance`, `state_invalid`, ...). */
export class MerchantWalletInvalidRequestError extends MerchantWalletError {
  constructor(init: MerchantWalletErrorInit) {
    super(init);
    this.name = 'MerchantWalletInvalidRequestError';
  }
}

/** 401 `authentication_error`: credentials, token, signature, timestamp or nonce refused. */
export class MerchantWalletAuthenticationError extends MerchantWalletError {
  constructor(init: MerchantWalletErrorInit) {
    super(init);
    this.name = 'MerchantWalletAuthenticationError';
  }
}

/** 403 `permission_error`: scope, IP allow-list, merchant disabled. */
export class MerchantWalletPermissionError extends MerchantWalletError {
  constructor(init: MerchantWalletErrorInit) {
    super(init);
    this.name = 'MerchantWalletPermissionError';
  }
}

/** 404 `not_found` (also `member_not_found`, `resource_not_found`): never retried. */
export class MerchantWalletNotFoundError extends MerchantWalletError {
  constructor(init: MerchantWalletErrorInit) {
    super(init);
    this.name = 'MerchantWalletNotFoundError';
  }
}

/**
 * 409 `idempotency_error`: `idempotency_key_reused` (a new key is needed) or `idempotency_in_progress` (retried by the
 * client).
 */
export class MerchantWalletIdempotencyError extends MerchantWalletError {
  constructor(init: MerchantWalletErrorInit) {
    super(init);
    this.name = 'MerchantWalletIdempotencyError';
  }
}

/** 429 `rate_limit_error` (after the client's own retries). */
export class MerchantWalletRateLimitError extends MerchantWalletError {
  /** Seconds to wait: the `Retry-After` header, else `retry_after` of the body; undefined when neither. */
  readonly retryAfter: number | undefined;

  constructor(init: MerchantWalletErrorInit) {
    super(init);
    this.name = 'MerchantWalletRateLimitError';
    const header = headerValue(init.headers ?? {}, 'retry-after');
    const given =
      header !== undefined && /^\d+(\.\d+)?$/.test(header.trim()) ? Number(header.trim()) : init.body['retry_after'];
    this.retryAfter = typeof given === 'number' && Number.isFinite(given) ? given : undefined;
  }
}

/** 500 `api_error`: retried with the same key; report `requestId` when it persists. */
export class MerchantWalletAPIError extends MerchantWalletError {
  constructor(init: MerchantWalletErrorInit) {
    super(init);
    this.name = 'MerchantWalletAPIError';
  }
}

/** 502 `upstream_error` and 504 `upstream_timeout` (outcome unknown): retry with the same key, then read the object. */
export class MerchantWalletUpstreamError extends MerchantWalletError {
  constructor(init: MerchantWalletErrorInit) {
    super(init);
    this.name = 'MerchantWalletUpstreamError';
  }
}

/**
 * `webhooks.constructEvent` refused a webhook request: `code` says why (`webhook_headers_missing`,
 * `webhook_timestamp_invalid`, `webhook_timestamp_out_of_range`, `webhook_signature_mismatch`,
 * `webhook_secret_invalid`, `webhook_body_invalid`). Answer the request with a 4xx and do not act on it.
 */
export class MerchantWalletSignatureVerificationError extends MerchantWalletError {
  constructor(code: string, message: string, cause?: unknown) {
    super({ status: 0, code, type: 'signature_verification_error', message, requestId: '', body: {}, cause });
    this.name = 'MerchantWalletSignatureVerificationError';
  }
}

type ErrorClass = new (init: MerchantWalletErrorInit) => MerchantWalletError;

/** The class of each error `type` of the reference. */
export const ERROR_CLASS_BY_TYPE: Readonly<Record<string, ErrorClass>> = {
  invalid_request_error: MerchantWalletInvalidRequestError,
  authentication_error: MerchantWalletAuthenticationError,
  permission_error: MerchantWalletPermissionError,
  not_found: MerchantWalletNotFoundError,
  idempotency_error: MerchantWalletIdempotencyError,
  rate_limit_error: MerchantWalletRateLimitError,
  api_error: MerchantWalletAPIError,
  upstream_error: MerchantWalletUpstreamError,
  upstream_timeout: MerchantWalletUpstreamError,
};

/**
 * 400 `step_up_required`: the member must pass strong authentication first. Send them to
 * `hostedUrl`; once they completed it, repeat the same call (same body, same idempotency key)
 * with `x-step-up: <challengeId>`: `repeat()` does exactly that for a call made through this
 * client, or pass `{ idempotencyKey: e.idempotencyKey, stepUp: e.challengeId }` to the same
 * helper. The refusal is not stored against the key, so the repeat runs anew.
 */
export class StepUpRequiredError extends MerchantWalletInvalidRequestError {
  /** The challenge (`kyc_<32 hex>`), to send back as `x-step-up`. */
  readonly challengeId: string;
  /** The hosted screen where the member completes the challenge. */
  readonly hostedUrl: string;
  /** Unix seconds (the merchant's clock) after which the challenge no longer passes. */
  readonly expiresAt: number;
  /** The idempotency key of the refused call (set by the client that made it). */
  idempotencyKey: string | undefined;
  private repeater: ((challengeId: string) => Promise<unknown>) | undefined;

  constructor(init: MerchantWalletErrorInit) {
    super(init);
    this.name = 'StepUpRequiredError';
    this.challengeId = typeof init.body['challenge_id'] === 'string' ? init.body['challenge_id'] : '';
    this.hostedUrl = typeof init.body['hosted_url'] === 'string' ? init.body['hosted_url'] : '';
    this.expiresAt = typeof init.body['expires_at'] === 'number' ? init.body['expires_at'] : 0;
    this.idempotencyKey = undefined;
    this.repeater = undefined;
  }

  /** Called by the client that made the call: how to repeat it. */
  bindRepeat(idempotencyKey: string | undefined, repeater: (challengeId: string) => Promise<unknown>): this {
    this.idempotencyKey = idempotencyKey;
    this.repeater = repeater;
    return this;
  }

  /**
   * Repeats the refused call with the same body bytes and idempotency key, plus
   * `x-step-up: <challengeId>` (this error's challenge unless another is given). It may reject
   * with a new `StepUpRequiredError` (challenge not completed, expired, used, or for another request).
   */
  repeat<T = unknown>(challengeId: string = this.challengeId): Promise<T> {
    if (!this.repeater)
      return Promise.reject(
        new TypeError('this error was not produced by a client call; repeat the call with { stepUp, idempotencyKey }'),
      );
    return this.repeater(challengeId) as Promise<T>;
  }
}

/**
 * No HTTP answer was obtained (connection refused or reset, DNS failure, timeout).
 * `status` is 0, `code` is `network_error` or `timeout`, `cause` holds the original error.
 */
export class MerchantWalletConnectionError extends MerchantWalletError {
  /** Low-level error code, e.g. `ECONNRESET`, `ECONNREFUSED`, `ETIMEDOUT`. */
  readonly errno: string;

  constructor(message: string, errno: string, cause?: unknown) {
    super({
      status: 0,
      code: errno === 'ETIMEDOUT' ? 'timeout' : 'network_error',
      type: 'connection_error',
      message,
      requestId: '',
      body: {},
      cause,
    });
    this.name = 'MerchantWalletConnectionError';
    this.errno = errno;
  }
}

/**
 * The call was cancelled through its `AbortSignal` (before it was sent, while it waited for an
 * answer or for a retry). Never retried. `code` is `aborted`, `cause` the signal's reason. A
 * write cancelled after it was sent may still have run: repeat it with the same idempotency key
 * to learn its outcome.
 */
export class MerchantWalletAbortError extends MerchantWalletError {
  constructor(reason: unknown, where: string) {
    super({
      status: 0,
      code: 'aborted',
      type: 'abort_error',
      message: `aborted ${where}`,
      requestId: '',
      body: {},
      cause: reason,
    });
    this.name = 'MerchantWalletAbortError';
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function headerValue(headers: ResponseHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Normalises an error body. Accepts both `{type, code, message, request_id, ...extra}` and the
 * wrapped `{error: {type, code, ...}, ...}` shape (seen on 429); the result is one flat object
 * holding every field (inner fields win over outer ones).
 */
export function unwrapErrorBody(body: unknown): Record<string, unknown> {
  if (!isRecord(body)) return {};
  const inner = body['error'];
  if (isRecord(inner) && (typeof inner['code'] === 'string' || typeof inner['type'] === 'string')) {
    const { error: _ignored, ...outer } = body;
    return { ...outer, ...inner };
  }
  return body;
}

/** Builds the error for a non-2xx HTTP answer. */
export function errorFromResponse(
  status: number,
  headers: ResponseHeaders,
  body: unknown,
  rawBody: string,
): MerchantWalletError {
  const flat = unwrapErrorBody(body);
  const code =
    typeof flat['code'] === 'string' && flat['code']
      ? (flat['code'] as string)
      : (FALLBACK_CODE_BY_STATUS[status] ?? 'api_error');
  const type =
    typeof flat['type'] === 'string' && flat['type']
      ? (flat['type'] as string)
      : (TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error'));
  const message =
    typeof flat['message'] === 'string' && flat['message']
      ? (flat['message'] as string)
      : `HTTP ${status}${rawBody ? `: ${rawBody.slice(0, 200)}` : ''}`;
  const requestId =
    typeof flat['request_id'] === 'string' && flat['request_id']
      ? (flat['request_id'] as string)
      : (headerValue(headers, 'x-request-id') ?? '');
  const init = { status, code, type, message, requestId, body: flat, rawBody, headers };
  if (code === 'step_up_required') return new StepUpRequiredError(init);
  return new (ERROR_CLASS_BY_TYPE[type] ?? MerchantWalletError)(init);
}
