import { STATUS_CODES } from 'node:http';
import fastifySwagger from '@fastify/swagger';
import type { FastifySchema } from 'fastify';
import type { ServiceContext } from '../service-context.js';
import { ApiError, errorStatus, errorTypes, type ErrorCode } from './errors.js';
import type { AppInstance } from './http-app.js';
import { isSignedRoute, rateLimitsPerMinute, type RouteAccess } from './route-access.js';
import { nonceLengthMax, nonceWindowSeconds, timestampToleranceSeconds } from './signing.js';

/**
 * The OpenAPI 3.1 document at GET /v1/openapi.json. Route schemas are the single source: bodies,
 * params, queries and success responses come from each route's `schema`; scope, principal,
 * headers, security and error responses are derived here from its `config.access`.
 */

type Json = Record<string, any>;

/** Which parts of the request a route validates: each can answer `invalid_request`. */
export interface RouteParts {
  body: boolean;
  querystring: boolean;
  params: boolean;
  headers: boolean;
}

/** Carried from `transform` (which sees the route) to `transformObject` (which sees each operation). */
const routeKey = 'x-mwa-route';
interface RouteNote {
  access: RouteAccess;
  parts: RouteParts;
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
    description: 'The same access token sent as `x-auth-token: Bearer <auth_token>` (the reference header; `authorization` is also accepted).',
  },
} as const;

export const errorSchema = {
  type: 'object',
  description: 'The error envelope. Branch on `code`, never on `message` or the HTTP status. Some codes add fields (see the reference).',
  required: ['type', 'code', 'message', 'request_id'],
  properties: {
    type: { type: 'string', enum: Object.keys(errorTypes), description: 'Class of the error; fixes the HTTP status.' },
    code: { type: 'string', description: 'The contract: one of the codes listed on the response. An unknown code is handled as `api_error`.' },
    message: { type: 'string', description: 'English text for humans; may change.' },
    request_id: { type: 'string', description: 'Also in the `X-Request-Id` header.' },
  },
  additionalProperties: true,
} as const;

const uuidPattern = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

function isRead(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

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
      description: principal === 'member'
        ? 'The member this call acts for: its id (`mem_<uuid>`) or your `external_member_id`. Required; an unknown or suspended member gives 404 `member_not_found`.'
        : 'Optional member this call acts for (`mem_<uuid>` or your `external_member_id`); without it the call acts as the merchant.',
      schema: { type: 'string', minLength: 1 },
    });
  }
  const idempotency = access.idempotency ?? 'none';
  if (idempotency !== 'none') {
    headers.push({
      name: 'x-idempotency-key',
      in: 'header',
      required: idempotency === 'required',
      description: 'UUID form (8-4-4-4-12 hex; only the shape is checked). The same key and body within 24 hours replays the first result with `X-Idempotent-Replay: true`. Keep it on retries.',
      schema: { type: 'string', format: 'uuid', pattern: uuidPattern },
      example: '5f0c6b8e-3a4d-4c1e-9b7a-2d6f8e1c0a93',
    });
  }
  if (isSigned(method, access)) {
    headers.push(
      {
        name: 'x-timestamp',
        in: 'header',
        required: true,
        description: `Unix seconds (not milliseconds); within ${timestampToleranceSeconds} seconds of server time. Part of the signing string.`,
        schema: { type: 'string', pattern: '^[0-9]{1,16}$' },
        example: '1767225600',
      },
      {
        name: 'x-nonce',
        in: 'header',
        required: true,
        description: `Fresh for every request, retries included; not reusable within ${nonceWindowSeconds / 60} minutes, nor while its \`x-timestamp\` is still accepted. 1 to ${nonceLengthMax} visible ASCII characters (a UUID fits), otherwise \`invalid_signature\`. Part of the signing string.`,
        schema: { type: 'string', minLength: 1, maxLength: nonceLengthMax, pattern: '^[\\x21-\\x7e]+$' },
        example: 'b1946ac92492d2347c6235b4d2611184',
      },
      {
        name: 'x-signature',
        in: 'header',
        required: true,
        description: 'Base64 HMAC-SHA256, keyed with the API key\'s `signing_key`, of the signing string (see "Signing requests" in the introduction).',
        schema: { type: 'string', pattern: '^[A-Za-z0-9+/]{43}=$' },
      },
    );
  }
  return headers;
}

/** Every code a route can answer: the ones its access implies, then the ones it declares. */
export function accessErrorCodes(method: string, access: RouteAccess, parts: RouteParts): ErrorCode[] {
  const codes: ErrorCode[] = [];
  const principal = access.principal ?? 'merchant';
  const authenticated = access.scope !== 'public';
  if (access.sandboxOnly) codes.push('not_found');
  if (authenticated) {
    codes.push('invalid_token', 'environment_mismatch', 'ip_not_allowed', 'merchant_disabled', 'rate_limited');
    if (access.scope !== 'token') codes.push('insufficient_scope');
    if (principal === 'member') codes.push('member_context_required');
    if (principal !== 'merchant') codes.push('member_not_found');
  }
  if (isSigned(method, access)) codes.push('invalid_signature', 'timestamp_out_of_range', 'nonce_reused');
  const idempotency = access.idempotency ?? 'none';
  if (idempotency === 'required') codes.push('idempotency_key_required');
  if (idempotency !== 'none') codes.push('idempotency_key_invalid', 'idempotency_key_reused', 'idempotency_in_progress');
  // Validation of any declared part, a body that is not JSON, or x-on-behalf-of sent to a merchant-only route.
  const validates = parts.body || parts.querystring || parts.params || parts.headers;
  if (validates || !isRead(method.toUpperCase()) || (authenticated && principal === 'merchant')) codes.push('invalid_request');
  codes.push(...(access.errors ?? []), 'api_error');
  return [...new Set(codes)];
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

function errorDescription(codes: readonly ErrorCode[]): string {
  // The first line is what a collapsed reference shows: the codes alone.
  const lines = codes.map((code) => `- \`${code}\`: ${new ApiError(code).message}`);
  return `${codes.map((code) => `\`${code}\``).join(', ')}\n\n${lines.join('\n')}`;
}

function errorResponse(status: number, codes: ErrorCode[], existing: Json | undefined): Json {
  const response: Json = {
    ...(existing ?? {}),
    description: existing?.description && existing.description !== 'Default Response'
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

function accessSummary(method: string, access: RouteAccess): string {
  if (access.scope === 'public') return '**Access:** public, no token.';
  const parts = [access.scope === 'token' ? 'any valid token (no scope)' : `scope \`${access.scope}\``];
  const principal = access.principal ?? 'merchant';
  parts.push(principal === 'member' ? 'on behalf of a member (`x-on-behalf-of` required)'
    : principal === 'either' ? 'as the merchant or on behalf of a member (`x-on-behalf-of` optional)'
      : 'as the merchant (no `x-on-behalf-of`)');
  if (isSigned(method, access)) parts.push('signed');
  const idempotency = access.idempotency ?? 'none';
  if (idempotency !== 'none') parts.push(`idempotency key ${idempotency}`);
  if (access.sandboxOnly) parts.push('sandbox only (production answers 404 `not_found`)');
  return `**Access:** ${parts.join('; ')}.`;
}

/** Adds everything `config.access` implies to one operation of the document. */
export function describeOperation(method: string, operation: Json, note: RouteNote): Json {
  const { access, parts } = note;
  // The access declaration decides security; a route's own `security` would only contradict it.
  const { [routeKey]: _note, security: _security, summary, description, tags, operationId, ...rest } = operation;
  const roles = access.scope === 'public' || access.scope === 'token' ? [] : [access.scope];
  const op: Json = {
    ...(summary ? { summary } : {}),
    ...(operationId ? { operationId } : {}),
    ...(tags ? { tags } : {}),
    description: [accessSummary(method, access), description].filter(Boolean).join('\n\n'),
    'x-scope': access.scope,
    ...(access.scope !== 'public' ? { 'x-principal': access.principal ?? 'merchant' } : {}),
    'x-signed': isSigned(method, access),
    'x-idempotency': access.idempotency ?? 'none',
    ...(access.sandboxOnly ? { 'x-sandbox-only': true } : {}),
    security: access.scope === 'public' ? [] : [{ bearerAuth: roles }, { xAuthToken: roles }],
    ...rest,
  };

  const params: Json[] = [...(op.parameters ?? [])];
  for (const header of accessHeaders(method, access)) {
    if (!params.some((p) => p.in === 'header' && String(p.name).toLowerCase() === header.name)) params.push(header);
  }

  const responses: Json = { ...(op.responses ?? {}) };
  for (const [status, codes] of errorsByStatus(accessErrorCodes(method, access, parts))) {
    responses[String(status)] = errorResponse(status, codes, responses[String(status)]);
  }
  for (const [status, response] of Object.entries(responses)) {
    const headers: Json = { ...(response.headers ?? {}), 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
    if (status.startsWith('2') && (access.idempotency ?? 'none') !== 'none') {
      headers['X-Idempotent-Replay'] = { $ref: '#/components/headers/IdempotentReplay' };
    }
    // @fastify/swagger's placeholder says nothing; the status text says a little more.
    const placeholder = !response.description || response.description === 'Default Response';
    const text = placeholder ? STATUS_CODES[Number(status)] ?? 'Response' : response.description;
    responses[status] = { ...response, description: text, headers };
  }
  const { parameters: _parameters, requestBody, responses: _responses, ...head } = op;
  return {
    ...head,
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

const operationMethods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Applies `describeOperation` across the document, then keeps only the tags in use. */
export function finishDocument(doc: Json): Json {
  const used = new Set<string>();
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    const next: Json = { ...item };
    for (const method of operationMethods) {
      const op = item[method];
      if (!op) continue;
      const note = op[routeKey] as RouteNote | undefined;
      next[method] = note ? describeOperation(method.toUpperCase(), op, note) : op;
      for (const tag of next[method].tags ?? []) used.add(tag);
    }
    doc.paths[path] = next;
  }
  const known: Json[] = (doc.tags ?? []).filter((t: Json) => used.has(t.name));
  for (const name of used) if (!known.some((t) => t.name === name)) known.push({ name });
  doc.tags = known;
  return doc;
}

const tags = [
  { name: 'Authentication', description: 'Exchange an API key for an access token.' },
  { name: 'Members', description: 'Your end users, and acting on their behalf.' },
  { name: 'Deposits', description: 'Crediting members with funds received on-chain.' },
  { name: 'Balances', description: 'Member and merchant balances.' },
  { name: 'Assets', description: 'Assets and networks the service handles.' },
  { name: 'Withdrawals', description: 'Paying out to external addresses.' },
  { name: 'Exchange', description: 'Quotes and exchange orders between assets.' },
  { name: 'Remittance', description: 'Payees and cross-border transfers.' },
  { name: 'Cards', description: 'Card products, applications, cards and top-ups.' },
  { name: 'KYC', description: 'Member verification.' },
  { name: 'Earn', description: 'Earn products and positions.' },
  { name: 'QR pay', description: 'Paying QR codes.' },
  { name: 'Merchant', description: 'The merchant account itself.' },
  { name: 'Webhooks', description: 'Webhook endpoints and deliveries.' },
  { name: 'Sandbox', description: 'Test controls, only on the sandbox host.' },
];

const description = `Payments, cards, exchange and remittance for your members, over HTTPS and JSON.

## Environments

The environment is chosen by the host called: a host containing \`api-sandbox\` or \`sandbox.\` is the **sandbox**, any other host is **production**. Credentials of the other environment are refused with 400 \`environment_mismatch\`. Locally, send \`Host: api-sandbox.localhost:8080\` or \`Host: api.localhost:8080\` to 127.0.0.1 to choose.

## Authentication

Exchange an API key for an access token with \`POST /v1/connect/token\` (headers \`x-client-id\` and \`x-api-key\`; valid 30 minutes, no refresh; ${rateLimitsPerMinute.token_exchange} exchanges per minute). Send it on every other call as \`x-auth-token: Bearer <token>\` (or \`authorization: Bearer <token>\`). Writes are also signed: see the [signing rules](/docs#merchant-wallet-api/description/signing-requests). Each operation lists its scope (\`x-scope\`), who it acts for (\`x-principal\`), its headers and the error codes it can answer (\`x-error-codes\` on each error response).

## Signing requests

Every call other than GET and HEAD is signed, and \`POST /v1/deposits\` always is. The signing string is five segments joined by a line feed: the method in upper case; the path with its query string exactly as sent; \`x-timestamp\` (Unix seconds, within ${timestampToleranceSeconds} seconds); \`x-nonce\` (fresh per request, not reusable within ${nonceWindowSeconds / 60} minutes); and the lower-case hex SHA-256 of the raw body bytes (of the empty string when there is no body). \`x-signature\` is the Base64 HMAC-SHA256 of that string keyed with the API key's \`signing_key\` (44 characters). A missing signing header gives 401 \`invalid_signature\`.

## Idempotency

Writes that create objects or move money take an \`x-idempotency-key\` (UUID form). The same key and body within 24 hours replays the first result with \`X-Idempotent-Replay: true\`; the same key with another body gives 409 \`idempotency_key_reused\`. On a retry keep the key and use a new nonce.

## Errors

Every error has the envelope \`{type, code, message, request_id}\`; branch on \`code\`. Lists use \`{data, next_cursor, has_more}\` with cursor pagination (\`limit\` up to 100, \`cursor\`).`;

/** Registers @fastify/swagger and GET /v1/openapi.json. Call before any other route so it sees them all. */
export async function registerOpenApi(app: AppInstance, _ctx: ServiceContext): Promise<void> {
  await app.register(fastifySwagger, {
    mode: 'dynamic',
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Merchant Wallet API', version: '1.0.0', description },
      servers: [
        { url: 'https://api.example.com', description: 'Production. Locally, the Host header chooses the environment (any host without `api-sandbox` or `sandbox.`).' },
        { url: 'https://api-sandbox.example.com', description: 'Sandbox. Locally, send `Host: api-sandbox.localhost:<port>`.' },
      ],
      tags,
      security: [{ bearerAuth: [] }, { xAuthToken: [] }],
      components: {
        securitySchemes,
        schemas: { Error: errorSchema },
        headers: {
          RequestId: { description: 'Identifier of this request; also `request_id` in error bodies.', schema: { type: 'string' } },
          IdempotentReplay: { description: '`true` when this is the stored result of an earlier request with the same key.', schema: { type: 'string', enum: ['true'] } },
          RetryAfter: { description: 'Seconds until the current rate-limit window ends.', schema: { type: 'integer' } },
        },
      } as any,
    },
    transform: ({ schema, url, route }) => {
      const access = route.config?.access;
      const base = (schema ?? {}) as FastifySchema;
      if (!url.startsWith('/v1/') || !access) return { schema: { ...base, hide: true }, url };
      const note: RouteNote = {
        access,
        parts: { body: !!base.body, querystring: !!base.querystring, params: !!base.params, headers: !!base.headers },
      };
      return { schema: { ...base, [routeKey]: note } as FastifySchema, url };
    },
    transformObject: (documentObject) => finishDocument((documentObject as { openapiObject: Json }).openapiObject) as any,
  });

  app.get('/v1/openapi.json', {
    config: { access: { scope: 'public' } },
    schema: { hide: true },
  }, async (_req, reply) => reply.type('application/json; charset=utf-8').send(app.swagger()));
}
