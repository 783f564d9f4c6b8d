/**
 * Card issuing: products, applications and their supplement screen, the card record, activation,
 * and the sandbox helpers (advance an application, ship a card). One helper per call, like the other resources.
 */
import type { Schemas } from '../schemas.js';
import { randomUUID } from 'node:crypto';
import { createCardMoneyMethods, type CardMoneyMethods, type CardsHost } from './card-money.js';

export type { CardsHost } from './card-money.js';

export interface CardAddress {
  address: string;
  city: string;
  state?: string;
  country: string;
  postal_code: string;
}
export type CardProduct = Schemas['CardProduct'];
export type CardApplication = Schemas['CardApplication'];
export type Card = Schemas['Card'];
export type CardMerchantRules = Schemas['CardMerchantRules'];
export interface CardLimitsInput {
  single?: string;
  daily?: string;
  monthly?: string;
}
export interface CardMerchantRulesInput {
  rule_type: 'white' | 'black';
  merchant_names?: string[];
  mcc_list?: string[];
}
export type CardTicket = Schemas['CardScreenTicket'];
export type CardReplacementReason =
  | 'pan_leaked'
  | 'stolen'
  | 'pin_locked'
  | 'damaged'
  | 'user_request'
  | 'expiring'
  | 'lost_in_transit'
  | 'not_received'
  | 'production_error'
  | 'name_error';
export type CardReplacement = Schemas['CardReplacement'];

interface Opts {
  onBehalfOf: string;
  idempotencyKey?: string;
  stepUp?: string;
}

export interface CardsResource {
  /** GET /v1/cards/products (merchant principal). */
  products(): Promise<CardProduct[]>;
  /** POST /v1/cards/applications (signed, on behalf of a member). */
  apply(
    body: { product_id: string; source_asset: string; shipping_address?: CardAddress },
    opts: Opts,
  ): Promise<CardApplication>;
  /** GET /v1/cards/applications/{id}. */
  getApplication(id: string, opts?: { onBehalfOf?: string }): Promise<CardApplication>;
  /** POST /v1/cards/applications/{id}/supplement-sessions: the hosted supplement screen. */
  createSupplementSession(applicationId: string, opts: Opts): Promise<CardTicket>;
  /** GET /v1/cards (all pages). */
  list(opts: { onBehalfOf: string; limit?: number }): AsyncIterable<Card>;
  /** GET /v1/cards/{id}. */
  get(id: string, opts?: { onBehalfOf?: string }): Promise<Card>;
  /** POST /v1/cards/{id}/activate (step-up: catch `StepUpRequiredError`, then `err.repeat()`). */
  activate(id: string, body: { expiry: string; pin: string }, opts: Opts): Promise<Schemas['ActivateCardResponse']>;
  /** PATCH /v1/cards/{id}/limits: recorded at once, pushed to the issuer afterwards (`limits_sync` on the card). */
  setLimits(
    id: string,
    body: CardLimitsInput,
    opts: { onBehalfOf: string; idempotencyKey?: string },
  ): Promise<Schemas['UpdateCardLimitsResponse']>;
  /** GET /v1/cards/{id}/merchant-rules. */
  getMerchantRules(id: string, opts: { onBehalfOf: string }): Promise<CardMerchantRules>;
  /** PUT /v1/cards/{id}/merchant-rules: replaces the whole set (on `UpstreamError` retry with the same key). */
  setMerchantRules(id: string, body: CardMerchantRulesInput, opts: Opts): Promise<CardMerchantRules>;
  /** DELETE /v1/cards/{id}/merchant-rules. */
  deleteMerchantRules(id: string, opts: Opts): Promise<CardMerchantRules>;
  /** PATCH /v1/cards/{id}/billing-address: synchronous; 200 means the issuer confirmed. */
  updateBillingAddress(id: string, body: CardAddress, opts: Opts): Promise<Schemas['UpdateCardBillingAddressResponse']>;
  /** POST /v1/cards/{id}/cvv/unblock (5 per member per hour); read `cvv_blocked` from `get`. */
  unblockCvv(id: string, opts: Opts): Promise<Schemas['UnblockCardCvvResponse']>;
  /** POST /v1/cards/{id}/secure-session (scope `cards:secure`): the hosted reveal screen; the card details are only
   * ever on that page. */
  createSecureSession(id: string, opts: Opts): Promise<CardTicket>;
  /** Sandbox: POST /v1/sandbox/cards/applications/{id}/advance. */
  sandboxAdvanceApplication(
    id: string,
    to: 'need_docs' | 'approved' | 'rejected',
    opts?: { idempotencyKey?: string },
  ): Promise<CardApplication>;
  /** Sandbox: POST /v1/sandbox/cards/{id}/ship. */
  sandboxShip(id: string, opts?: { idempotencyKey?: string }): Promise<Card>;
  /** POST /v1/cards/{id}/replacements: only creates the request (`requested`); the service's executor carries it out.
   * */
  requestReplacement(
    id: string,
    body: { reason: CardReplacementReason | (string & {}); note?: string },
    opts: Opts,
  ): Promise<Schemas['CardReplacementRequested']>;
  /** GET /v1/cards/replacements/{id}. */
  getReplacement(id: string, opts?: { onBehalfOf?: string }): Promise<CardReplacement>;
  /** GET /v1/cards/replacements (all pages, newest first); `cardId` narrows it to one card. */
  listReplacements(opts?: { onBehalfOf?: string; cardId?: string; limit?: number }): AsyncIterable<CardReplacement>;
  /** POST /v1/cards/{id}/close: `closed` when the issuer confirmed, `closing` while its answer is pending. */
  close(id: string, opts: Opts): Promise<Schemas['CloseCardResponse']>;
}

const seg = (id: string): string => {
  if (typeof id !== 'string' || id === '') throw new TypeError('id must be a non-empty string');
  return encodeURIComponent(id);
};

export function createCardsResource(host: CardsHost): CardsResource {
  const key = (o?: { idempotencyKey?: string }) => o?.idempotencyKey ?? randomUUID();
  return {
    products: async () =>
      (await host.request<{ data: CardProduct[] }>({ method: 'GET', path: '/v1/cards/products' })).data,
    apply: (body, o) =>
      host.request({
        method: 'POST',
        path: '/v1/cards/applications',
        body,
        onBehalfOf: o.onBehalfOf,
        idempotencyKey: key(o),
        stepUp: o.stepUp,
      }),
    getApplication: (id, o) =>
      host.request({ method: 'GET', path: `/v1/cards/applications/${seg(id)}`, onBehalfOf: o?.onBehalfOf }),
    createSupplementSession: (id, o) =>
      host.request({
        method: 'POST',
        path: `/v1/cards/applications/${seg(id)}/supplement-sessions`,
        onBehalfOf: o.onBehalfOf,
        idempotencyKey: key(o),
      }),
    list: (o) => host.paginate<Card>('/v1/cards', { onBehalfOf: o.onBehalfOf, limit: o.limit }),
    get: (id, o) => host.request({ method: 'GET', path: `/v1/cards/${seg(id)}`, onBehalfOf: o?.onBehalfOf }),
    activate: (id, body, o) =>
      host.request({
        method: 'POST',
        path: `/v1/cards/${seg(id)}/activate`,
        body,
        onBehalfOf: o.onBehalfOf,
        idempotencyKey: key(o),
        stepUp: o.stepUp,
      }),
    setLimits: (id, body, o) =>
      host.request({
        method: 'PATCH',
        path: `/v1/cards/${seg(id)}/limits`,
        body,
        onBehalfOf: o.onBehalfOf,
        idempotencyKey: key(o),
      }),
    getMerchantRules: (id, o) =>
      host.request({ method: 'GET', path: `/v1/cards/${seg(id)}/merchant-rules`, onBehalfOf: o.onBehalfOf }),
    setMerchantRules: (id, body, o) =>
      host.request({
        method: 'PUT',
        path: `/v1/cards/${seg(id)}/merchant-rules`,
        body,
        onBehalfOf: o.onBehalfOf,
        idempotencyKey: key(o),
      }),
    deleteMerchantRules: (id, o) =>
      host.request({
        method: 'DELETE',
        path: `/v1/cards/${seg(id)}/merchant-rules`,
        onBehalfOf: o.onBehalfOf,
        idempotencyKey: key(o),
      }),
    updateBillingAddress: (id, body, o) =>
      host.request({
        method: 'PATCH',
        path: `/v1/cards/${seg(id)}/billing-address`,
        body,
        onBehalfOf: o.onBehalfOf,
        idempotencyKey: key(o),
      }),
    unblockCvv: (id, o) =>
      host.request({
        method: 'POST',
        path: `/v1/cards/${seg(id)}/cvv/unblock`,
        onBehalfOf: o.onBehalfOf,
        idempotencyKey: key(o),
      }),
    createSecureSession: (id, o) =>
      host.request({
        method: 'POST',
        path: `/v1/cards/${seg(id)}/secure-session`,
        onBehalfOf: o.onBehalfOf,
        idempotencyKey: key(o),
      }),
    sandboxAdvanceApplication: (id, to, o) =>
      host.request({
        method: 'POST',
        path: `/v1/sandbox/cards/applications/${seg(id)}/advance`,
        body: { to },
        idempotencyKey: key(o),
      }),
    sandboxShip: (id, o) =>
      host.request({ method: 'POST', path: `/v1/sandbox/cards/${seg(id)}/ship`, idempotencyKey: key(o) }),
    ...createCardMoneyMethods(host),
    requestReplacement: (id, body, o) =>
      host.request({
        method: 'POST',
        path: `/v1/cards/${seg(id)}/replacements`,
        body,
        onBehalfOf: o.onBehalfOf,
        idempotencyKey: key(o),
      }),
    getReplacement: (id, o) =>
      host.request({ method: 'GET', path: `/v1/cards/replacements/${seg(id)}`, onBehalfOf: o?.onBehalfOf }),
    listReplacements: (o) =>
      host.paginate<CardReplacement>('/v1/cards/replacements', {
        onBehalfOf: o?.onBehalfOf,
        limit: o?.limit,
        ...(o?.cardId ? { query: { card_id: o.cardId } } : {}),
      }),
    close: (id, o) =>
      host.request({
        method: 'POST',
        path: `/v1/cards/${seg(id)}/close`,
        onBehalfOf: o.onBehalfOf,
        idempotencyKey: key(o),
      }),
  };
}

// A card's money (card-money.ts): top-up quotes and top-ups, transactions, the network's sandbox helpers.
export interface CardsResource extends CardMoneyMethods {}
