/** Shapes of the webhook calls (extensions 5) and of the event envelope a receiver gets; re-exported by types.ts. */

import type { Schemas } from './schemas.js';

export interface CreateWebhookEndpointBody {
  url: string;
  /** Event types, or `["*"]` for all. */
  event_types: string[];
  [extra: string]: unknown;
}

/** A webhook endpoint as listed and updated (never with its secret). */
export type WebhookEndpoint = Schemas['WebhookEndpoint'];

/** `POST /v1/webhooks/endpoints`: the only answer that shows the first secret. */
export type CreatedWebhookEndpoint = Schemas['CreateWebhookEndpointResponse'];

/** `PATCH /v1/webhooks/endpoints/{id}`: at least one field. */
export interface UpdateWebhookEndpointBody {
  /** `enabled` re-enables a disabled endpoint (its failure streak restarts); `disabled` pauses it. */
  status?: 'enabled' | 'disabled';
  /** Replaces the current event types. */
  event_types?: string[];
  /** Replaces the URL (checked again). */
  url?: string;
}

/** `POST /v1/webhooks/endpoints/{id}/roll-secret`: the endpoint with its new secret. */
export type RolledWebhookEndpoint = Schemas['RollWebhookEndpointSecretResponse'];

/** `DELETE /v1/webhooks/endpoints/{id}` (a repeat answers the same). */
export type DeletedWebhookEndpoint = Schemas['DeleteWebhookEndpointResponse'];

/** `POST /v1/webhooks/deliveries/requeue`. */
export interface WebhookRequeueBody {
  /** ISO 8601: records created at or after it. */
  since: string;
  /** Default: both. */
  status?: 'failed' | 'dead';
}

export type WebhookRequeueResult = Schemas['RequeueWebhookDeliveriesResponse'];

/** `POST /v1/webhooks/endpoints/{id}/replay`: the endpoint's id and how many deliveries were queued. */
export type WebhookReplayResult = Schemas['WebhookReplayResult'];

/** Delivery statuses to filter by (the response's `status` may hold others: pass them through). */
export type WebhookDeliveryStatus = 'pending' | 'sent' | 'failed' | 'dead' | 'no_subscriber';

export type WebhookDelivery = Schemas['WebhookDelivery'];

export type Redelivery = Schemas['RedeliverWebhookDeliveryResponse'];

/** An event as `GET /v1/events` and the event stream give it: exactly the webhook body. */
export type ApiEvent = Schemas['Event'];

/** Body of a webhook request (identical envelope for all events). */
export type WebhookEvent = Schemas['WebhookEvent'];
