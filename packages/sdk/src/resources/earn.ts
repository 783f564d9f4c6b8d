/** Earn: products, subscriptions (orders), positions, redemption. One helper per call, on the exchange's host. */

import type { Schemas } from '../schemas.js';
import { randomUUID } from 'node:crypto';
import type { ExchangeHost } from './exchange.js';
import { collect } from './shared.js';

export type EarnProduct = Schemas['EarnProduct'];

export type EarnOrder = Schemas['EarnOrder'];

export type EarnPosition = Schemas['EarnPosition'];

type Member = { onBehalfOf: string };
type Key = { idempotencyKey?: string; stepUp?: string };
const seg = (id: string) => encodeURIComponent(id);

export function createEarnResource(host: ExchangeHost) {
  return {
    /** GET /v1/earn/products. */
    products: async (opts: { onBehalfOf?: string } = {}) =>
      (
        await host.request<{ data: EarnProduct[] }>({
          method: 'GET',
          path: '/v1/earn/products',
          onBehalfOf: opts.onBehalfOf,
        })
      ).data,
    /** POST /v1/earn/orders (idempotent, signed): available → earn. */
    subscribe: (body: { product_id: string; amount: string }, opts: Member & Key) =>
      host.request<EarnOrder>({
        method: 'POST',
        path: '/v1/earn/orders',
        body,
        onBehalfOf: opts.onBehalfOf,
        idempotencyKey: opts.idempotencyKey ?? randomUUID(),
      }),
    /** GET /v1/earn/orders, every page. */
    orders: (opts: { onBehalfOf?: string; status?: string; limit?: number } = {}) =>
      collect(
        host.paginate<EarnOrder>('/v1/earn/orders', {
          query: { status: opts.status },
          onBehalfOf: opts.onBehalfOf,
          limit: opts.limit,
        }),
      ),
    /** GET /v1/earn/orders/{id}. */
    order: (id: string, opts: { onBehalfOf?: string } = {}) =>
      host.request<EarnOrder>({ method: 'GET', path: `/v1/earn/orders/${seg(id)}`, onBehalfOf: opts.onBehalfOf }),
    /** GET /v1/earn/positions, every page. */
    positions: (opts: { onBehalfOf?: string; status?: 'active' | 'closed'; limit?: number } = {}) =>
      collect(
        host.paginate<EarnPosition>('/v1/earn/positions', {
          query: { status: opts.status },
          onBehalfOf: opts.onBehalfOf,
          limit: opts.limit,
        }),
      ),
    /** POST /v1/earn/positions/{id}/redeem (idempotent): flexible only; fixed-term before maturity is `state_invalid`.
     * */
    redeem: (positionId: string, opts: Member & Key) =>
      host.request<EarnPosition>({
        method: 'POST',
        path: `/v1/earn/positions/${seg(positionId)}/redeem`,
        onBehalfOf: opts.onBehalfOf,
        idempotencyKey: opts.idempotencyKey ?? randomUUID(),
      }),
  };
}

export type EarnResource = ReturnType<typeof createEarnResource>;
