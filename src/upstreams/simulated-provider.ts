import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../db/schema.js';
import type { SimOrderStatus, UpstreamSimOrdersTable } from './tables.js';
import { activeBehavior } from './queries/behaviors.js';
import { insertSimOrder, markSimOrderRefunded, selectSimOrder, settleSimOrder } from './queries/simulated-provider.js';
import {
  SANDBOX_UNKNOWN_STATUS,
  type CallContext,
  type CallOutcome,
  type InjectedBehavior,
  type StatusOutcome,
  type UpstreamName,
} from './port.js';

type SimRow = Selectable<UpstreamSimOrdersTable>;

export interface SimulatorOptions {
  /**
   * Milliseconds after which an accepted order leaves `processing` for its final state. The
   * change is noticed when the order is next read (a status query or a repeated call); 0 makes
   * the provider synchronous (the call itself answers the final state).
   */
  confirmDelayMs: number;
}

export interface SubmitRequest<D extends Record<string, string>> {
  /** Our id for the request: the provider's idempotency key. */
  requestId: string;
  /** e.g. `pay`, `send`, `deposit_address`; kept for the operator. */
  operation: string;
  /** What the provider answers back on acceptance (and stores). */
  detail: D;
  /** Set when the provider would refuse this request on its own merits (no channel, refused QR). */
  refusal?: string;
  /** Issued at once whatever the delay (e.g. a deposit address). */
  synchronous?: boolean;
}

/** Sandbox test data: a reference (card, QR merchant account) starting with this is refused by the simulated provider.
 * */
export const simulatorRefusedPrefix = 'SIM-REFUSE';

/** Key kept in a stored detail for a request refused at submission (stripped from answers). */
const rejectedKey = '__rejected';

/**
 * The built-in provider simulator. It keeps its own books in `upstream_sim_orders` (written
 * outside our transactions, as a provider's would be), issues its own order ids, is idempotent
 * by our request id, and confirms asynchronously. The merchant's injected behaviour decides how
 * the money-moving call answers; status queries are read-only and never affected, except that
 * an order created under `unknown_status` answers `SANDBOX_UNKNOWN_STATUS` forever.
 *
 * What the simulator records under each behaviour (so that reconciliation finds the truth):
 * - `success`: the order, `processing` then final (`succeeded`, or `failed` when it refuses the
 *   request on its own merits) after `confirmDelayMs`;
 * - `reject`: a failed order; the call answers `rejected`;
 * - `timeout`: the provider DID process it (recorded as for `success`); the call answers `timeout`;
 * - `unknown`: the provider did NOT receive it (nothing recorded: a query answers `not_found`);
 *   the call answers `unknown`;
 * - `unknown_status`: the order is recorded (it succeeds) but every answer about it carries
 *   `SANDBOX_UNKNOWN_STATUS`.
 * A repeated call with a request id the provider already has answers what it has (idempotent),
 * unless the behaviour in force is `timeout` or `unknown` (the answer is lost again).
 */
export class SimulatedProvider {
  constructor(
    private readonly db: Kysely<Database>,
    readonly upstream: UpstreamName,
    private readonly idPrefix: string,
    private readonly options: SimulatorOptions,
  ) {}

  behavior(call: CallContext): Promise<InjectedBehavior> {
    return activeBehavior(this.db, call, this.upstream);
  }

  async submit<D extends Record<string, string>>(call: CallContext, req: SubmitRequest<D>): Promise<CallOutcome<D>> {
    const behavior = await this.behavior(call);
    if (behavior === 'unknown')
      return { kind: 'unknown', reason: 'simulated upstream 5xx: the request never reached the provider' };
    // Recorded unless the provider has the request already (`record` then answers what it has):
    // no look-up before the insert, which finds the request on its first call.
    if (behavior === 'timeout') {
      await this.record(call, req, req.refusal ? 'failed' : 'succeeded', false);
      return { kind: 'timeout' };
    }
    const row =
      behavior === 'reject' || req.refusal
        ? await this.record(
            call,
            { ...req, detail: { ...req.detail, [rejectedKey]: req.refusal ?? 'simulated refusal' } },
            'failed',
            false,
          )
        : await this.record(call, req, 'succeeded', behavior === 'unknown_status');
    return this.answerFor<D>(row);
  }

  async query(requestId: string): Promise<StatusOutcome> {
    const row = await this.find(requestId);
    if (!row) return { kind: 'not_found' };
    return {
      kind: 'found',
      providerOrderId: row.provider_order_id,
      status: row.unknown_status ? SANDBOX_UNKNOWN_STATUS : row.status,
    };
  }

  /** Acquirer-side refund of a succeeded order (not subject to injection: operator-initiated). */
  async refund(paymentRequestId: string): Promise<CallOutcome> {
    const row = await this.find(paymentRequestId);
    if (!row) return { kind: 'rejected', reason: 'no such payment' };
    if (row.status === 'refunded')
      return { kind: 'accepted', providerOrderId: row.provider_order_id, status: 'refunded', detail: {} };
    if (row.status !== 'succeeded') return { kind: 'rejected', reason: `the payment is ${row.status}` };
    const updated = await markSimOrderRefunded(this.db, this.upstream, paymentRequestId);
    if (!updated) return { kind: 'rejected', reason: 'the payment changed meanwhile' };
    return { kind: 'accepted', providerOrderId: updated.provider_order_id, status: 'refunded', detail: {} };
  }

  /** The simulator's record of a request, settled first if its confirmation time has passed. */
  async find(requestId: string): Promise<SimRow | undefined> {
    const settled = await settleSimOrder(this.db, this.upstream, requestId);
    if (settled) return settled;
    return selectSimOrder(this.db, this.upstream, requestId);
  }

  private answerFor<D extends Record<string, string>>(row: SimRow): CallOutcome<D> {
    const { [rejectedKey]: rejected, ...detail } = row.detail;
    if (rejected !== undefined) return { kind: 'rejected', reason: rejected };
    const status = row.unknown_status ? SANDBOX_UNKNOWN_STATUS : row.status;
    return { kind: 'accepted', providerOrderId: row.provider_order_id, status, detail: detail as D };
  }

  private async record<D extends Record<string, string>>(
    call: CallContext,
    req: SubmitRequest<D>,
    finalStatus: SimOrderStatus,
    unknownStatus: boolean,
  ): Promise<SimRow> {
    const immediate =
      req.synchronous || this.options.confirmDelayMs <= 0 || (finalStatus === 'failed' && rejectedKey in req.detail);
    const inserted = await insertSimOrder(this.db, {
      upstream: this.upstream,
      request_id: req.requestId,
      merchant_id: call.merchantId,
      environment: call.environment,
      provider_order_id: `${this.idPrefix}${randomBytes(8).toString('hex').toUpperCase()}`,
      operation: req.operation,
      status: immediate ? finalStatus : 'processing',
      final_status: finalStatus,
      settleAfterSeconds: immediate ? 0 : this.options.confirmDelayMs / 1000,
      unknown_status: unknownStatus,
      detail: JSON.stringify(req.detail),
    });
    // An earlier or a concurrent call with the same request id recorded it first: that record stands.
    return inserted ?? (await this.find(req.requestId))!;
  }
}

/**
 * What every simulated adapter shares: the provider's books (`provider`, one per upstream with
 * its own order-id prefix) and the read-only status query. An adapter adds its money-moving calls.
 */
export abstract class SimulatedUpstream<N extends UpstreamName> {
  readonly provider: SimulatedProvider;

  protected constructor(
    db: Kysely<Database>,
    readonly name: N,
    idPrefix: string,
    options: SimulatorOptions,
  ) {
    this.provider = new SimulatedProvider(db, name, idPrefix, options);
  }

  /** Read-only: the provider's state of a request, by our request id. */
  status(_call: CallContext, requestId: string): Promise<StatusOutcome> {
    return this.provider.query(requestId);
  }
}
