/** Deposits: report one, read one, list them. */
import type { CreateDepositBody, Deposit, DepositListFilters } from '../types.js';
import { seg, writeOpts, isoTime, type ResourceHost, type WriteOptions } from './shared.js';

export interface DepositsResource {
  /** POST /v1/deposits (idempotent, always signed). */
  create(body: CreateDepositBody, opts?: WriteOptions): Promise<Deposit>;
  /** GET /v1/deposits/{id}; as the merchant, or on behalf of the owning member. `dep_` prefix optional. */
  get(id: string, opts?: { onBehalfOf?: string }): Promise<Deposit>;
  /** GET /v1/deposits, every page, newest first; on behalf of a member: only its own. */
  list(opts?: DepositListFilters & { onBehalfOf?: string; limit?: number }): AsyncIterable<Deposit>;
}

export function createDepositsResource(host: ResourceHost): DepositsResource {
  return {
    create: (body, opts) => host.request<Deposit>({ method: 'POST', path: '/v1/deposits', body, ...writeOpts(opts) }),
    get: (id, opts) =>
      host.request<Deposit>({ method: 'GET', path: `/v1/deposits/${seg(id)}`, onBehalfOf: opts?.onBehalfOf }),
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
  };
}
