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
