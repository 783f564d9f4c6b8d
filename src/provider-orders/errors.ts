/**
 * The provider-order lifecycle's domain errors. It knows no HTTP: the API edge
 * (`src/api-errors.ts`, `mapDomainError`) answers them with the reference's codes.
 */

/**
 * The order cannot take the asked move in its current state (an operator's resolve of an order
 * already settled, still in progress at the provider, or won meanwhile by another decision).
 * The message says why, for the operator; the API answers it 400 `state_invalid`.
 */
export class OrderStateError extends Error {
  override readonly name = 'OrderStateError';
}
