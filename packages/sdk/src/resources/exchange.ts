/**
 * Exchange (quotes, locked quotes, orders) and merchant conversions; earn is in earn.ts, on the
 * same host. One helper per call, like the other resources. Amounts are decimal strings.
 */

import type { Schemas } from '../schemas.js';
import { randomUUID } from 'node:crypto';
import type { QueryParams } from '../types.js';
import { collect } from './shared.js';

export interface ExchangeHost {
  request<T = unknown>(opts: {
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
    path: string;
    query?: QueryParams;
    body?: unknown;
    onBehalfOf?: string;
    idempotencyKey?: string | false;
    stepUp?: string;
  }): Promise<T>;
  paginate<T>(path: string, opts?: { query?: QueryParams; onBehalfOf?: string; limit?: number }): AsyncIterable<T>;
}

export interface ExchangeQuoteBody {
  from_asset: string;
  to_asset: string;
  /** With the from-asset's scale (places beyond it only as zeros). */
  from_amount: string;
  /** A JSON boolean; `true` locks the price (an order in state `quoted`). */
  lock?: boolean;
}

export type ExchangeQuote = Schemas['ExchangeQuote'];

export type ExchangeOrder = Schemas['ExchangeOrder'];

/** A lock may be sent with its own numbers (each must be the quote's, or the call is refused); a market order with all
 * three. */
export type ExchangeOrderBody =
  | { quote_id: string; from_asset?: string; to_asset?: string; from_amount?: string }
  | { from_asset: string; to_asset: string; from_amount: string };

export type MerchantConversion = Schemas['MerchantConversion'];

export type ConversionPair = Schemas['ConversionPair'];

type Member = { onBehalfOf: string };
type Key = { idempotencyKey?: string; stepUp?: string };
const seg = (id: string) => encodeURIComponent(id);

export function createExchangeResource(host: ExchangeHost) {
  return {
    /** POST /v1/exchange/quotes (signed): read-only, or `lock: true` (an order in state `quoted`). Pass
     * `idempotencyKey` to get the same locked quote back on a retry. */
    quote: (body: ExchangeQuoteBody, opts: Member & { idempotencyKey?: string }) =>
      host.request<ExchangeQuote>({
        method: 'POST',
        path: '/v1/exchange/quotes',
        body,
        onBehalfOf: opts.onBehalfOf,
        idempotencyKey: opts.idempotencyKey ?? false,
      }),
    /** POST /v1/exchange/orders (idempotent, signed): `{quote_id}` executes a lock; `{from_asset, to_asset,
     * from_amount}` at market. */
    execute: (body: ExchangeOrderBody, opts: Member & Key) =>
      host.request<ExchangeOrder>({
        method: 'POST',
        path: '/v1/exchange/orders',
        body,
        onBehalfOf: opts.onBehalfOf,
        idempotencyKey: opts.idempotencyKey ?? randomUUID(),
        stepUp: opts.stepUp,
      }),
    /** GET /v1/exchange/orders, every page, newest first (locked quotes included). */
    list: (opts: { onBehalfOf?: string; status?: string; limit?: number } = {}) =>
      collect(
        host.paginate<ExchangeOrder>('/v1/exchange/orders', {
          query: { status: opts.status },
          onBehalfOf: opts.onBehalfOf,
          limit: opts.limit,
        }),
      ),
    /** GET /v1/exchange/orders/{id}: an order or a locked quote (after a timeout, look the execution up here). */
    get: (id: string, opts: { onBehalfOf?: string } = {}) =>
      host.request<ExchangeOrder>({
        method: 'GET',
        path: `/v1/exchange/orders/${seg(id)}`,
        onBehalfOf: opts.onBehalfOf,
      }),
    /** POST /v1/merchant/conversions (idempotent, signed; merchant principal): priced at execution. */
    convert: (
      body: { from_asset: string; to_asset: string; from_amount: string; quote_id?: unknown },
      opts: { idempotencyKey?: string } = {},
    ) =>
      host.request<MerchantConversion>({
        method: 'POST',
        path: '/v1/merchant/conversions',
        body,
        idempotencyKey: opts.idempotencyKey ?? randomUUID(),
      }),
    /** GET /v1/merchant/conversion-pairs. */
    conversionPairs: async () =>
      (await host.request<{ data: ConversionPair[] }>({ method: 'GET', path: '/v1/merchant/conversion-pairs' })).data,
  };
}

export type ExchangeResource = ReturnType<typeof createExchangeResource>;
