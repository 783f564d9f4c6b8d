/** Withdrawals: a member's request, then the merchant's confirmation or failure. */
import type { CreateWithdrawalBody, Withdrawal, WithdrawalConfirmation, WithdrawalListFilters } from '../types.js';
import { seg, writeOpts, type OnBehalfOfOptions, type ResourceHost, type WriteOptions } from './shared.js';

export interface WithdrawalsResource {
  /** POST /v1/withdrawals for a member (idempotent): locks amount + fee. */
  create(body: CreateWithdrawalBody, opts: OnBehalfOfOptions & WriteOptions): Promise<Withdrawal>;
  /** GET /v1/withdrawals/{id}; as the merchant, or on behalf of the owning member. */
  get(id: string, opts?: { onBehalfOf?: string }): Promise<Withdrawal>;
  /** GET /v1/withdrawals, every page, newest first; on behalf of a member: only its own; as the merchant: all. */
  list(opts?: WithdrawalListFilters & { onBehalfOf?: string; limit?: number }): AsyncIterable<Withdrawal>;
  /** POST /v1/withdrawals/{id}/confirm (idempotent): the on-chain payout succeeded. */
  confirm(id: string, opts?: WriteOptions): Promise<WithdrawalConfirmation>;
  /** POST /v1/withdrawals/{id}/fail (idempotent): the payout could not be made; funds return to available. */
  fail(id: string, opts?: WriteOptions): Promise<Withdrawal>;
}

export function createWithdrawalsResource(host: ResourceHost): WithdrawalsResource {
  return {
    create: (body, opts) =>
      host.request<Withdrawal>({
        method: 'POST',
        path: '/v1/withdrawals',
        body,
        onBehalfOf: opts.onBehalfOf,
        ...writeOpts(opts),
      }),
    get: (id, opts) =>
      host.request<Withdrawal>({ method: 'GET', path: `/v1/withdrawals/${seg(id)}`, onBehalfOf: opts?.onBehalfOf }),
    list: (opts) =>
      host.paginate<Withdrawal>('/v1/withdrawals', {
        query: { status: opts?.status },
        onBehalfOf: opts?.onBehalfOf,
        limit: opts?.limit,
      }),
    confirm: (id, opts) =>
      host.request<WithdrawalConfirmation>({
        method: 'POST',
        path: `/v1/withdrawals/${seg(id)}/confirm`,
        ...writeOpts(opts),
      }),
    fail: (id, opts) =>
      host.request<Withdrawal>({ method: 'POST', path: `/v1/withdrawals/${seg(id)}/fail`, ...writeOpts(opts) }),
  };
}
