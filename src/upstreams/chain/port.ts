import type { CallContext, CallOutcome, StatusOutcome } from '../port.js';

/** The on-chain custody provider: deposit addresses and payouts. */
export interface ChainUpstream {
  readonly name: 'chain';
  /** Issues a deposit address (the step injection acts on for this upstream's address line). */
  createDepositAddress(
    call: CallContext,
    req: { requestId: string; asset: string; network: string },
  ): Promise<CallOutcome<{ address: string }>>;
  /** Money-moving: sends an on-chain payout. */
  send(
    call: CallContext,
    req: { requestId: string; asset: string; network: string; address: string; amountMinor: bigint },
  ): Promise<CallOutcome<{ tx_hash: string }>>;
  /** Read-only: the provider's state of a request, by our request id. */
  status(call: CallContext, requestId: string): Promise<StatusOutcome>;
}
