/**
 * The posting rules of every money flow, one file per area, as pure functions from amounts (minor
 * units) to the lines of one entry; the deposit, withdrawal and prepaid rules and the shared fee
 * pair are ../rules.ts. docs/ledger.md shows them as a table.
 */
export * from './cards.js';
export * from './earn.js';
export * from './exchange.js';
export * from './qrpay.js';
export * from './remittance.js';
