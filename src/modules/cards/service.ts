/**
 * The cards area's surface for other modules (the dependency rules let them reach only an area's
 * service, queries, rules, state and tables): the reads and the sandbox helpers, the same
 * functions the API's routes call. Re-exports only: the rules stay in their own files.
 */
export { getCard, sandboxShip } from './cards.js';
export { getApplication, sandboxAdvance } from './applications.js';
export { getTopUp, listTopUps } from './topups.js';
export { authorize, listTransactions } from './transactions.js';
export { getReplacement, listReplacements } from './replacements.js';
/** The sandbox authorisation's body schema, so a caller outside the API checks what the route checks. */
export { AuthorizationBody as AuthorizationBodySchema } from './money-schemas.js';
