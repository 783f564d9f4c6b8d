/**
 * The exchange area's one public file (docs/exchange.md): the routes, operator routes, tickers and
 * timed processes the composition roots register, and the order reads the merchant console shows.
 * Another area imports this file and nothing else of `exchange/` (`npm run lint:deps`).
 */
export { exchangeRoutes } from './routes.js';
export { exchangeOperatorRoutes } from './operator-routes.js';
export { exchangeTickers, exchangeTimedProcesses } from './workers.js';
export { readOrder, readOrders } from './reads.js';
