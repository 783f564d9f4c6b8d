/** Shapes of the webhook calls (extensions 5) and of the event envelope a receiver gets; re-exported by types.ts. */

export interface CreateWebhookEndpointBody {
  url: string;
  /** Event types, or `["*"]` for all. */
  event_types: string[];
  [extra: string]: unknown;
}

/** A webhook endpoint as listed and updated (never with its secret). */
export interface WebhookEndpoint {
  /** `whe_<uuid>`. */
  id: string;
  url: string;
  event_types: string[];
  /** `enabled` or `disabled` (by the merchant, after a 410 Gone, or after failing for 3 days). */
  status: 'enabled' | 'disabled' | (string & {});
  /** `''` when enabled; `merchant`, `gone` (410) or `failing`. */
  disabled_reason: '' | 'merchant' | 'gone' | 'failing' | (string & {});
  created_at: string;
  updated_at: string;
  [extra: string]: unknown;
}

/** `POST /v1/webhooks/endpoints`: the only answer that shows the first secret. */
export interface CreatedWebhookEndpoint {
  id: string;
  url: string;
  event_types: string[];
  /** `whsec_<base64>`; shown only here. */
  secret: string;
  status: 'enabled' | 'disabled' | (string & {});
  created_at: string;
  [extra: string]: unknown;
}

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
export interface RolledWebhookEndpoint extends WebhookEndpoint {
  /** The new `whsec_<base64>`; shown only here. */
  secret: string;
  /** When the previous secret stops signing; `''` when it already has. */
  previous_secret_expires_at: string;
}

/** `DELETE /v1/webhooks/endpoints/{id}` (a repeat answers the same). */
export interface DeletedWebhookEndpoint {
  id: string;
  deleted: true;
}

/** `POST /v1/webhooks/deliveries/requeue`. */
export interface WebhookRequeueBody {
  /** ISO 8601: records created at or after it. */
  since: string;
  /** Default: both. */
  status?: 'failed' | 'dead';
}

export interface WebhookRequeueResult {
  queued: number;
  /** More records were left for another call. */
  has_more: boolean;
}

export type WebhookDeliveryStatus = 'pending' | 'sent' | 'failed' | 'dead' | 'no_subscriber';

export interface WebhookDelivery {
  id: string;
  event_id: string;
  event_type: string;
  /** Unknown statuses must be passed through, never treated as failure. */
  status: WebhookDeliveryStatus | (string & {});
  attempts: number;
  last_http_status: number;
  next_attempt_at: string;
  created_at: string;
  [extra: string]: unknown;
}

export interface Redelivery {
  id: string;
  queued: boolean;
  [extra: string]: unknown;
}

/** Body of a webhook request (identical envelope for all events). */
export interface WebhookEvent {
  event_id: string;
  event_type: string;
  created_at: string;
  merchant_id: string;
  livemode: boolean;
  data: {
    object: string;
    id: string;
    external_member_id: string;
    status: string;
    status_version: number;
    [extra: string]: unknown;
  };
  [extra: string]: unknown;
}
