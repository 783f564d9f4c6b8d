/**
 * Thin resource helpers. Each one is a single `request` (or `paginate`) call.
 * Writes that create objects or move money get an idempotency key (UUID v4) per call unless
 * the caller passes one; non-paged lists resolve with their `data` array.
 */

import { randomUUID } from 'node:crypto';
import type { RequestOptions } from './client.js';
import type { PaginateOptions } from './pagination.js';
import { createRemittanceResource, type RemittanceResource } from './remittance.js';
import type {
  Asset,
  Balance,
  CreateDepositBody,
  CreateMemberBody,
  CreateWebhookEndpointBody,
  CreateWithdrawalBody,
  Deposit,
  DepositListFilters,
  ListEnvelope,
  Member,
  MemberSuspension,
  MerchantBalance,
  Redelivery,
  SessionRevocation,
  WebhookDelivery,
  WebhookDeliveryStatus,
  WebhookEndpoint,
  Withdrawal,
  WithdrawalConfirmation,
} from './types.js';

/** Options accepted by every write helper. */
export interface WriteOptions {
  /** Idempotency key to use instead of a generated one (pass the same key to retry a call yourself). */
  idempotencyKey?: string;
}

export interface OnBehalfOfOptions {
  /** Member id (`mem_<uuid>` or the merchant's external member id). */
  onBehalfOf: string;
}

/** What the helpers need from the client. */
export interface ResourceHost {
  request<T = unknown>(opts: RequestOptions): Promise<T>;
  paginate<T>(path: string, opts?: PaginateOptions): AsyncIterable<T>;
}

export interface Resources {
  members: {
    /** POST /v1/members (idempotent, signed). 409 `duplicate_resource` when the external id is taken. */
    create(body: CreateMemberBody, opts?: WriteOptions): Promise<Member>;
    /** GET /v1/members/{id}; `id` is `mem_<uuid>` or the external id. */
    get(id: string): Promise<Member>;
    /** POST /v1/members/{id}/suspend (idempotent). */
    suspend(id: string, opts?: WriteOptions): Promise<MemberSuspension>;
    /** POST /v1/members/{external_member_id}/sessions/revoke (idempotent). Only the external id is accepted. */
    revokeSessions(externalId: string, opts?: WriteOptions): Promise<SessionRevocation>;
  };
  deposits: {
    /** POST /v1/deposits (idempotent, always signed). */
    create(body: CreateDepositBody, opts?: WriteOptions): Promise<Deposit>;
    /** GET /v1/deposits/{id}; as the merchant, or on behalf of the owning member. `dep_` prefix optional. */
    get(id: string, opts?: { onBehalfOf?: string }): Promise<Deposit>;
    /** GET /v1/deposits, every page, newest first; on behalf of a member: only its own. */
    list(opts?: DepositListFilters & { onBehalfOf?: string; limit?: number }): AsyncIterable<Deposit>;
  };
  balances: {
    /** GET /v1/balances for one member (not paged): the `data` array. */
    list(opts: OnBehalfOfOptions): Promise<Balance[]>;
  };
  merchant: {
    /** GET /v1/merchant/balances: the `data` array. */
    balances(): Promise<MerchantBalance[]>;
  };
  assets: {
    /** GET /v1/assets: the `data` array. */
    list(): Promise<Asset[]>;
  };
  withdrawals: {
    /** POST /v1/withdrawals for a member (idempotent): locks amount + fee. */
    create(body: CreateWithdrawalBody, opts: OnBehalfOfOptions & WriteOptions): Promise<Withdrawal>;
    /** GET /v1/withdrawals/{id}; as the merchant, or on behalf of the owning member. */
    get(id: string, opts?: { onBehalfOf?: string }): Promise<Withdrawal>;
    /** POST /v1/withdrawals/{id}/confirm (idempotent): the on-chain payout succeeded. */
    confirm(id: string, opts?: WriteOptions): Promise<WithdrawalConfirmation>;
    /** POST /v1/withdrawals/{id}/fail (idempotent): the payout could not be made; funds return to available. */
    fail(id: string, opts?: WriteOptions): Promise<Withdrawal>;
  };
  webhooks: {
    /** POST /v1/webhooks/endpoints (idempotent). The response's `secret` is shown only here. */
    createEndpoint(body: CreateWebhookEndpointBody, opts?: WriteOptions): Promise<WebhookEndpoint>;
    /** GET /v1/webhooks/endpoints: the `data` array. */
    listEndpoints(): Promise<WebhookEndpoint[]>;
    /** DELETE /v1/webhooks/endpoints/{id} (signed, no idempotency key). */
    deleteEndpoint(id: string): Promise<unknown>;
    /** GET /v1/webhooks/deliveries, every page. */
    deliveries(opts?: { status?: WebhookDeliveryStatus | (string & {}); limit?: number }): AsyncIterable<WebhookDelivery>;
    /** POST /v1/webhooks/deliveries/{id}/redeliver (idempotent). */
    redeliver(id: string, opts?: WriteOptions): Promise<Redelivery>;
  };
  /** Payees, their form schema and name check, settlement dates, remittance orders (remittance.ts). */
  remittance: RemittanceResource;
}

const seg = (id: string): string => {
  if (typeof id !== 'string' || id === '') throw new TypeError('id must be a non-empty string');
  return encodeURIComponent(id);
};

const key = (opts?: WriteOptions): string => opts?.idempotencyKey ?? randomUUID();

const isoTime = (t: string | Date | undefined): string | undefined => (t instanceof Date ? t.toISOString() : t);

export function createResources(host: ResourceHost): Resources {
  const data = async <T>(p: Promise<ListEnvelope<T>>): Promise<T[]> => (await p).data;

  return {
    members: {
      create: (body, opts) => host.request<Member>({ method: 'POST', path: '/v1/members', body, idempotencyKey: key(opts) }),
      get: (id) => host.request<Member>({ method: 'GET', path: `/v1/members/${seg(id)}` }),
      suspend: (id, opts) =>
        host.request<MemberSuspension>({ method: 'POST', path: `/v1/members/${seg(id)}/suspend`, idempotencyKey: key(opts) }),
      revokeSessions: (externalId, opts) =>
        host.request<SessionRevocation>({
          method: 'POST',
          path: `/v1/members/${seg(externalId)}/sessions/revoke`,
          idempotencyKey: key(opts),
        }),
    },
    deposits: {
      create: (body, opts) => host.request<Deposit>({ method: 'POST', path: '/v1/deposits', body, idempotencyKey: key(opts) }),
      get: (id, opts) => host.request<Deposit>({ method: 'GET', path: `/v1/deposits/${seg(id)}`, onBehalfOf: opts?.onBehalfOf }),
      list: (opts) =>
        host.paginate<Deposit>('/v1/deposits', {
          query: {
            member_id: opts?.member_id,
            asset: opts?.asset,
            created_gte: isoTime(opts?.created_gte),
            created_lt: isoTime(opts?.created_lt),
          },
          onBehalfOf: opts?.onBehalfOf,
          limit: opts?.limit,
        }),
    },
    balances: {
      list: (opts) => data(host.request<ListEnvelope<Balance>>({ method: 'GET', path: '/v1/balances', onBehalfOf: opts.onBehalfOf })),
    },
    merchant: {
      balances: () => data(host.request<ListEnvelope<MerchantBalance>>({ method: 'GET', path: '/v1/merchant/balances' })),
    },
    assets: {
      list: () => data(host.request<ListEnvelope<Asset>>({ method: 'GET', path: '/v1/assets' })),
    },
    withdrawals: {
      create: (body, opts) =>
        host.request<Withdrawal>({
          method: 'POST',
          path: '/v1/withdrawals',
          body,
          onBehalfOf: opts.onBehalfOf,
          idempotencyKey: key(opts),
        }),
      get: (id, opts) => host.request<Withdrawal>({ method: 'GET', path: `/v1/withdrawals/${seg(id)}`, onBehalfOf: opts?.onBehalfOf }),
      confirm: (id, opts) =>
        host.request<WithdrawalConfirmation>({ method: 'POST', path: `/v1/withdrawals/${seg(id)}/confirm`, idempotencyKey: key(opts) }),
      fail: (id, opts) => host.request<Withdrawal>({ method: 'POST', path: `/v1/withdrawals/${seg(id)}/fail`, idempotencyKey: key(opts) }),
    },
    webhooks: {
      createEndpoint: (body, opts) =>
        host.request<WebhookEndpoint>({ method: 'POST', path: '/v1/webhooks/endpoints', body, idempotencyKey: key(opts) }),
      listEndpoints: () => data(host.request<ListEnvelope<WebhookEndpoint>>({ method: 'GET', path: '/v1/webhooks/endpoints' })),
      deleteEndpoint: (id) =>
        host.request<unknown>({ method: 'DELETE', path: `/v1/webhooks/endpoints/${seg(id)}`, idempotencyKey: false }),
      deliveries: (opts) =>
        host.paginate<WebhookDelivery>('/v1/webhooks/deliveries', {
          query: { status: opts?.status },
          limit: opts?.limit,
        }),
      redeliver: (id, opts) =>
        host.request<Redelivery>({ method: 'POST', path: `/v1/webhooks/deliveries/${seg(id)}/redeliver`, idempotencyKey: key(opts) }),
    },
    remittance: createRemittanceResource(host),
  };
}
