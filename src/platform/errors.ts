/**
 * The reference's error table as one typed catalogue. Handlers throw `new ApiError(code)`; the
 * error handler writes the envelope. No other code invents an error code or an HTTP status.
 */
export const errorTypes = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found: 404,
  idempotency_error: 409,
  rate_limit_error: 429,
  api_error: 500,
  upstream_error: 502,
  upstream_timeout: 504,
} as const;

export type ErrorType = keyof typeof errorTypes;

const catalogue = {
  invalid_credentials: ['authentication_error', 'The client id or API key is not valid.'],
  invalid_token: ['authentication_error', 'The access token is missing, malformed, expired or revoked.'],
  invalid_signature: ['authentication_error', 'The request signature is missing or does not match.'],
  signature_required: ['authentication_error', 'This request must be signed.'],
  timestamp_out_of_range: ['authentication_error', 'x-timestamp differs from server time by more than 300 seconds.'],
  nonce_reused: ['authentication_error', 'This nonce was already used within the last 5 minutes.'],
  environment_mismatch: ['invalid_request_error', 'These credentials belong to the other environment.'],
  insufficient_scope: ['permission_error', 'The API key lacks the scope this endpoint needs.'],
  ip_not_allowed: ['permission_error', 'The caller address is not allowed for this API key.'],
  merchant_disabled: ['permission_error', 'The merchant account is disabled.'],
  idempotency_key_required: ['invalid_request_error', 'This request needs an x-idempotency-key header.'],
  idempotency_key_invalid: ['invalid_request_error', 'x-idempotency-key must have the 8-4-4-4-12 hex form.'],
  quote_lock_unsupported: ['invalid_request_error', 'This endpoint prices at execution; remove quote_id.'],
  idempotency_key_reused: ['idempotency_error', 'This idempotency key was used with another body or endpoint.'],
  idempotency_in_progress: ['idempotency_error', 'The first request with this idempotency key is still running.'],
  member_not_found: ['not_found', 'The member was not found.'],
  member_context_required: ['invalid_request_error', 'This endpoint needs a non-empty x-on-behalf-of header.'],
  member_suspended: ['invalid_request_error', 'The member is suspended.'],
  kyc_required: ['invalid_request_error', "The member's KYC level is below what this business requires."],
  insufficient_balance: ['invalid_request_error', 'The available balance is insufficient.'],
  merchant_insufficient_funds: ['invalid_request_error', "The merchant's prepaid balance is insufficient."],
  merchant_custody_shortfall: [
    'invalid_request_error',
    "Confirming would make the merchant's custody of the asset negative.",
  ],
  product_not_available: ['invalid_request_error', 'The product is not available.'],
  limit_exceeded: ['invalid_request_error', 'A limit was exceeded.'],
  amount_out_of_range: ['invalid_request_error', "The amount is outside the product's range."],
  request_rejected: ['invalid_request_error', 'The request was rejected.'],
  step_up_required: ['invalid_request_error', 'Strong authentication is required.'],
  order_not_cancellable: ['invalid_request_error', 'The order is past the point where this action is possible.'],
  asset_not_allowed: ['invalid_request_error', 'The asset is not allowed.'],
  invalid_request: ['invalid_request_error', 'The request is malformed.'],
  invalid_fields: ['invalid_request_error', 'Some fields are not valid.'],
  corridor_not_supported: ['invalid_request_error', 'The corridor cannot be served.'],
  resource_not_found: ['not_found', 'The referenced resource was not found.'],
  state_invalid: ['invalid_request_error', "The action is not valid in the object's current state."],
  duplicate_resource: ['idempotency_error', 'An identical record already exists.'],
  address_not_allowed: ['invalid_request_error', 'The withdrawal address is not allowed.'],
  qr_code_invalid: ['invalid_request_error', 'The QR code cannot be used.'],
  not_found: ['not_found', 'Not found.'],
  rate_limited: ['rate_limit_error', 'Too many requests.'],
  api_error: ['api_error', 'An internal error occurred.'],
  upstream_error: ['upstream_error', 'The upstream provider is unavailable.'],
  upstream_timeout: ['upstream_timeout', 'The upstream provider timed out; the outcome is unknown.'],
  service_unavailable: ['invalid_request_error', 'The service line is temporarily unavailable.'],
} as const satisfies Record<string, readonly [ErrorType, string]>;

export type ErrorCode = keyof typeof catalogue;

/** The HTTP status a code answers with. `duplicate_resource` is 409 by the table, typed as an idempotency error. */
export function errorStatus(code: ErrorCode): number {
  return errorTypes[catalogue[code][0]];
}

export function errorType(code: ErrorCode): ErrorType {
  return catalogue[code][0];
}

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(catalogue, value);
}

export const allErrorCodes = Object.keys(catalogue) as ErrorCode[];

export type ErrorExtras = Record<string, unknown>;

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly extras: ErrorExtras;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message?: string, extras: ErrorExtras = {}, headers: Record<string, string> = {}) {
    super(message ?? catalogue[code][1]);
    this.code = code;
    this.extras = extras;
    this.headers = headers;
  }

  get status(): number {
    return errorStatus(this.code);
  }

  body(requestId: string): Record<string, unknown> {
    return {
      type: errorType(this.code),
      code: this.code,
      message: this.message,
      request_id: requestId,
      ...this.extras,
    };
  }
}

/**
 * Turns an error raised below the API (the ledger's domain errors) into the reference's code, or
 * undefined when it does not know it. The composition root supplies it (`ctx.mapDomainError`):
 * the platform knows no domain, and the ledger knows no HTTP.
 */
export type DomainErrorMapper = (err: unknown) => ApiError | undefined;

export interface FieldProblem {
  key: string;
  reason: string;
}

export function invalidFields(fields: FieldProblem[], reason = 'validation_failed'): ApiError {
  return new ApiError('invalid_fields', undefined, { fields, reason });
}

/** A catalogue amount (minor units) that must be above zero: itself, or 400 `invalid_fields` naming the field
 * (`not_positive`). */
export function positiveAmount(v: bigint, field: string): bigint {
  if (v <= 0n)
    throw new ApiError('invalid_fields', `${field} must be greater than zero.`, {
      fields: [{ key: field, reason: 'not_positive' }],
    });
  return v;
}
