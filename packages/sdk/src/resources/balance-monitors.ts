/** Balance monitors: the merchant's watch on its prepaid or custody balance of an asset (extensions 13). */
import type { Schemas } from '../schemas.js';
import { seg, writeOpts, type ResourceHost, type WriteOptions } from './shared.js';

export type BalanceMonitor = Schemas['BalanceMonitor'];
export type DeletedBalanceMonitor = Schemas['DeletedBalanceMonitor'];

export interface CreateBalanceMonitorBody {
  balance: 'prepaid' | 'custody';
  asset: string;
  /** Decimal string > 0: `balance_monitor.triggered` when the balance falls below it, `.resolved` when back at or
   * above. */
  below: string;
}

export interface BalanceMonitorsResource {
  /** POST /v1/balance-monitors (idempotent; `merchant:write`). */
  create(body: CreateBalanceMonitorBody, opts?: WriteOptions): Promise<BalanceMonitor>;
  /** GET /v1/balance-monitors, every page, newest first. */
  list(opts?: { limit?: number }): AsyncIterable<BalanceMonitor>;
  /** DELETE /v1/balance-monitors/{id} (`bmn_` prefix optional). */
  delete(id: string): Promise<DeletedBalanceMonitor>;
}

export function createBalanceMonitorsResource(host: ResourceHost): BalanceMonitorsResource {
  return {
    create: (body, opts) =>
      host.request<BalanceMonitor>({ method: 'POST', path: '/v1/balance-monitors', body, ...writeOpts(opts) }),
    list: (opts) => host.paginate<BalanceMonitor>('/v1/balance-monitors', { limit: opts?.limit }),
    delete: (id) => host.request<DeletedBalanceMonitor>({ method: 'DELETE', path: `/v1/balance-monitors/${seg(id)}` }),
  };
}
