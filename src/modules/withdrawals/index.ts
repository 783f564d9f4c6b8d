/**
 * The withdrawals area's one public file: the routes and operator routes the composition roots
 * register, and the reads and moves the merchant console offers. Another area imports this file
 * and nothing else of `withdrawals/` (`npm run lint:deps`).
 */
export { withdrawalRoutes } from './routes.js';
export { withdrawalOperatorRoutes } from './operator-routes.js';
export { confirmWithdrawal, failWithdrawal, getWithdrawal, listWithdrawals } from './service.js';
