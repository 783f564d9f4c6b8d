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
 * What the issuer's answer to a status query of a request whose outcome is unknown means, alike for every request
 * reconciled (an application's submission, a merchant-rule set): no answer waits; a request the issuer never
 * received is sent `again` once past the grace (before it, it may still be on its way); one it has is `found`'s.
 */
export function statusQueryDecision<A extends { kind: string }, D>(
  answer: A,
  ageMs: number,
  notFoundGraceMs: number,
  again: D,
  found: (answer: Extract<A, { kind: 'found' }>) => D,
): D | { kind: 'wait' } {
  if (answer.kind === 'found') return found(answer as Extract<A, { kind: 'found' }>);
  if (answer.kind === 'not_found' && ageMs >= notFoundGraceMs) return again;
  return { kind: 'wait' };
}
