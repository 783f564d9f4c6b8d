/**
 * The merchant deposit address area's one public file: the routes the composition root registers.
 * Another area imports this file and nothing else of `merchant-deposit-address/` (`npm run lint:deps`).
 */
export { merchantDepositAddressRoutes } from './routes.js';
