/**
 * The balances area's one public file (docs/ledger.md): the routes and operator routes the
 * composition roots register, the balance reads other areas and the merchant console use, and the
 * balance monitors the console manages. Another area imports this file and nothing else of
 * `balances/` (`npm run lint:deps`).
 */
export { balanceRoutes } from './routes.js';
export { balanceOperatorRoutes } from './operator-routes.js';
export { memberBalances, merchantBalances } from './queries.js';
export { createMonitor, deleteMonitor, getMonitor, listMonitors } from './monitors.js';
