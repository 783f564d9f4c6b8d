import { eventCatalogue, eventTypes } from './catalogue.js';
import {
  defaultWebhookDisableAfterFailingMs,
  defaultWebhookRetryScheduleMs,
  webhookDeliveryTimeoutContractMs,
} from '../platform/config/config-values.js';

/**
 * The OpenAPI 3.1 `webhooks` of the public document: the request the service sends to a
 * merchant's endpoint (docs/webhooks.md, "Delivery"). Generated from the code: the event types and
 * their `data.object` from the event catalogue (events/catalogue.ts), the success rule, retry
 * schedule and failing window from the configuration's defaults (the contract).
 */

type Json = Record<string, any>;

/** Name of the one entry under `webhooks`. */
export const webhookEntryName = 'event';

/** `5 s, 5 min, 30 min, 2 h` (as webhooks/schedule.ts writes it for messages). */
function duration(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000} d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}

/** The body every event is sent with (the spec's Events table). */
export const webhookEventSchema: Json = {
  type: 'object',
  description:
    'The body of every webhook request: ids and status only (no amounts, assets or other details). Fetch the ' +
    'object with `GET /v1/<resource>/{data.id}`; merge state changes forward by `data.status_version`.',
  required: ['event_id', 'event_type', 'created_at', 'merchant_id', 'livemode', 'data'],
  properties: {
    event_id: {
      type: 'string',
      description: '`evt_<...>`; also the `webhook-id` header: the same on every attempt, deduplicate on it.',
    },
    event_type: {
      type: 'string',
      enum: eventTypes,
      description: 'One of the event catalogue; treat any other value as unknown.',
    },
    created_at: { type: 'string', format: 'date-time', description: 'When the event happened (ISO 8601, UTC).' },
    merchant_id: { type: 'string' },
    livemode: { type: 'boolean', description: 'true in production, false in the sandbox.' },
    data: {
      type: 'object',
      required: ['object', 'id', 'external_member_id', 'status', 'status_version'],
      properties: {
        object: {
          type: 'string',
          enum: [...new Set(Object.values(eventCatalogue).map((e) => e.object))],
          description: 'The kind of object `id` names.',
        },
        id: { type: 'string' },
        external_member_id: {
          type: 'string',
          description: "The member's external id; '' when the object belongs to no member.",
        },
        status: { type: 'string' },
        status_version: { type: 'integer', minimum: 0 },
      },
    },
  },
};

/** The component name of one event type's body: `card.transaction.authorization` → CardTransactionAuthorizationEvent.
 * */
export function webhookEventSchemaName(type: string): string {
  return `${type
    .split(/[._]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('')}Event`;
}

function header(name: string, description: string, example: string): Json {
  return { name, in: 'header', required: true, description, schema: { type: 'string' }, example };
}

/** The `webhooks` object and the component schema it refers to. */
export function webhooksDocument(): { webhooks: Json; schemas: Json } {
  const schedule = defaultWebhookRetryScheduleMs;
  const attempts = schedule.length + 1;
  const timeout = duration(webhookDeliveryTimeoutContractMs);
  const typeRows = Object.entries(eventCatalogue).map(
    ([type, e]) => `| \`${type}\` | \`${e.object}\` | ${e.description} |`,
  );
  const description = [
    `The service POSTs each event to every enabled endpoint of the merchant and environment that subscribes ` +
      `to its type (or to \`*\`). The body is the same envelope for every event (\`WebhookEvent\`); the ` +
      `headers follow Standard Webhooks.`,
    `**Success:** a 2xx answer within ${timeout} (from the start of the connection to the status line). ` +
      `Redirects are not followed (a 3xx is a failure).`,
    `**Retries:** any other answer, no answer or a network error is retried ` +
      `after ${schedule.map(duration).join(', ')} (${attempts} attempts in all); then the delivery is \`dead\` ` +
      `(redeliver it with \`POST /v1/webhooks/deliveries/{id}/redeliver\`). A \`410 Gone\` answer makes it ` +
      `\`dead\` at once and disables the endpoint (\`disabled_reason: gone\`); an endpoint whose attempts have ` +
      `all failed for ${duration(defaultWebhookDisableAfterFailingMs)} is disabled (\`failing\`). Delivery is ` +
      `at least once and unordered: deduplicate on \`webhook-id\`, merge by \`data.status_version\`.`,
    `**Signature:** \`webhook-signature\` is \`v1,<base64 of HMAC-SHA256>\` over ` +
      `\`{webhook-id}.{webhook-timestamp}.{body}\` (the raw body bytes), keyed with the endpoint secret ` +
      `base64-decoded after its \`whsec_\` prefix; during a secret roll it carries two signatures separated by ` +
      `a space (accept either).`,
    `**Event types** (\`event_type\` and its \`data.object\`):\n\n| event_type | data.object | Sent when ` +
      `|\n|---|---|---|\n${typeRows.join('\n')}`,
  ].join('\n\n');
  // One named schema per event type (`deposit.credited` → DepositCreditedEvent): a generated
  // client gets a type per event to narrow on `event_type`.
  const perType = Object.fromEntries(
    Object.entries(eventCatalogue).map(([type, e]) => [
      webhookEventSchemaName(type),
      {
        title: type,
        description: e.description,
        allOf: [{ $ref: '#/components/schemas/WebhookEvent' }],
        required: ['event_type', 'data'],
        properties: {
          event_type: { const: type },
          data: { type: 'object', required: ['object'], properties: { object: { const: e.object } } },
        },
      },
    ]),
  );
  return {
    schemas: { WebhookEvent: webhookEventSchema, ...perType },
    webhooks: {
      [webhookEntryName]: {
        post: {
          operationId: 'webhook_event',
          summary: 'An event, delivered to your endpoint',
          description,
          tags: ['Webhooks'],
          security: [],
          parameters: [
            header(
              'webhook-id',
              'The event id (`evt_...`): the same on every attempt; deduplicate on it.',
              'evt_5f0c6b8e-3a4d-4c1e-9b7a-2d6f8e1c0a93',
            ),
            header(
              'webhook-timestamp',
              'Unix seconds of this attempt; signed. Refuse a timestamp far from your clock.',
              '1767225600',
            ),
            header(
              'webhook-signature',
              '`v1,<base64>`: space-separated signatures (two during a secret roll).',
              'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
            ),
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: { oneOf: Object.keys(perType).map((name) => ({ $ref: `#/components/schemas/${name}` })) },
              },
            },
          },
          responses: {
            '2XX': {
              description:
                `Received: any 2xx within ${timeout} ends the delivery (\`sent\`). ` + 'The answer body is ignored.',
            },
            '410': { description: 'Gone: the delivery is `dead` at once and the endpoint is disabled (`gone`).' },
            default: {
              description: `Any other answer (or none within ${timeout}): retried per the schedule, then \`dead\`.`,
            },
          },
        },
      },
    },
  };
}
