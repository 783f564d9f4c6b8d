// Over 300 lines: one mapping from a route's access to its OpenAPI parts, each built from the same rules.
import { ApiError, errorStatus, errorTypes, type ErrorCode } from '../errors.js';
import { isSignedRoute, type RouteAccess } from '../routes/route-access.js';
import { nonceLengthMax, nonceWindowSeconds, timestampToleranceSeconds } from '../auth/signing.js';

/**
 * What the OpenAPI document derives from a route's `config.access` (openapi.ts registers it):
 * the security schemes, the headers access implies, the error codes and their responses, the
 * access summary line.
 */

type Json = Record<string, any>;

/** Which parts of the request a route validates: each can answer `invalid_request`. */
export interface RouteParts {
  body: boolean;
  querystring: boolean;
  params: boolean;
  headers: boolean;
}

export const securitySchemes = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description: 'Access token from `POST /v1/connect/token`, sent as `authorization: Bearer <auth_token>`.',
  },
  xAuthToken: {
    type: 'apiKey',
    in: 'header',
    name: 'x-auth-token',
    description:
      'The same access token sent as `x-auth-token: Bearer <auth_token>` (the reference header; ' +
      '`authorization` is also accepted).',
  },
  // The signature is three headers computed per request, not a credential sent as is; described
  // as three apiKey schemes that a signed operation requires together with the token (`x-signed`).
  signatureTimestamp: {
    type: 'apiKey',
    in: 'header',
    name: 'x-timestamp',
    description:
      `Signed operations (\`x-signed: true\`): Unix seconds (not milliseconds) of the request, ` +
      `within ${timestampToleranceSeconds} seconds of server time. Part of the signing string.`,
  },
  signatureNonce: {
    type: 'apiKey',
    in: 'header',
    name: 'x-nonce',
    description:
      `Signed operations: fresh for every request, retries included; not reusable ` +
      `within ${nonceWindowSeconds / 60} minutes, nor while its \`x-timestamp\` is still accepted. 1 ` +
      `to ${nonceLengthMax} visible ASCII characters (a UUID fits). Part of the signing string.`,
  },
  signature: {
    type: 'apiKey',
    in: 'header',
    name: 'x-signature',
    description:
      "Signed operations: Base64 HMAC-SHA256, keyed with the API key's `signing_key`, of the signing " +
      'string: the method, the path with its query, `x-timestamp`, `x-nonce` and the hex SHA-256 of the ' +
      'body, joined by line feeds (see "Signing requests" in the introduction). A missing or wrong signature ' +
      'header answers 401 `invalid_signature`.',
  },
} as const;

/** The security requirements of an operation: the token (either header), plus the signature when it is signed. */
export function securityFor(method: string, access: RouteAccess): Json[] {
  if (access.scope === 'public') return [];
  // No role names in the lists: OpenAPI 3.1 allows them, but linters (Spectral) take them for
  // undefined OAuth scopes. The scope is `x-scope` and the access line of the description.
  const signing = isSigned(method, access) ? { signatureTimestamp: [], signatureNonce: [], signature: [] } : {};
  return [
    { bearerAuth: [], ...signing },
    { xAuthToken: [], ...signing },
  ];
}

export const errorSchema = {
  type: 'object',
  description:
    'The error envelope. Branch on `code`, never on `message` or the HTTP status. Some codes add fields (see ' +
    'the reference).',
  required: ['type', 'code', 'message', 'request_id'],
  properties: {
    type: { type: 'string', enum: Object.keys(errorTypes), description: 'Class of the error; fixes the HTTP status.' },
    code: {
      type: 'string',
      description: 'The contract: one of the codes listed on the response. An unknown code is handled as `api_error`.',
    },
    message: { type: 'string', description: 'English text for humans; may change.' },
    request_id: { type: 'string', description: 'Also in the `X-Request-Id` header.' },
    challenge_id: {
      type: 'string',
      description:
        '`step_up_required` only: the challenge (`kyc_<32 hex>`) to send back as `x-step-up` once the member ' +
        'completed it.',
    },
    hosted_url: {
      type: 'string',
      format: 'uri',
      description: '`step_up_required` only: the hosted screen where the member completes the challenge.',
    },
    expires_at: {
      type: 'integer',
      description:
        "`step_up_required` only: Unix seconds (the merchant's clock; 300 seconds after issue) after which " +
        'the challenge no longer passes.',
    },
    fields: {
      type: 'array',
      description:
        '`invalid_fields`: the fields that failed, each with its reason (e.g. `required`, `too_long`, ' +
        '`pattern`). Some endpoints answer `invalid_fields` without it (stated on the operation).',
      items: {
        type: 'object',
        required: ['key', 'reason'],
        properties: { key: { type: 'string' }, reason: { type: 'string' } },
      },
    },
    reason: {
      type: 'string',
      description: '`invalid_fields`: a summary reason beside `fields` (e.g. `validation_failed`).',
    },
    retry_after: {
      type: 'integer',
      description:
        '`rate_limited` (also the `Retry-After` header) and `service_unavailable` of `POST ' +
        '/v1/merchant/deposit-address`: seconds to wait before retrying.',
    },
    limit_type: {
      type: 'string',
      enum: ['single', 'daily'],
      description: '`limit_exceeded`: the layer of the quota that was hit; may be absent.',
    },
    limit_scope: {
      type: 'string',
      enum: ['merchant', 'member'],
      description: '`limit_exceeded`: whose quota was hit; may be absent.',
    },
    locked_until: {
      type: 'string',
      format: 'date-time',
      description:
        '`state_invalid` of `POST /v1/cards/{id}/activate` on a card locked after 3 failed activations: when ' +
        'the lock ends (ISO 8601).',
    },
    error: {
      type: 'object',
      description: "`rate_limited` (429) only: the same fields again, wrapped, as the reference's 429 example shows.",
    },
  },
  additionalProperties: true,
} as const;

const uuidPattern = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** The pipeline's own signing rule (route-access.ts), so the document cannot say otherwise. */
export const isSigned = isSignedRoute;

/** The header parameters a route's access asks for, in the order a caller sets them. */
export function accessHeaders(method: string, access: RouteAccess): Json[] {
  const headers: Json[] = [];
  const principal = access.principal ?? 'merchant';
  if (access.scope !== 'public' && principal !== 'merchant') {
    headers.push({
      name: 'x-on-behalf-of',
      in: 'header',
      required: principal === 'member',
      description:
        principal === 'member'
          ? 'The member this call acts for: its id (`mem_<uuid>`) or your `external_member_id`. Required; an ' +
            'unknown or suspended member gives 404 `member_not_found`.'
          : 'Optional member this call acts for (`mem_<uuid>` or your `external_member_id`); without it the ' +
            'call acts as the merchant. Sent blank: 400 `member_context_required`.',
      schema: { type: 'string', minLength: 1 },
    });
  }
  const idempotency = access.idempotency ?? 'none';
  if (idempotency !== 'none') {
    headers.push({
      name: 'x-idempotency-key',
      in: 'header',
      // Declared optional even where the operation requires it (`x-idempotency: required`): a
      // client generated from the document sets it in one place (a middleware, a retry policy
      // that keeps it) rather than as an argument of every typed call.
      required: false,
      description:
        (idempotency === 'required'
          ? '**Required by this operation** (`x-idempotency: required`): without it the call answers 400 ' +
            '`idempotency_key_required`. '
          : 'Optional: without it the call is not deduplicated. ') +
        ('UUID form (8-4-4-4-12 hex; only the shape is checked). The same key and body within 24 hours ' +
          'replays the first result with `X-Idempotent-Replay: true`. Keep it on retries.') +
        (access.keyedBody ? ` ${access.keyedBody.description}` : ''),
      schema: { type: 'string', format: 'uuid', pattern: uuidPattern },
      example: '5f0c6b8e-3a4d-4c1e-9b7a-2d6f8e1c0a93',
    });
  }
  if (access.errors?.includes('step_up_required')) {
    headers.push({
      name: 'x-step-up',
      in: 'header',
      required: false,
      description:
        'Strong authentication: the `challenge_id` of a `step_up_required` answer, once the member completed ' +
        'its hosted screen. Repeat the same request (same body, same `x-idempotency-key`) with it. ' +
        ('A challenge not completed, expired, already used, or issued for another member, action or request ' +
          'answers `step_up_required` again with a new challenge. See docs/step-up.md.'),
      schema: { type: 'string', maxLength: 64 },
      example: 'kyc_0123456789abcdef0123456789abcdef',
    });
  }
  return headers;
}

/** Every code a route can answer: the ones its access implies, then the ones it declares. */
export function accessErrorCodes(method: string, access: RouteAccess, _parts: RouteParts): ErrorCode[] {
  const codes: ErrorCode[] = [];
  const principal = access.principal ?? 'merchant';
  const authenticated = access.scope !== 'public';
  if (access.sandboxOnly) codes.push('not_found');
  if (authenticated) {
    codes.push('invalid_token', 'environment_mismatch', 'ip_not_allowed', 'merchant_disabled', 'rate_limited');
    if (access.scope !== 'token') codes.push('insufficient_scope');
    if (principal !== 'merchant') codes.push('member_context_required', 'member_not_found');
  }
  if (isSigned(method, access)) codes.push('invalid_signature', 'timestamp_out_of_range', 'nonce_reused');
  const idempotency = access.idempotency ?? 'none';
  if (idempotency === 'required') codes.push('idempotency_key_required');
  if (idempotency !== 'none')
    codes.push('idempotency_key_invalid', 'idempotency_key_reused', 'idempotency_in_progress');
  // Every operation: besides the validation of its declared parts (`parts`), a body that is not
  // JSON and a path, query or header value holding NUL or an unpaired surrogate are refused before
  // any route runs (http-app.ts), so `GET /v1/assets?x=%00` answers it too.
  codes.push('invalid_request');
  codes.push(...(access.errors ?? []), 'api_error');
  return [...new Set(codes)];
}

/** The codes one operator operation can answer: its own, `invalid_token` and `invalid_request` always (as
 * `accessErrorCodes`). */
export function operatorErrorCodes(access: { readonly errors: readonly ErrorCode[] }): ErrorCode[] {
  const codes = new Set<ErrorCode>(['invalid_token', 'invalid_request', ...access.errors]);
  return [...codes];
}

/** Codes grouped by the HTTP status `errorStatus()` gives them, statuses ascending. */
export function errorsByStatus(codes: readonly ErrorCode[]): Map<number, ErrorCode[]> {
  const groups = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = errorStatus(code);
    groups.set(status, [...(groups.get(status) ?? []), code]);
  }
  return new Map([...groups.entries()].sort(([a], [b]) => a - b));
}

/** What a code's body carries besides the envelope (the reference's "Extra fields"), where the document says more. */
const extraFields: Partial<Record<ErrorCode, string>> = {
  step_up_required:
    'The body adds `challenge_id`, `hosted_url` and `expires_at` (Unix seconds). Send the member to ' +
    '`hosted_url`, then repeat the same request (same body, same idempotency key) with `x-step-up: ' +
    '<challenge_id>`; this answer is not stored against the key.',
};

function errorDescription(codes: readonly ErrorCode[]): string {
  // The first line is what a collapsed reference shows: the codes alone.
  const lines = codes.map(
    (code) => `- \`${code}\`: ${new ApiError(code).message}${extraFields[code] ? ` ${extraFields[code]}` : ''}`,
  );
  return `${codes.map((code) => `\`${code}\``).join(', ')}\n\n${lines.join('\n')}`;
}

export function errorResponse(status: number, codes: ErrorCode[], existing: Json | undefined): Json {
  const response: Json = {
    ...(existing ?? {}),
    description:
      existing?.description && existing.description !== 'Default Response'
        ? `${existing.description}\n\n${errorDescription(codes)}`
        : errorDescription(codes),
    content: existing?.content ?? { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    'x-error-codes': codes,
  };
  if (status === 429) {
    response.headers = { ...(response.headers ?? {}), 'Retry-After': { $ref: '#/components/headers/RetryAfter' } };
  }
  return response;
}

export function accessSummary(method: string, access: RouteAccess): string {
  if (access.scope === 'public') return '**Access:** public, no token.';
  const parts = [access.scope === 'token' ? 'any valid token (no scope)' : `scope \`${access.scope}\``];
  const principal = access.principal ?? 'merchant';
  parts.push(
    principal === 'member'
      ? 'on behalf of a member (`x-on-behalf-of` required)'
      : principal === 'either'
        ? 'as the merchant or on behalf of a member (`x-on-behalf-of` optional)'
        : 'as the merchant (no `x-on-behalf-of`)',
  );
  if (isSigned(method, access)) parts.push('signed');
  const idempotency = access.idempotency ?? 'none';
  if (idempotency !== 'none') parts.push(`idempotency key ${idempotency}`);
  if (access.sandboxOnly) parts.push('sandbox only (production answers 404 `not_found`)');
  return `**Access:** ${parts.join('; ')}.`;
}

/**
 * The operationId of an operation whose route declares none (only operator routes may): the
 * method and the path after its version, camelCase, a parameter as `By<Name>`:
 * `GET /admin/v1/merchants/{id}/api-keys` → `getMerchantsByIdApiKeys`. Public routes declare
 * theirs (`schema.operationId`, required by the route helper's type); the OpenAPI tests check
 * that every one is unique.
 */
export function operationIdFor(method: string, path: string): string {
  const words = (text: string) =>
    text
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase());
  const segments = path
    .replace(/^\/(admin\/)?v\d+\//, '')
    .split('/')
    .filter(Boolean);
  const tail = segments.map((s) => (/^\{.+\}$/.test(s) ? `By${words(s).join('')}` : words(s).join(''))).join('');
  return `${method.toLowerCase()}${tail}`;
}
