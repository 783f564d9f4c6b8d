/** Webhook endpoints and deliveries, and `constructEvent` for incoming requests. */
import { constructEvent } from '../webhooks.js';
import type {
  CreateWebhookEndpointBody,
  CreatedWebhookEndpoint,
  DeletedWebhookEndpoint,
  ListEnvelope,
  Redelivery,
  RolledWebhookEndpoint,
  UpdateWebhookEndpointBody,
  WebhookDelivery,
  WebhookDeliveryStatus,
  WebhookEndpoint,
  WebhookReplayResult,
  WebhookRequeueBody,
  WebhookRequeueResult,
} from '../types.js';
import { seg, writeOpts, isoTime, data, type ResourceHost, type WriteOptions } from './shared.js';

export interface WebhooksResource {
  /** POST /v1/webhooks/endpoints (idempotent). The response's `secret` is shown only here. */
  createEndpoint(body: CreateWebhookEndpointBody, opts?: WriteOptions): Promise<CreatedWebhookEndpoint>;
  /** GET /v1/webhooks/endpoints: the `data` array. */
  listEndpoints(): Promise<WebhookEndpoint[]>;
  /** PATCH /v1/webhooks/endpoints/{id}: status (`enabled` / `disabled`), event types and/or URL. */
  updateEndpoint(id: string, body: UpdateWebhookEndpointBody, opts?: WriteOptions): Promise<WebhookEndpoint>;
  /** PATCH /v1/webhooks/endpoints/{id} `{status: "disabled"}`: pauses the endpoint. */
  disableEndpoint(id: string, opts?: WriteOptions): Promise<WebhookEndpoint>;
  /** PATCH /v1/webhooks/endpoints/{id} `{status: "enabled"}`: re-enables it (requeue its dead deliveries separately).
   * */
  enableEndpoint(id: string, opts?: WriteOptions): Promise<WebhookEndpoint>;
  /** POST /v1/webhooks/endpoints/{id}/roll-secret (idempotent): a new secret; the previous one signs beside it for
   * `overlapSeconds` (server default when omitted; 0 drops it now). */
  rollSecret(id: string, opts?: WriteOptions & { overlapSeconds?: number }): Promise<RolledWebhookEndpoint>;
  /** DELETE /v1/webhooks/endpoints/{id} (signed, no idempotency key; a repeat answers the same). */
  deleteEndpoint(id: string): Promise<DeletedWebhookEndpoint>;
  /** GET /v1/webhooks/deliveries, every page. */
  deliveries(opts?: { status?: WebhookDeliveryStatus | (string & {}); limit?: number }): AsyncIterable<WebhookDelivery>;
  /** POST /v1/webhooks/deliveries/{id}/redeliver (idempotent). */
  redeliver(id: string, opts?: WriteOptions): Promise<Redelivery>;
  /** POST /v1/webhooks/deliveries/requeue (idempotent): `failed` and/or `dead` records since a time, a batch per call
   * (`has_more`: call again). */
  requeueDeliveries(
    body: { since: string | Date; status?: WebhookRequeueBody['status'] },
    opts?: WriteOptions,
  ): Promise<WebhookRequeueResult>;
  /**
   * POST /v1/webhooks/endpoints/{id}/replay (idempotent): queues a new delivery to this endpoint
   * of every kept event created in [`since`, `until`) that it subscribes to; with `only_failed`
   * (the default) only those whose delivery to it was not `sent`. Answers `{id, queued}`.
   */
  replay(
    id: string,
    body: { since: string | Date; until?: string | Date; only_failed?: boolean },
    opts?: WriteOptions,
  ): Promise<WebhookReplayResult>;
  /** Verifies an incoming webhook request and returns its event; throws `MerchantWalletSignatureVerificationError` (no
   * request is made). */
  constructEvent: typeof constructEvent;
}

export function createWebhooksResource(host: ResourceHost): WebhooksResource {
  const updateEndpoint = (id: string, body: UpdateWebhookEndpointBody, opts?: WriteOptions) =>
    host.request<WebhookEndpoint>({
      method: 'PATCH',
      path: `/v1/webhooks/endpoints/${seg(id)}`,
      body,
      ...writeOpts(opts),
    });
  return {
    createEndpoint: (body, opts) =>
      host.request<CreatedWebhookEndpoint>({
        method: 'POST',
        path: '/v1/webhooks/endpoints',
        body,
        ...writeOpts(opts),
      }),
    listEndpoints: () =>
      data(host.request<ListEnvelope<WebhookEndpoint>>({ method: 'GET', path: '/v1/webhooks/endpoints' })),
    updateEndpoint: (id, body, opts) => updateEndpoint(id, body, opts),
    disableEndpoint: (id, opts) => updateEndpoint(id, { status: 'disabled' }, opts),
    enableEndpoint: (id, opts) => updateEndpoint(id, { status: 'enabled' }, opts),
    rollSecret: (id, opts) =>
      host.request<RolledWebhookEndpoint>({
        method: 'POST',
        path: `/v1/webhooks/endpoints/${seg(id)}/roll-secret`,
        body: opts?.overlapSeconds === undefined ? {} : { overlap_seconds: opts.overlapSeconds },
        ...writeOpts(opts),
      }),
    deleteEndpoint: (id) =>
      host.request<DeletedWebhookEndpoint>({
        method: 'DELETE',
        path: `/v1/webhooks/endpoints/${seg(id)}`,
        idempotencyKey: false,
      }),
    deliveries: (opts) =>
      host.paginate<WebhookDelivery>('/v1/webhooks/deliveries', {
        query: { status: opts?.status },
        limit: opts?.limit,
      }),
    redeliver: (id, opts) =>
      host.request<Redelivery>({
        method: 'POST',
        path: `/v1/webhooks/deliveries/${seg(id)}/redeliver`,
        ...writeOpts(opts),
      }),
    requeueDeliveries: (body, opts) =>
      host.request<WebhookRequeueResult>({
        method: 'POST',
        path: '/v1/webhooks/deliveries/requeue',
        body: { since: isoTime(body.since), ...(body.status !== undefined ? { status: body.status } : {}) },
        ...writeOpts(opts),
      }),
    replay: (id, body, opts) =>
      host.request<WebhookReplayResult>({
        method: 'POST',
        path: `/v1/webhooks/endpoints/${seg(id)}/replay`,
        body: {
          since: isoTime(body.since),
          ...(body.until !== undefined ? { until: isoTime(body.until) } : {}),
          ...(body.only_failed !== undefined ? { only_failed: body.only_failed } : {}),
        },
        ...writeOpts(opts),
      }),
    constructEvent,
  };
}
