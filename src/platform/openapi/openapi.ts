import { STATUS_CODES } from 'node:http';
import fastifySwagger from '@fastify/swagger';
import type { FastifySchema } from 'fastify';
import { Type } from 'typebox';
import type { Environment } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import type { AppInstance } from '../http/app-instance.js';
import {
  accessErrorCodes,
  accessHeaders,
  accessSummary,
  errorResponse,
  errorSchema,
  errorsByStatus,
  isSigned,
  operationIdFor,
  securityFor,
  securitySchemes,
  type RouteParts,
} from './openapi-access.js';
import { hoistNamedSchemas } from './openapi-schemas.js';
import { rateLimitsPerMinute, type RouteAccess } from '../routes/route-access.js';
import { nonceWindowSeconds, timestampToleranceSeconds } from '../auth/signing.js';

/** The signing rule as the document reads it (route-access.ts holds it). */
export { isSigned };

/**
 * The OpenAPI 3.1 document at GET /v1/openapi.json. Route schemas are the single source: bodies,
 * params, queries and success responses come from each route's `schema`; scope, principal,
 * headers, security and error responses are derived here from its `config.access`.
 */

type Json = Record<string, any>;

/** Carried from `transform` (which sees the route) to `transformObject` (which sees each operation). */
const routeKey = 'x-mwa-route';
interface RouteNote {
  access: RouteAccess;
  parts: RouteParts;
  /** The body is declared `Type.Optional(...)`: none at all is accepted (route.ts reads it as `{}`). */
  bodyOptional?: boolean;
}

/** Adds everything `config.access` implies to one operation of the document. */
export function describeOperation(method: string, operation: Json, note: RouteNote): Json {
  const { access, parts } = note;
  // The access declaration decides security; a route's own `security` would only contradict it.
  const { [routeKey]: _note, security: _security, summary, description, tags, operationId, ...rest } = operation;
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
    security: securityFor(method, access),
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
    const text = placeholder ? (STATUS_CODES[Number(status)] ?? 'Response') : response.description;
    responses[status] = { ...response, description: text, headers };
  }
  const { parameters: _parameters, requestBody, responses: _responses, ...head } = op;
  return {
    ...head,
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(requestBody ? { requestBody: note.bodyOptional ? { ...requestBody, required: false } : requestBody } : {}),
    responses,
  };
}

const operationMethods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * Applies `describeOperation` across the document (with an `operationId` from method and path
 * where the route gives none), adds the `webhooks` the service sends, then keeps only the tags in use.
 */
/** The `webhooks` the service sends and their schemas (events/openapi.ts, given by the composition root). */
export type WebhooksDocument = () => { webhooks: Json; schemas: Json };

export function finishDocument(doc: Json, webhooksDocument: WebhooksDocument): Json {
  const used = new Set<string>();
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    const next: Json = { ...item };
    for (const method of operationMethods) {
      const op = item[method];
      if (!op) continue;
      const note = op[routeKey] as RouteNote | undefined;
      const described = note ? describeOperation(method.toUpperCase(), op, note) : op;
      next[method] = described.operationId ? described : { operationId: operationIdFor(method, path), ...described };
      for (const tag of next[method].tags ?? []) used.add(tag);
    }
    doc.paths[path] = next;
  }
  const { webhooks, schemas } = webhooksDocument();
  doc.webhooks = webhooks;
  doc.components = { ...doc.components, schemas: { ...doc.components?.schemas, ...schemas } };
  for (const item of Object.values<Json>(webhooks)) {
    for (const method of operationMethods) for (const tag of item[method]?.tags ?? []) used.add(tag);
  }
  const known: Json[] = (doc.tags ?? []).filter((t: Json) => used.has(t.name));
  for (const name of used) if (!known.some((t) => t.name === name)) known.push({ name });
  doc.tags = known;
  return hoistNamedSchemas(doc);
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
  {
    name: 'Events',
    description: 'Events, kept at least 30 days: list, read, follow as a stream, and replay to a webhook endpoint.',
  },
  { name: 'Ledger', description: "The merchant's journal: every balanced entry that moved its or its members' money." },
  { name: 'Exports', description: 'Files of your objects for your accountants, written in the background.' },
  {
    name: 'Hosted screens',
    description: 'Pages the service serves to your members (KYC, card details, step-up) and where they may be framed.',
  },
  { name: 'Sandbox', description: 'Test controls, only on the sandbox host.' },
];

const description =
  `Payments, cards, exchange and remittance for your members, over HTTPS and JSON.

## Environments

The environment is chosen by the host called: a host containing \`api-sandbox\` or \`sandbox.\` is the ` +
  `**sandbox**, any other host is **production**. Credentials of the other environment are refused with 400 ` +
  `\`environment_mismatch\`. Locally, send \`Host: api-sandbox.localhost:8080\` or \`Host: ` +
  `api.localhost:8080\` to 127.0.0.1 to choose.

## Authentication

Exchange an API key for an access token with \`POST /v1/connect/token\` (headers \`x-client-id\` and ` +
  `\`x-api-key\`; valid 30 minutes, no refresh; ${rateLimitsPerMinute.token_exchange} exchanges per minute). ` +
  `Send it on every other call as \`x-auth-token: Bearer <token>\` (or \`authorization: Bearer <token>\`). ` +
  `Writes are also signed: see the [signing rules](/docs#merchant-wallet-api/description/signing-requests). ` +
  `Each operation lists its scope (\`x-scope\`), who it acts for (\`x-principal\`), its headers and the error ` +
  `codes it can answer (\`x-error-codes\` on each error response).

## Signing requests

Every call other than GET and HEAD is signed, and \`POST /v1/deposits\` always is. The signing string is five ` +
  `segments joined by a line feed: the method in upper case; the path with its query string exactly as sent; ` +
  `\`x-timestamp\` (Unix seconds, within ${timestampToleranceSeconds} seconds); \`x-nonce\` (fresh per ` +
  `request, not reusable within ${nonceWindowSeconds / 60} minutes); and the lower-case hex SHA-256 of the raw ` +
  `body bytes (of the empty string when there is no body). \`x-signature\` is the Base64 HMAC-SHA256 of that ` +
  `string keyed with the API key's \`signing_key\` (44 characters). A missing signing header gives 401 ` +
  `\`invalid_signature\`.

## Idempotency

Writes that create objects or move money take an \`x-idempotency-key\` (UUID form). The same key and body ` +
  `within 24 hours replays the first result with \`X-Idempotent-Replay: true\`; the same key with another body ` +
  `gives 409 \`idempotency_key_reused\`. On a retry keep the key and use a new nonce.

## Errors

Every error has the envelope \`{type, code, message, request_id}\`; branch on \`code\`. Lists use \`{data, ` +
  `next_cursor, has_more}\` with cursor pagination (\`limit\` up to 100, \`cursor\`).`;

/** The SDK's licence (packages/sdk/LICENSE): the document is what clients are generated from. */
export const license = { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' };

type Server = {
  url: string;
  description: string;
  variables?: Record<string, { default: string; description: string }>;
};

/**
 * The reference's two hosts are a deployment's own (`{base_url}`, `{sandbox_base_url}`): the
 * configured `PUBLIC_BASE_URL_PRODUCTION` / `PUBLIC_BASE_URL_SANDBOX`, or else `https://{host}`
 * with the host as a variable; then a local service (`npm start`), whose environment the host chooses.
 */
export function serversFor(publicBaseUrls: Partial<Record<Environment, string>>): Server[] {
  const deployed = (environment: Environment, reference: string, hostRule: string, placeholder: string): Server => {
    const name = environment === 'production' ? 'Production' : 'Sandbox';
    const configured = publicBaseUrls[environment];
    return configured
      ? { url: configured, description: `${name} (the reference's \`${reference}\`).` }
      : {
          url: 'https://{host}',
          description:
            `${name}: your deployment's ${environment === 'production' ? 'API' : 'sandbox'} host (the ` +
            `reference's \`${reference}\`).`,
          variables: { host: { default: placeholder, description: hostRule } },
        };
  };
  return [
    deployed(
      'production',
      '{base_url}',
      'The production API host name (any host without `api-sandbox` or `sandbox.`).',
      'api.merchant-wallet.invalid',
    ),
    deployed(
      'sandbox',
      '{sandbox_base_url}',
      'The sandbox API host name: it contains `api-sandbox` or `sandbox.`.',
      'api-sandbox.merchant-wallet.invalid',
    ),
    {
      url: 'http://127.0.0.1:{port}',
      description:
        'A local service (`npm start`): production as called; for the sandbox send `Host: ' +
        'api-sandbox.localhost:<port>` (browsers and curl also resolve `api-sandbox.localhost` to this ' +
        'machine).',
      variables: { port: { default: '8080', description: '`PORT` of the service' } },
    },
  ];
}

/** Registers @fastify/swagger and GET /v1/openapi.json. Call before any other route so it sees them all. */
export async function registerOpenApi(
  app: AppInstance,
  ctx: ServiceContext,
  webhooks: WebhooksDocument,
): Promise<void> {
  await app.register(fastifySwagger, {
    mode: 'dynamic',
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Merchant Wallet API', version: '1.0.0', description, license },
      servers: serversFor(ctx.config.publicBaseUrls),
      tags,
      security: [{ bearerAuth: [] }, { xAuthToken: [] }],
      components: {
        securitySchemes,
        schemas: { Error: errorSchema },
        headers: {
          RequestId: {
            description: 'Identifier of this request; also `request_id` in error bodies.',
            schema: { type: 'string' },
          },
          IdempotentReplay: {
            description: '`true` when this is the stored result of an earlier request with the same key.',
            schema: { type: 'string', enum: ['true'] },
          },
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
        bodyOptional: base.body !== undefined && Type.IsOptional(base.body),
      };
      return { schema: { ...base, [routeKey]: note } as FastifySchema, url };
    },
    transformObject: (documentObject) =>
      finishDocument((documentObject as { openapiObject: Json }).openapiObject, webhooks) as any,
  });

  app.get(
    '/v1/openapi.json',
    {
      config: { access: { scope: 'public' } },
      schema: { hide: true },
    },
    async (_req, reply) => reply.type('application/json; charset=utf-8').send(app.swagger()),
  );
}
