import { Type } from 'typebox';
import { PageQuery } from '../../platform/routes/pagination.js';
import { idParams } from '../../platform/routes/route-kinds.js';

/** The event object: exactly the webhook body (the reference's Events section; `eventBody` renders both). */
export const Event = Type.Object(
  {
    event_id: Type.String({ description: '`evt_<...>`; the `webhook-id` of its webhook requests' }),
    event_type: Type.String({
      description: 'One of the event catalogue (the `webhooks` of this document); treat any other value as unknown.',
    }),
    created_at: Type.String({
      format: 'date-time',
      description: "When the event happened, on the merchant's clock (a sandbox merchant's own time)",
    }),
    merchant_id: Type.String(),
    livemode: Type.Boolean({ description: 'true in production, false in the sandbox' }),
    data: Type.Object(
      {
        object: Type.String({ description: 'The kind of object `id` names' }),
        id: Type.String(),
        external_member_id: Type.String({
          description: "The member's external id; '' when the object belongs to no member",
        }),
        status: Type.String(),
        status_version: Type.Integer({ minimum: 0 }),
      },
      { title: 'EventData' },
    ),
  },
  { title: 'Event' },
);

export const TypeFilter = Type.String({
  maxLength: 100,
  description:
    'An exact event type (`deposit.credited`) or a prefix ending in `.*` (`card.*`, `card.transaction.*`); ' +
    '`*` or empty: every type. An unknown type answers an empty page (the stream: no event).',
});

export const EventsQuery = Type.Object({
  ...PageQuery.properties,
  type: Type.Optional(TypeFilter),
  object_id: Type.Optional(
    Type.String({ maxLength: 200, description: 'Events of this object (`data.id`), such as `wdr_...`' }),
  ),
  created_gte: Type.Optional(
    Type.String({ format: 'date-time', description: 'Events created at or after (ISO 8601)' }),
  ),
  created_lt: Type.Optional(Type.String({ format: 'date-time', description: 'Events created before (ISO 8601)' })),
  delivery_success: Type.Optional(
    Type.Boolean({
      description:
        '`true`: events whose webhook delivery records are all `sent`; `false`: events with at least one ' +
        'record `failed`, `dead` or `no_subscriber`. An event with no record yet, or with records only ' +
        '`sent` and `pending`, matches neither.',
    }),
  ),
});

export const EventParams = idParams('`evt_` prefix optional');

export const StreamQuery = Type.Object({ type: Type.Optional(TypeFilter) });
