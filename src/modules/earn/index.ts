/**
 * The earn area's one public file (docs/earn.md): the routes, operator routes, tickers and timed
 * processes the composition roots register, and the order and position reads the merchant console
 * shows. Another area imports this file and nothing else of `earn/` (`npm run lint:deps`).
 */
export { earnRoutes } from './routes.js';
export { earnOperatorRoutes } from './operator-routes.js';
export { earnTickers, earnTimedProcesses } from './workers.js';
export { getOrder, listOrders, listPositions } from './service.js';
