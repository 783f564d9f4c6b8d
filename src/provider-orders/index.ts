/**
 * The lifecycle of an order handed to a provider, shared by the areas that hand orders over (card
 * top-ups, QR payments, remittance payouts): the pure rules (`lifecycle.ts`), the SQL on each
 * area's order table (`store.ts`), an order's ledger entry (`entries.ts`), the queuing of new
 * orders' dispatch jobs (`dispatch-jobs.ts`), the provider's facts in operator views (`views.ts`),
 * an operator's resolve by hand (`resolve-by-hand.ts`) and its domain errors (`errors.ts`). Below
 * the areas, above upstreams: it reads the ports' outcomes, imports no area and nothing HTTP.
 * Areas import this file only.
 */
export * from './dispatch-jobs.js';
export * from './entries.js';
export * from './errors.js';
export * from './lifecycle.js';
export * from './open-order.js';
export * from './resolve-by-hand.js';
export * from './store.js';
export * from './views.js';
