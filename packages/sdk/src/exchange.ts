/**
 * Exchange (quotes, locked quotes, orders), merchant conversions, and earn. One helper per call,
 * like resources.ts. Amounts are decimal strings.
 */
import { randomUUID } from 'node:crypto';
import type { QueryParams } from './types.js';

export interface ExchangeHost {
  request<T = unknown>(opts: {
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; path: string; query?: QueryParams; body?: unknown; onBehalfOf?: string; idempotencyKey?: string | false; stepUp?: string;
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

export interface ExchangeQuote {
  from_asset: string;
  to_asset: string;
  from_amount: string;
  to_amount: string;
  rate: string;
  fee_amount: string;
  fee_asset: string;
  /** Present only for a locked quote. */
  quote_id?: string;
  quote_expires_at?: string;
  quote_ttl_sec: number;
  ledger_scale_from: number;
  ledger_scale_to: number;
  [extra: string]: unknown;
}

export interface ExchangeOrder {
  id: string;
  type: 'locked' | 'market';
  status: 'quoted' | 'completed' | 'expired' | (string & {});
  status_version: number;
  from_asset: string;
  to_asset: string;
  from_amount: string;
  to_amount: string;
  rate: string;
  fee_amount: string;
  fee_asset: string;
  ledger_scale_from: number;
  ledger_scale_to: number;
  quote_expires_at: string | null;
  executed_at: string | null;
  expired_at: string | null;
  created_at: string;
  [extra: string]: unknown;
}

/** A lock may be sent with its own numbers (each must be the quote's, or the call is refused); a market order with all three. */
export type ExchangeOrderBody = { quote_id: string; from_asset?: string; to_asset?: string; from_amount?: string } | { from_asset: string; to_asset: string; from_amount: string };

export interface MerchantConversion {
  id: string;
  status: 'completed';
  from_asset: string;
  to_asset: string;
  from_amount: string;
  to_amount: string;
  rate: string;
  fee_amount: string;
  fee_asset: string;
  created_at: string;
  [extra: string]: unknown;
}

export interface ConversionPair {
  from_asset: string;
  to_asset: string;
  fee_asset: string;
  fee_bps: number;
  fee_fixed: string;
  min_amount: string;
  max_amount: string | null;
  ledger_scale_from: number;
  ledger_scale_to: number;
}

export interface EarnProduct {
  id: string;
  asset: string;
  type: 'flexible' | 'fixed';
  term_days: number;
  apr: string;
  min_amount: string;
  max_amount: string | null;
  [extra: string]: unknown;
}

export interface EarnOrder {
  id: string;
  position_id: string;
  product_id: string;
  asset: string;
  type: string;
  term_days: number;
  apr: string;
  amount: string;
  status: 'active' | 'settled' | 'redeemed' | (string & {});
  status_version: number;
  interest_accrued: string;
  interest_paid: string;
  started_at: string;
  matures_at: string | null;
  settled_at: string | null;
  redeemed_at: string | null;
  created_at: string;
  [extra: string]: unknown;
}

export interface EarnPosition {
  id: string;
  order_id: string;
  product_id: string;
  asset: string;
  type: string;
  principal: string;
  interest_accrued: string;
  interest_paid: string;
  status: 'active' | 'closed' | (string & {});
  redeemable: boolean;
  started_at: string;
  matures_at: string | null;
  next_accrual_at: string | null;
  [extra: string]: unknown;
}

type Member = { onBehalfOf: string };
type Key = { idempotencyKey?: string; stepUp?: string };
const seg = (id: string) => encodeURIComponent(id);
const collect = async <T>(it: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

export function createExchangeResource(host: ExchangeHost) {
  return {
    /** POST /v1/exchange/quotes (signed): read-only, or `lock: true` (an order in state `quoted`). Pass `idempotencyKey` to get the same locked quote back on a retry. */
    quote: (body: ExchangeQuoteBody, opts: Member & { idempotencyKey?: string }) =>
      host.request<ExchangeQuote>({ method: 'POST', path: '/v1/exchange/quotes', body, onBehalfOf: opts.onBehalfOf, idempotencyKey: opts.idempotencyKey ?? false }),
    /** POST /v1/exchange/orders (idempotent, signed): `{quote_id}` executes a lock; `{from_asset, to_asset, from_amount}` at market. */
    execute: (body: ExchangeOrderBody, opts: Member & Key) =>
      host.request<ExchangeOrder>({ method: 'POST', path: '/v1/exchange/orders', body, onBehalfOf: opts.onBehalfOf, idempotencyKey: opts.idempotencyKey ?? randomUUID(), stepUp: opts.stepUp }),
    /** GET /v1/exchange/orders, every page, newest first (locked quotes included). */
    list: (opts: { onBehalfOf?: string; status?: string; limit?: number } = {}) =>
      collect(host.paginate<ExchangeOrder>('/v1/exchange/orders', { query: { status: opts.status }, onBehalfOf: opts.onBehalfOf, limit: opts.limit })),
    /** GET /v1/exchange/orders/{id}: an order or a locked quote (after a timeout, look the execution up here). */
    get: (id: string, opts: { onBehalfOf?: string } = {}) => host.request<ExchangeOrder>({ method: 'GET', path: `/v1/exchange/orders/${seg(id)}`, onBehalfOf: opts.onBehalfOf }),
    /** POST /v1/merchant/conversions (idempotent, signed; merchant principal): priced at execution. */
    convert: (body: { from_asset: string; to_asset: string; from_amount: string; quote_id?: unknown }, opts: { idempotencyKey?: string } = {}) =>
      host.request<MerchantConversion>({ method: 'POST', path: '/v1/merchant/conversions', body, idempotencyKey: opts.idempotencyKey ?? randomUUID() }),
    /** GET /v1/merchant/conversion-pairs. */
    conversionPairs: async () => (await host.request<{ data: ConversionPair[] }>({ method: 'GET', path: '/v1/merchant/conversion-pairs' })).data,
  };
}

export function createEarnResource(host: ExchangeHost) {
  return {
    /** GET /v1/earn/products. */
    products: async (opts: { onBehalfOf?: string } = {}) => (await host.request<{ data: EarnProduct[] }>({ method: 'GET', path: '/v1/earn/products', onBehalfOf: opts.onBehalfOf })).data,
    /** POST /v1/earn/orders (idempotent, signed): available → earn. */
    subscribe: (body: { product_id: string; amount: string }, opts: Member & Key) =>
      host.request<EarnOrder>({ method: 'POST', path: '/v1/earn/orders', body, onBehalfOf: opts.onBehalfOf, idempotencyKey: opts.idempotencyKey ?? randomUUID() }),
    /** GET /v1/earn/orders, every page. */
    orders: (opts: { onBehalfOf?: string; status?: string; limit?: number } = {}) =>
      collect(host.paginate<EarnOrder>('/v1/earn/orders', { query: { status: opts.status }, onBehalfOf: opts.onBehalfOf, limit: opts.limit })),
    /** GET /v1/earn/orders/{id}. */
    order: (id: string, opts: { onBehalfOf?: string } = {}) => host.request<EarnOrder>({ method: 'GET', path: `/v1/earn/orders/${seg(id)}`, onBehalfOf: opts.onBehalfOf }),
    /** GET /v1/earn/positions, every page. */
    positions: (opts: { onBehalfOf?: string; status?: 'active' | 'closed'; limit?: number } = {}) =>
      collect(host.paginate<EarnPosition>('/v1/earn/positions', { query: { status: opts.status }, onBehalfOf: opts.onBehalfOf, limit: opts.limit })),
    /** POST /v1/earn/positions/{id}/redeem (idempotent): flexible only; fixed-term before maturity is `state_invalid`. */
    redeem: (positionId: string, opts: Member & Key) =>
      host.request<EarnPosition>({ method: 'POST', path: `/v1/earn/positions/${seg(positionId)}/redeem`, onBehalfOf: opts.onBehalfOf, idempotencyKey: opts.idempotencyKey ?? randomUUID() }),
  };
}

export type ExchangeResource = ReturnType<typeof createExchangeResource>;
export type EarnResource = ReturnType<typeof createEarnResource>;
