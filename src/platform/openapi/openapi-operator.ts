import { STATUS_CODES } from 'node:http';
import fastifySwagger from '@fastify/swagger';
import type { FastifySchema } from 'fastify';
import { Type } from 'typebox';
import type { AppInstance } from '../http/app-instance.js';
import { errorResponse, errorSchema, errorsByStatus, operationIdFor, operatorErrorCodes } from './openapi-access.js';
import type { OperatorAccess } from '../routes/operator-route.js';
import { hoistNamedSchemas } from './openapi-schemas.js';

/**
 * The operator listener's own OpenAPI 3.1 document, GET /admin/v1/openapi.json (behind the
 * operator token like every /admin call). As for the public document, the route schemas are the
 * single source; the error responses come from each route's declared `errors` plus what every
 * operator call can answer. Kept apart from the public document so that no operator path is
 * ever published to merchants.
 */

type Json = Record<string, any>;

const routeKey = 'x-mwa-operator-route';
const methods = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** `/admin/v1/merchants/{id}/api-keys` → `Merchants`: operations are grouped by their first path segment. */
export function operatorTag(path: string): string {
  const segment = path.replace(/^\/admin\/v1\//, '').split('/')[0] ?? '';
  const words = segment.split('-').filter(Boolean);
  return words.length === 0
    ? 'Operator'
    : words.map((w, i) => (i === 0 ? w[0]!.toUpperCase() + w.slice(1) : w)).join(' ');
}

function describeOperatorOperation(method: string, path: string, op: Json): Json {
  const { [routeKey]: note, ...rest } = op as Json & { [routeKey]?: { access: OperatorAccess; bodyOptional: boolean } };
  // A body declared optional may be left out (route.ts reads none as `{}`).
  if (note?.bodyOptional && rest.requestBody) rest.requestBody = { ...rest.requestBody, required: false };
  const responses: Json = { ...(rest.responses ?? {}) };
  if (note) {
    for (const [status, codes] of errorsByStatus(operatorErrorCodes(note.access))) {
      responses[String(status)] = errorResponse(status, codes, responses[String(status)]);
    }
  }
  for (const [status, response] of Object.entries<Json>(responses)) {
    const placeholder = !response.description || response.description === 'Default Response';
    responses[status] = {
      ...response,
      description: placeholder ? (STATUS_CODES[Number(status)] ?? 'Response') : response.description,
      headers: { ...(response.headers ?? {}), 'X-Request-Id': { $ref: '#/components/headers/RequestId' } },
    };
  }
  return {
    summary: rest.summary ?? `${method.toUpperCase()} ${path}`,
    operationId: rest.operationId ?? operationIdFor(method, path),
    tags: rest.tags ?? [operatorTag(path)],
    ...rest,
    security: [{ operatorToken: [] }],
    responses,
  };
}

/** What each group of operator calls (`operatorTag`) is for; a group not listed is described by its path. */
const tagDescriptions: Record<string, string> = {
  'Address blacklist': 'Withdrawal addresses refused for every merchant.',
  Alerts: 'Operator alerts raised by the service (failing endpoints, provider trouble) and their resolution.',
  'Api keys': "Approving, changing and rotating merchants' API keys.",
  Assets: "The asset catalogue and each asset's networks.",
  Cards: 'Card products, their top-up pricing, and top-ups left on an unknown provider status.',
  'Console users': "The merchant console's users.",
  Earn: 'Earn products.',
  Exchange: 'Exchange directions and rate feeds.',
  Kyc: 'KYC reviews, images, requirements per business and high-value thresholds.',
  Ledger: "Checks of the ledger's invariants.",
  Members: "Operator decisions on a merchant's members.",
  Merchants: 'Merchants, their keys, balances, settings and console users.',
  Notifier: 'Messages the service would have sent (codes, notices).',
  Qrpay: 'QR payment schemes and payments left on an unknown provider status.',
  Remit: 'Remittance corridors.',
  Remittances: 'Remittance orders left on an unknown provider status, and their reconciliation.',
  Upstreams: 'Reconciliation of orders whose provider outcome is unknown.',
  Webhooks: 'Webhook delivery records.',
};

/** Fills in every operation of the document (summary, tag, security, error responses). */
export function finishOperatorDocument(doc: Json): Json {
  const tags = new Set<string>();
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    const next: Json = { ...item };
    for (const method of methods) {
      if (!item[method]) continue;
      next[method] = describeOperatorOperation(method, path, item[method]);
      for (const tag of next[method].tags) tags.add(tag);
    }
    doc.paths[path] = next;
  }
  doc.tags = [...tags].sort().map((name) => ({
    name,
    description:
      tagDescriptions[name] ?? `Operator calls under \`/admin/v1/${name.toLowerCase().replace(/ /g, '-')}\`.`,
  }));
  return hoistNamedSchemas(doc);
}

const description =
  `The operator's calls: merchants and their API keys, the asset catalogue, KYC reviews, ` +
  `alerts, the settling of orders left on a provider status outside our enumeration, corridors, exchange ` +
  `directions, earn and card products and the other settings merchants cannot change themselves.

Served on its own listener (\`ADMIN_HOST:ADMIN_PORT\`), never on the public one. Every \`/admin\` call takes ` +
  `\`authorization: Bearer <ADMIN_TOKEN>\` (401 \`invalid_token\` otherwise); JSON bodies, no signing and no ` +
  `idempotency keys; the same error envelope as the public API. \`GET /healthz\`, \`GET /readyz\` and \`GET ` +
  `/metrics\` (Prometheus) need no token. docs/operator-api.md describes each call.`;

/** Registers @fastify/swagger on the operator listener and GET /admin/v1/openapi.json. Call before the operator routes.
 * */
export function registerOperatorOpenApi(app: AppInstance): void {
  // Not awaited: avvio loads it before the route modules registered after it, so its onRoute hook sees them all.
  void app.register(fastifySwagger, {
    mode: 'dynamic',
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Merchant Wallet API: operator',
        version: '1.0.0',
        description,
        license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
      },
      servers: [
        {
          url: 'http://127.0.0.1:8081',
          description: 'The operator listener (ADMIN_HOST:ADMIN_PORT); never exposed to merchants.',
        },
      ],
      security: [{ operatorToken: [] }],
      components: {
        securitySchemes: {
          operatorToken: {
            type: 'http',
            scheme: 'bearer',
            description: "The service's `ADMIN_TOKEN`, as `authorization: Bearer <ADMIN_TOKEN>`.",
          },
        },
        schemas: { Error: errorSchema },
        headers: {
          RequestId: {
            description: 'Identifier of this request; also `request_id` in error bodies.',
            schema: { type: 'string' },
          },
        },
      } as any,
    },
    transform: ({ schema, url, route }) => {
      const access = route.config?.operator;
      const base = (schema ?? {}) as FastifySchema;
      if (!url.startsWith('/admin/v1/') || !access) return { schema: { ...base, hide: true }, url };
      const bodyOptional = base.body !== undefined && Type.IsOptional(base.body);
      return { schema: { ...base, [routeKey]: { access, bodyOptional } } as FastifySchema, url };
    },
    transformObject: (documentObject) =>
      finishOperatorDocument((documentObject as { openapiObject: Json }).openapiObject) as any,
  });

  app.get('/admin/v1/openapi.json', { schema: { hide: true } }, async (_req, reply) =>
    reply.type('application/json; charset=utf-8').send(app.swagger()),
  );
}
