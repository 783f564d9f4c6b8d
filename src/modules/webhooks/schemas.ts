import { Type } from 'typebox';
import { deliveryStatuses } from './service.js';
import { maxUrlLength } from './ssrf.js';

/** The request and response schemas of the webhook routes (routes.ts). */

export const EventTypes = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 50,
  description:
    '`["*"]` for every event (`*` anywhere means all), or types of the event catalogue (the `webhooks` of ' +
    'this document), such as `withdrawal.settled`, `deposit.credited`, `qrpay.order.completed`. An unknown ' +
    'type answers `invalid_fields` (`reason: unknown_event_type`), naming it in the message.',
});
export const Url = Type.String({
  minLength: 1,
  maxLength: maxUrlLength,
  description:
    'https; it must not resolve to loopback, private, link-local, metadata, multicast or unspecified ' +
    'addresses (checked now and before every attempt). The sandbox also accepts http and loopback/private ' +
    'addresses.',
});
export const EndpointStatus = Type.String({
  description: '`enabled` or `disabled` (by the merchant, after a 410 Gone, or after failing for 3 days)',
});
export const Endpoint = Type.Object(
  {
    id: Type.String({ description: 'whe_<uuid>' }),
    url: Type.String(),
    event_types: Type.Array(Type.String()),
    status: EndpointStatus,
    disabled_reason: Type.String({ description: "'' when enabled; `merchant`, `gone` (410) or `failing`" }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'WebhookEndpoint' },
);
export const Secret = Type.String({
  description: '`whsec_<base64 of 32 bytes>`: shown only in this response. Verify with the Standard Webhooks scheme.',
});
export const CreatedEndpoint = Type.Object({
  id: Type.String(),
  url: Type.String(),
  event_types: Type.Array(Type.String()),
  secret: Secret,
  status: EndpointStatus,
  created_at: Type.String({ format: 'date-time' }),
});
export const RolledEndpoint = Type.Object({
  ...Endpoint.properties,
  secret: Secret,
  previous_secret_expires_at: Type.String({
    description: "When the previous secret stops signing; '' when it already has",
  }),
});
export const DeletedEndpoint = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });
export const RequeueResult = Type.Object({ queued: Type.Integer(), has_more: Type.Boolean() });
export const IdParams = (prefix: string) =>
  Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: `${prefix}_ prefix optional` }) });
export const Delivery = Type.Object(
  {
    id: Type.String({ description: 'whd_<uuid>' }),
    event_id: Type.String(),
    event_type: Type.String(),
    status: Type.String({
      description:
        '`pending`, `sent`, `failed`, `dead`, `no_subscriber` (no endpoint was enabled and subscribed to the ' +
        "type at the event's time, whatever was created or changed since); treat any other value as unknown, " +
        'never as a failure',
    }),
    attempts: Type.Integer(),
    last_http_status: Type.Integer({ description: '0 if never answered' }),
    next_attempt_at: Type.String({ description: "ISO 8601, or '' when no attempt is planned" }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'WebhookDelivery' },
);

/**
 * The `status` filter: the delivery statuses as an enum, beside any other string (an open enum):
 * '' means all and an unknown value, of any length, answers an empty page, as the contract says,
 * so validation must not refuse them (the request line's size limit bounds it).
 */
export const DeliveryStatusFilter = Type.Unsafe<string>({
  anyOf: [{ type: 'string', enum: [...deliveryStatuses] }, { type: 'string' }],
  description: 'One of the delivery statuses; empty means all; any other value answers an empty page.',
});
