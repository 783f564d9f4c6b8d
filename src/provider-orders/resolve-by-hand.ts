import { OrderStateError } from './errors.js';
import { isOpenOrder, resolveByOperator } from './lifecycle.js';

type AreaDecision = { kind: string; providerStatus?: string; reason?: string };

/** An operator's resolve of an open order: the area's parts (`resolveByHand`). */
export interface HandResolution<Row extends { status: string }, D extends AreaDecision> {
  order: Row;
  /** The status the operator asks for, in the area's words (`completed`, `credited`, `failed`). */
  requested: string;
  /** The order in the operator's words (`payment`, `remittance`, `top-up`). */
  noun: string;
  /** Whether the provider call that handed the order over may still be running. */
  callInFlight: boolean;
  /** The provider's answer to a status query asked now, as the area's decision (nothing applied). */
  queryDecision: () => Promise<D>;
  /** The operator's own decision: complete, or fail with the reason `operator`. */
  operatorDecision: D;
  /** Applies a decision once (the area's claims) and answers the order as it is after. */
  apply: (decision: D) => Promise<Row>;
}

/**
 * The operator settles an open (typically suspended) order by hand. The provider is asked first
 * (`resolveByOperator`, lifecycle.ts): an outcome it gives is applied instead, whatever the
 * operator asked; an order it still reports in progress, or whose call is still running, is
 * refused; the operator's decision applies only where the provider cannot tell. Every refusal is
 * an `OrderStateError` (the API edge answers it 400 `state_invalid`), and never 200 for a
 * decision that was not taken (another decision, the provider's through reconciliation, may also
 * win the order meanwhile).
 */
export async function resolveByHand<Row extends { status: string }, D extends AreaDecision>(
  r: HandResolution<Row, D>,
): Promise<Row> {
  const { order, requested, noun } = r;
  if (!isOpenOrder(order.status)) {
    if (order.status === requested) return order;
    throw new OrderStateError(`The ${noun} is already ${order.status}.`);
  }
  if (r.callInFlight) {
    throw new OrderStateError(
      `The call that hands this ${noun} to the provider is still running: resolve it once the call has ` +
        `answered or its deadline has passed.`,
    );
  }
  const resolution = resolveByOperator(await r.queryDecision());
  if (resolution.kind === 'in_progress') {
    throw new OrderStateError(
      `The provider reports the ${noun} in progress (${resolution.providerStatus}): it settles when the provider does.`,
    );
  }
  const decision = resolution.kind === 'provider' ? resolution.decision : r.operatorDecision;
  const row = await r.apply(decision);
  if (row.status !== requested) {
    const said =
      decision.providerStatus ||
      (decision.reason === 'upstream_not_found' ? 'unknown to it (never received)' : row.status);
    throw new OrderStateError(
      resolution.kind === 'provider'
        ? `The provider reports the ${noun} ${said}: it is now ${row.status}, as the provider settled it.`
        : `The ${noun} became ${row.status} meanwhile.`,
    );
  }
  return row;
}
