/** The merchant's own balances and deposit addresses. */
import type { ListEnvelope, MerchantBalance, MerchantDepositAddress } from '../types.js';
import { writeOpts, data, isoTime, type ResourceHost, type WriteOptions } from './shared.js';

export interface MerchantResource {
  /** GET /v1/merchant/balances: the `data` array; with `asOf`, as they were at that instant. */
  balances(opts?: { asOf?: string | Date }): Promise<MerchantBalance[]>;
  /**
   * POST /v1/merchant/deposit-address (idempotent): a new address from the chain provider. On
   * `service_unavailable` retry after `retry_after` seconds with the same `idempotencyKey` (the same key always yields
   * the same address).
   */
  requestDepositAddress(body: { asset: string; network: string }, opts?: WriteOptions): Promise<MerchantDepositAddress>;
  /** GET /v1/merchant/deposit-addresses, every page, newest first; optional `asset` and `network`. */
  depositAddresses(opts?: { asset?: string; network?: string; limit?: number }): AsyncIterable<MerchantDepositAddress>;
}

export function createMerchantResource(host: ResourceHost): MerchantResource {
  return {
    balances: (opts) =>
      data(
        host.request<ListEnvelope<MerchantBalance>>({
          method: 'GET',
          path: '/v1/merchant/balances',
          ...(opts?.asOf === undefined ? {} : { query: { as_of: isoTime(opts.asOf) } }),
        }),
      ),
    requestDepositAddress: (body, opts) =>
      host.request<MerchantDepositAddress>({
        method: 'POST',
        path: '/v1/merchant/deposit-address',
        body,
        ...writeOpts(opts),
      }),
    depositAddresses: (opts) =>
      host.paginate<MerchantDepositAddress>('/v1/merchant/deposit-addresses', {
        query: { asset: opts?.asset, network: opts?.network },
        limit: opts?.limit,
      }),
  };
}
