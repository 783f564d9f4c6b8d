/**
 * Thin resource helpers. Each one is a single `request` (or `paginate`) call.
 * Writes that create objects or move money get an idempotency key (UUID v4) per call unless
 * the caller passes one; non-paged lists resolve with their `data` array.
 */

import { randomUUID } from 'node:crypto';
import type { RequestOptions } from './client.js';
import type { PaginateOptions } from './pagination.js';
import { createRemittanceResource, type RemittanceResource } from './remittance.js';
import { createEarnResource, createExchangeResource, type EarnResource, type ExchangeResource } from './exchange.js';
import { createCardsResource, type CardsResource } from './cards.js';
import { constructEvent } from './webhooks.js';
import type {
  Asset,
  Balance,
  CreateDepositBody,
  CreateMemberBody,
  CreateQrPaymentBody,
  CreateWebhookEndpointBody,
  CreatedWebhookEndpoint,
  DecodedQr,
  DeletedWebhookEndpoint,
  CreateWithdrawalBody,
  Deposit,
  DepositListFilters,
  HostedScreenSandboxOutcome,
  HostedScreenSettings,
  HostedScreenTicket,
  HostedScreenTicketState,
  KycProfileReview,
  KycRequirement,
  KycReviewBody,
  ListEnvelope,
  Member,
  MemberSuspension,
  MerchantBalance,
  MerchantDepositAddress,
  QrPayment,
  QrPaymentStatus,
  QrScheme,
  Redelivery,
  RolledWebhookEndpoint,
  SandboxClock,
  SandboxReset,
  SessionRevocation,
  UpdateWebhookEndpointBody,
  UpstreamBehaviorPreset,
  WebhookDelivery,
  WebhookDeliveryStatus,
  WebhookEndpoint,
  WebhookRequeueBody,
  WebhookRequeueResult,
  Withdrawal,
  WithdrawalConfirmation,
  WithdrawalListFilters,
} from './types.js';

/** Options accepted by every write helper. */
export interface WriteOptions {
  /** Idempotency key to use instead of a generated one (pass the same key to retry a call yourself). */
  idempotencyKey?: string;
  /**
   * `x-step-up`: the `challenge_id` of a completed step-up challenge. Repeat the refused call with
   * the same body and the same `idempotencyKey` (`StepUpRequiredError.idempotencyKey`), or call
   * `StepUpRequiredError.repeat()`.
   */
  stepUp?: string;
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
    /**
     * POST /v1/merchant/deposit-address (idempotent): a new address from the chain provider. On
     * `service_unavailable` retry after `retry_after` seconds with the same `idempotencyKey` (the same key always yields the same address).
     */
    requestDepositAddress(body: { asset: string; network: string }, opts?: WriteOptions): Promise<MerchantDepositAddress>;
    /** GET /v1/merchant/deposit-addresses, every page, newest first; optional `asset` and `network`. */
    depositAddresses(opts?: { asset?: string; network?: string; limit?: number }): AsyncIterable<MerchantDepositAddress>;
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
    /** GET /v1/withdrawals, every page, newest first; on behalf of a member: only its own; as the merchant: all. */
    list(opts?: WithdrawalListFilters & { onBehalfOf?: string; limit?: number }): AsyncIterable<Withdrawal>;
    /** POST /v1/withdrawals/{id}/confirm (idempotent): the on-chain payout succeeded. */
    confirm(id: string, opts?: WriteOptions): Promise<WithdrawalConfirmation>;
    /** POST /v1/withdrawals/{id}/fail (idempotent): the payout could not be made; funds return to available. */
    fail(id: string, opts?: WriteOptions): Promise<Withdrawal>;
  };
  webhooks: {
    /** POST /v1/webhooks/endpoints (idempotent). The response's `secret` is shown only here. */
    createEndpoint(body: CreateWebhookEndpointBody, opts?: WriteOptions): Promise<CreatedWebhookEndpoint>;
    /** GET /v1/webhooks/endpoints: the `data` array. */
    listEndpoints(): Promise<WebhookEndpoint[]>;
    /** PATCH /v1/webhooks/endpoints/{id}: status (`enabled` / `disabled`), event types and/or URL. */
    updateEndpoint(id: string, body: UpdateWebhookEndpointBody, opts?: WriteOptions): Promise<WebhookEndpoint>;
    /** PATCH /v1/webhooks/endpoints/{id} `{status: "disabled"}`: pauses the endpoint. */
    disableEndpoint(id: string, opts?: WriteOptions): Promise<WebhookEndpoint>;
    /** PATCH /v1/webhooks/endpoints/{id} `{status: "enabled"}`: re-enables it (requeue its dead deliveries separately). */
    enableEndpoint(id: string, opts?: WriteOptions): Promise<WebhookEndpoint>;
    /** POST /v1/webhooks/endpoints/{id}/roll-secret (idempotent): a new secret; the previous one signs beside it for `overlapSeconds` (server default when omitted; 0 drops it now). */
    rollSecret(id: string, opts?: WriteOptions & { overlapSeconds?: number }): Promise<RolledWebhookEndpoint>;
    /** DELETE /v1/webhooks/endpoints/{id} (signed, no idempotency key; a repeat answers the same). */
    deleteEndpoint(id: string): Promise<DeletedWebhookEndpoint>;
    /** GET /v1/webhooks/deliveries, every page. */
    deliveries(opts?: { status?: WebhookDeliveryStatus | (string & {}); limit?: number }): AsyncIterable<WebhookDelivery>;
    /** POST /v1/webhooks/deliveries/{id}/redeliver (idempotent). */
    redeliver(id: string, opts?: WriteOptions): Promise<Redelivery>;
    /** POST /v1/webhooks/deliveries/requeue (idempotent): `failed` and/or `dead` records since a time, a batch per call (`has_more`: call again). */
    requeueDeliveries(body: { since: string | Date; status?: WebhookRequeueBody['status'] }, opts?: WriteOptions): Promise<WebhookRequeueResult>;
    /** Verifies an incoming webhook request and returns its event; throws `MerchantWalletSignatureVerificationError` (no request is made). */
    constructEvent: typeof constructEvent;
  };
  qrpay: {
    /** GET /v1/qrpay/schemes (either principal): the `data` array. */
    schemes(opts?: { onBehalfOf?: string }): Promise<QrScheme[]>;
    /** POST /v1/qrpay/decode (on behalf of a member; read-only). */
    decode(qrCode: string, opts: OnBehalfOfOptions): Promise<DecodedQr>;
    /** POST /v1/qrpay/payments (idempotent): on `UpstreamError` retry with the same key to resume the same order. */
    pay(body: CreateQrPaymentBody, opts: OnBehalfOfOptions & WriteOptions): Promise<QrPayment>;
    /** GET /v1/qrpay/payments/{id}; `qrp_` prefix optional. */
    get(id: string, opts?: { onBehalfOf?: string }): Promise<QrPayment>;
    /** GET /v1/qrpay/payments, every page, newest first; on behalf of a member: its own. */
    list(opts?: { onBehalfOf?: string; status?: QrPaymentStatus; limit?: number }): AsyncIterable<QrPayment>;
  };
  kyc: {
    /** POST /v1/kyc/sessions (idempotent): the hosted KYC screen for the member's first profile. 409 `duplicate_resource` when it has one. */
    createSession(opts: OnBehalfOfOptions & WriteOptions): Promise<HostedScreenTicket>;
    /** POST /v1/kyc/profile-sessions (idempotent): the pre-filled update screen. 404 `not_found` when the member has no profile yet. */
    createProfileSession(opts: OnBehalfOfOptions & WriteOptions): Promise<HostedScreenTicket>;
    /** GET /v1/kyc/requirements: the `data` array (minimum level per business). */
    requirements(opts?: { onBehalfOf?: string }): Promise<KycRequirement[]>;
    /** GET /v1/kyc/profiles/{id}: the profile a `kyc.profile.*` event names (status and level, no personal data); `kyp_` prefix optional. */
    getProfile(id: string, opts?: { onBehalfOf?: string }): Promise<KycProfileReview>;
    /** Sandbox: POST /v1/sandbox/kyc/{member_id}/review (idempotent): decides the member's pending review. */
    sandboxReview(memberId: string, body: KycReviewBody, opts?: WriteOptions): Promise<KycProfileReview>;
  };
  hostedScreens: {
    /** GET /v1/hosted-screens/settings. */
    getSettings(): Promise<HostedScreenSettings>;
    /** PUT /v1/hosted-screens/settings (idempotent): the origins allowed to frame the screens. */
    putSettings(body: HostedScreenSettings, opts?: WriteOptions): Promise<HostedScreenSettings>;
    /** Sandbox: POST /v1/sandbox/hosted-screens/{ticket_id}/complete (idempotent): finishes a screen without a browser. */
    sandboxComplete(ticketId: string, outcome: HostedScreenSandboxOutcome, opts?: WriteOptions): Promise<HostedScreenTicketState>;
  };
  /** Sandbox tools: 404 `not_found` on a production host. */
  sandbox: {
    /** GET /v1/sandbox/clock: this merchant's sandbox time (`now`, ISO 8601). */
    clock(): Promise<SandboxClock>;
    /**
     * POST /v1/sandbox/clock/advance (idempotent): moves the clock forward by `seconds` (an integer
     * from 1 to 31,536,000) and answers once every timed process due on the way (expiries, webhook
     * retries, ...) has run. Replaces sleeping in a merchant's tests.
     */
    advanceClock(seconds: number, opts?: WriteOptions): Promise<SandboxClock>;
    /** POST /v1/sandbox/upstream-behavior (idempotent): presets one upstream's answer for an hour of the sandbox clock. */
    presetUpstreamBehavior(body: { upstream: string; behavior: string }, opts?: WriteOptions): Promise<UpstreamBehaviorPreset>;
    /** POST /v1/sandbox/reset (idempotent): clears this merchant's sandbox logs and presets (never money). */
    reset(opts?: WriteOptions): Promise<SandboxReset>;
  };
  /** Payees, their form schema and name check, settlement dates, remittance orders (remittance.ts). */
  remittance: RemittanceResource;
  /** Exchange quotes (read-only or locked), exchange orders, merchant conversions (exchange.ts). */
  exchange: ExchangeResource;
  /** Earn products, subscriptions, positions, redemption (exchange.ts). */
  earn: EarnResource;
  /** Card issuing: products, applications, supplement, the card record, activation (cards.ts). */
  cards: CardsResource;
}

const seg = (id: string): string => {
  if (typeof id !== 'string' || id === '') throw new TypeError('id must be a non-empty string');
  return encodeURIComponent(id);
};

const key = (opts?: WriteOptions): string => opts?.idempotencyKey ?? randomUUID();
/** What every write helper sends from its options: the key (generated once per call) and `x-step-up`. */
const writeOpts = (opts?: WriteOptions) => ({ idempotencyKey: key(opts), stepUp: opts?.stepUp });

const isoTime = (t: string | Date | undefined): string | undefined => (t instanceof Date ? t.toISOString() : t);

export function createResources(host: ResourceHost): Resources {
  const data = async <T>(p: Promise<ListEnvelope<T>>): Promise<T[]> => (await p).data;
  const updateEndpoint = (id: string, body: UpdateWebhookEndpointBody, opts?: WriteOptions) =>
    host.request<WebhookEndpoint>({ method: 'PATCH', path: `/v1/webhooks/endpoints/${seg(id)}`, body, ...writeOpts(opts) });

  return {
    members: {
      create: (body, opts) => host.request<Member>({ method: 'POST', path: '/v1/members', body, ...writeOpts(opts) }),
      get: (id) => host.request<Member>({ method: 'GET', path: `/v1/members/${seg(id)}` }),
      suspend: (id, opts) =>
        host.request<MemberSuspension>({ method: 'POST', path: `/v1/members/${seg(id)}/suspend`, ...writeOpts(opts) }),
      revokeSessions: (externalId, opts) =>
        host.request<SessionRevocation>({
          method: 'POST',
          path: `/v1/members/${seg(externalId)}/sessions/revoke`,
          ...writeOpts(opts),
        }),
    },
    deposits: {
      create: (body, opts) => host.request<Deposit>({ method: 'POST', path: '/v1/deposits', body, ...writeOpts(opts) }),
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
      requestDepositAddress: (body, opts) =>
        host.request<MerchantDepositAddress>({ method: 'POST', path: '/v1/merchant/deposit-address', body, ...writeOpts(opts) }),
      depositAddresses: (opts) =>
        host.paginate<MerchantDepositAddress>('/v1/merchant/deposit-addresses', { query: { asset: opts?.asset, network: opts?.network }, limit: opts?.limit }),
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
          ...writeOpts(opts),
        }),
      get: (id, opts) => host.request<Withdrawal>({ method: 'GET', path: `/v1/withdrawals/${seg(id)}`, onBehalfOf: opts?.onBehalfOf }),
      list: (opts) => host.paginate<Withdrawal>('/v1/withdrawals', { query: { status: opts?.status }, onBehalfOf: opts?.onBehalfOf, limit: opts?.limit }),
      confirm: (id, opts) =>
        host.request<WithdrawalConfirmation>({ method: 'POST', path: `/v1/withdrawals/${seg(id)}/confirm`, ...writeOpts(opts) }),
      fail: (id, opts) => host.request<Withdrawal>({ method: 'POST', path: `/v1/withdrawals/${seg(id)}/fail`, ...writeOpts(opts) }),
    },
    webhooks: {
      createEndpoint: (body, opts) =>
        host.request<CreatedWebhookEndpoint>({ method: 'POST', path: '/v1/webhooks/endpoints', body, ...writeOpts(opts) }),
      listEndpoints: () => data(host.request<ListEnvelope<WebhookEndpoint>>({ method: 'GET', path: '/v1/webhooks/endpoints' })),
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
        host.request<DeletedWebhookEndpoint>({ method: 'DELETE', path: `/v1/webhooks/endpoints/${seg(id)}`, idempotencyKey: false }),
      deliveries: (opts) =>
        host.paginate<WebhookDelivery>('/v1/webhooks/deliveries', {
          query: { status: opts?.status },
          limit: opts?.limit,
        }),
      redeliver: (id, opts) =>
        host.request<Redelivery>({ method: 'POST', path: `/v1/webhooks/deliveries/${seg(id)}/redeliver`, ...writeOpts(opts) }),
      requeueDeliveries: (body, opts) =>
        host.request<WebhookRequeueResult>({
          method: 'POST',
          path: '/v1/webhooks/deliveries/requeue',
          body: { since: isoTime(body.since), ...(body.status !== undefined ? { status: body.status } : {}) },
          ...writeOpts(opts),
        }),
      constructEvent,
    },
    qrpay: {
      schemes: (opts) => data(host.request<ListEnvelope<QrScheme>>({ method: 'GET', path: '/v1/qrpay/schemes', onBehalfOf: opts?.onBehalfOf })),
      decode: (qrCode, opts) =>
        host.request<DecodedQr>({ method: 'POST', path: '/v1/qrpay/decode', body: { qr_code: qrCode }, onBehalfOf: opts.onBehalfOf, idempotencyKey: false }),
      pay: (body, opts) =>
        host.request<QrPayment>({ method: 'POST', path: '/v1/qrpay/payments', body, onBehalfOf: opts.onBehalfOf, ...writeOpts(opts) }),
      get: (id, opts) => host.request<QrPayment>({ method: 'GET', path: `/v1/qrpay/payments/${seg(id)}`, onBehalfOf: opts?.onBehalfOf }),
      list: (opts) =>
        host.paginate<QrPayment>('/v1/qrpay/payments', { query: { status: opts?.status }, onBehalfOf: opts?.onBehalfOf, limit: opts?.limit }),
    },
    kyc: {
      createSession: (opts) =>
        host.request<HostedScreenTicket>({ method: 'POST', path: '/v1/kyc/sessions', onBehalfOf: opts.onBehalfOf, idempotencyKey: key(opts) }),
      createProfileSession: (opts) =>
        host.request<HostedScreenTicket>({ method: 'POST', path: '/v1/kyc/profile-sessions', onBehalfOf: opts.onBehalfOf, idempotencyKey: key(opts) }),
      requirements: (opts) =>
        data(host.request<ListEnvelope<KycRequirement>>({ method: 'GET', path: '/v1/kyc/requirements', onBehalfOf: opts?.onBehalfOf })),
      getProfile: (id, opts) => host.request<KycProfileReview>({ method: 'GET', path: `/v1/kyc/profiles/${seg(id)}`, onBehalfOf: opts?.onBehalfOf }),
      sandboxReview: (memberId, body, opts) =>
        host.request<KycProfileReview>({ method: 'POST', path: `/v1/sandbox/kyc/${seg(memberId)}/review`, body, idempotencyKey: key(opts) }),
    },
    hostedScreens: {
      getSettings: () => host.request<HostedScreenSettings>({ method: 'GET', path: '/v1/hosted-screens/settings' }),
      putSettings: (body, opts) =>
        host.request<HostedScreenSettings>({ method: 'PUT', path: '/v1/hosted-screens/settings', body, idempotencyKey: key(opts) }),
      sandboxComplete: (ticketId, outcome, opts) =>
        host.request<HostedScreenTicketState>({
          method: 'POST',
          path: `/v1/sandbox/hosted-screens/${seg(ticketId)}/complete`,
          body: { outcome },
          idempotencyKey: key(opts),
        }),
    },
    sandbox: {
      clock: () => host.request<SandboxClock>({ method: 'GET', path: '/v1/sandbox/clock' }),
      advanceClock: (seconds, opts) =>
        host.request<SandboxClock>({ method: 'POST', path: '/v1/sandbox/clock/advance', body: { seconds }, idempotencyKey: key(opts) }),
      presetUpstreamBehavior: (body, opts) =>
        host.request<UpstreamBehaviorPreset>({ method: 'POST', path: '/v1/sandbox/upstream-behavior', body, idempotencyKey: key(opts) }),
      reset: (opts) => host.request<SandboxReset>({ method: 'POST', path: '/v1/sandbox/reset', idempotencyKey: key(opts) }),
    },
    remittance: createRemittanceResource(host),
    exchange: createExchangeResource(host),
    earn: createEarnResource(host),
    cards: createCardsResource(host),
  };
}
