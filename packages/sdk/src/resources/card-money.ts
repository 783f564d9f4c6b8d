/**
 * A card's money: top-up quotes and top-ups, the card's transactions, and the sandbox helpers of
 * the card network (authorisation, clearing, reversal, refund). Merged into `client.cards`.
 */
import type { Schemas } from '../schemas.js';
import { randomUUID } from 'node:crypto';
import type { QueryParams } from '../types.js';

/** What the card helpers need from the client. */
export interface CardsHost {
  request<T = unknown>(opts: {
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
    path: string;
    query?: QueryParams;
    body?: unknown;
    onBehalfOf?: string;
    idempotencyKey?: string | false;
    stepUp?: string;
  }): Promise<T>;
  paginate<T>(path: string, opts?: { query?: QueryParams; onBehalfOf?: string; limit?: number }): AsyncIterable<T>;
}

export type CardTopUpQuote = Schemas['CardTopupQuote'];
export type CardTopUp = Schemas['CardTopup'];
export type CardTransaction = Schemas['CardTransaction'];
export interface CardAuthorizationInput {
  amount: string;
  currency?: string;
  merchant_name: string;
  mcc: string;
}
export type CardAuthorizationResult = Schemas['SandboxCardAuthorization'];

export interface CardMoneyMethods {
  /** POST /v1/cards/{id}/topup-quotes: a pure estimate (smallest-unit integer strings). */
  quoteTopUp(
    id: string,
    body: { amount: string; source_asset?: string },
    opts: { onBehalfOf: string },
  ): Promise<CardTopUpQuote>;
  /** POST /v1/cards/{id}/topups (signed): 201 `pending` with amount + fee frozen; `credited` when the issuer confirms.
   * */
  topUp(
    id: string,
    body: { amount: string; source_asset?: string },
    opts: { onBehalfOf: string; idempotencyKey?: string },
  ): Promise<CardTopUp>;
  /** GET /v1/cards/{id}/topups/{topup_id}. */
  getTopUp(id: string, topUpId: string, opts?: { onBehalfOf?: string }): Promise<CardTopUp>;
  /** GET /v1/cards/topups/{id}: a top-up by its id alone (`data.id` of a `card.topup.*` event); `ctu_` prefix optional.
   * */
  getTopUpById(topUpId: string, opts?: { onBehalfOf?: string }): Promise<CardTopUp>;
  /** GET /v1/cards/{id}/topups (all pages). */
  listTopUps(id: string, opts?: { onBehalfOf?: string; limit?: number }): AsyncIterable<CardTopUp>;
  /** GET /v1/cards/{id}/transactions (all pages; optional `type`). */
  listTransactions(
    id: string,
    opts?: { onBehalfOf?: string; limit?: number; type?: CardTransaction['type'] },
  ): AsyncIterable<CardTransaction>;
  /** GET /v1/cards/transactions/{id}: a transaction by its id alone (`data.id` of a `card.transaction.*` event); `ctx_`
   * prefix optional. */
  getTransaction(transactionId: string, opts?: { onBehalfOf?: string }): Promise<CardTransaction>;
  /** Sandbox: POST /v1/sandbox/cards/{id}/authorizations. */
  sandboxAuthorize(
    id: string,
    body: CardAuthorizationInput,
    opts?: { idempotencyKey?: string },
  ): Promise<CardAuthorizationResult>;
  /** Sandbox: POST /v1/sandbox/cards/{id}/clearings. */
  sandboxClear(
    id: string,
    body: { transaction_id: string; amount?: string },
    opts?: { idempotencyKey?: string },
  ): Promise<CardTransaction>;
  /** Sandbox: POST /v1/sandbox/cards/{id}/reversals. */
  sandboxReverse(
    id: string,
    body: { transaction_id: string; amount?: string },
    opts?: { idempotencyKey?: string },
  ): Promise<CardTransaction>;
  /** Sandbox: POST /v1/sandbox/cards/{id}/refunds. */
  sandboxRefund(
    id: string,
    body: { transaction_id: string; amount?: string },
    opts?: { idempotencyKey?: string },
  ): Promise<CardTransaction>;
}

const seg = (id: string): string => {
  if (typeof id !== 'string' || id === '') throw new TypeError('id must be a non-empty string');
  return encodeURIComponent(id);
};

export function createCardMoneyMethods(host: CardsHost): CardMoneyMethods {
  const key = (o?: { idempotencyKey?: string }) => o?.idempotencyKey ?? randomUUID();
  return {
    quoteTopUp: (id, body, o) =>
      host.request({
        method: 'POST',
        path: `/v1/cards/${seg(id)}/topup-quotes`,
        body,
        onBehalfOf: o.onBehalfOf,
        idempotencyKey: false,
      }),
    topUp: (id, body, o) =>
      host.request({
        method: 'POST',
        path: `/v1/cards/${seg(id)}/topups`,
        body,
        onBehalfOf: o.onBehalfOf,
        idempotencyKey: key(o),
      }),
    getTopUp: (id, topUpId, o) =>
      host.request({ method: 'GET', path: `/v1/cards/${seg(id)}/topups/${seg(topUpId)}`, onBehalfOf: o?.onBehalfOf }),
    getTopUpById: (topUpId, o) =>
      host.request({ method: 'GET', path: `/v1/cards/topups/${seg(topUpId)}`, onBehalfOf: o?.onBehalfOf }),
    listTopUps: (id, o) =>
      host.paginate<CardTopUp>(`/v1/cards/${seg(id)}/topups`, { onBehalfOf: o?.onBehalfOf, limit: o?.limit }),
    listTransactions: (id, o) =>
      host.paginate<CardTransaction>(`/v1/cards/${seg(id)}/transactions`, {
        onBehalfOf: o?.onBehalfOf,
        limit: o?.limit,
        query: o?.type ? { type: o.type } : undefined,
      }),
    getTransaction: (transactionId, o) =>
      host.request({ method: 'GET', path: `/v1/cards/transactions/${seg(transactionId)}`, onBehalfOf: o?.onBehalfOf }),
    sandboxAuthorize: (id, body, o) =>
      host.request({
        method: 'POST',
        path: `/v1/sandbox/cards/${seg(id)}/authorizations`,
        body,
        idempotencyKey: key(o),
      }),
    sandboxClear: (id, body, o) =>
      host.request({ method: 'POST', path: `/v1/sandbox/cards/${seg(id)}/clearings`, body, idempotencyKey: key(o) }),
    sandboxReverse: (id, body, o) =>
      host.request({ method: 'POST', path: `/v1/sandbox/cards/${seg(id)}/reversals`, body, idempotencyKey: key(o) }),
    sandboxRefund: (id, body, o) =>
      host.request({ method: 'POST', path: `/v1/sandbox/cards/${seg(id)}/refunds`, body, idempotencyKey: key(o) }),
  };
}
