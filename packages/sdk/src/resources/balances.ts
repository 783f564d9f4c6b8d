/** A member's balances. */
import type { Balance, ListEnvelope } from '../types.js';
import { data, type OnBehalfOfOptions, type ResourceHost } from './shared.js';

export interface BalancesResource {
  /** GET /v1/balances for one member (not paged): the `data` array. */
  list(opts: OnBehalfOfOptions): Promise<Balance[]>;
}

export function createBalancesResource(host: ResourceHost): BalancesResource {
  return {
    list: (opts) => data(host.request<ListEnvelope<Balance>>({ method: 'GET', path: '/v1/balances', onBehalfOf: opts.onBehalfOf })),
  };
}
