/** A member's balances. */
import type { Balance, ListEnvelope } from '../types.js';
import { data, isoTime, type OnBehalfOfOptions, type ResourceHost } from './shared.js';

export interface BalancesResource {
  /** GET /v1/balances for one member (not paged): the `data` array; with `asOf`, as they were at that instant. */
  list(opts: OnBehalfOfOptions & { asOf?: string | Date }): Promise<Balance[]>;
}

export function createBalancesResource(host: ResourceHost): BalancesResource {
  return {
    list: (opts) =>
      data(
        host.request<ListEnvelope<Balance>>({
          method: 'GET',
          path: '/v1/balances',
          onBehalfOf: opts.onBehalfOf,
          ...(opts.asOf === undefined ? {} : { query: { as_of: isoTime(opts.asOf) } }),
        }),
      ),
  };
}
