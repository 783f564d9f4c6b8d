/**
 * The ledger entries area's one public file: the routes the composition root registers, the page
 * of entries the merchant console shows and the line view the exports reuse. Another area imports
 * this file and nothing else of `ledger-entries/` (`npm run lint:deps`).
 */
export { ledgerEntryRoutes } from './routes.js';
export { entryPage, lineView, linesOf, publicEntryId, type EntryRow } from './queries.js';
