/** The shape of the card area's state machines' answers (docs/cards.md, "States"): each sub-area's state.ts returns it.
 * */

/**
 * The card and application state machines as pure functions (docs/cards.md, "States"). The
 * service asks them on every path and obeys the answer: `move` (do it), `replay` (already there:
 * answer as if done, change nothing), `refuse` (with the reference's code).
 */
export type Verdict<S> =
  | { kind: 'move'; to: S }
  | { kind: 'replay'; at: S }
  | { kind: 'refuse'; code: 'state_invalid' | 'product_not_available'; reason: string };

/**
 * The columns of a move to `to` (a `move` verdict obeyed): the new status, the next status
 * version (each change of status is one version, what events and webhooks are merged by) and the
 * time of the change. For an update's values: `{ ...statusMove(card, 'expired', now), ... }`.
 */
export const statusMove = <S extends string>(row: { status_version: number }, to: S, now: Date) => ({
  status: to,
  status_version: row.status_version + 1,
  updated_at: now,
});
