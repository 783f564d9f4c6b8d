import type { WithdrawalStatus } from './tables.js';

/**
 * The withdrawal state machine. `locked` is the only state that moves; `settled` and `failed`
 * are final. A repeat of the action that reached a state is answered as a replay.
 */
export type WithdrawalAction = 'confirm' | 'fail';

export type Transition =
  { kind: 'move'; to: WithdrawalStatus } | { kind: 'replay' } | { kind: 'refuse'; code: 'order_not_cancellable' };

export function transition(from: WithdrawalStatus, action: WithdrawalAction): Transition {
  const target: WithdrawalStatus = action === 'confirm' ? 'settled' : 'failed';
  if (from === 'locked') return { kind: 'move', to: target };
  if (from === target) return { kind: 'replay' };
  return { kind: 'refuse', code: 'order_not_cancellable' };
}
