/**
 * The deposits area's one public file: the routes the composition root registers and the reads
 * the merchant console shows. Another area imports this file and nothing else of `deposits/`
 * (`npm run lint:deps`).
 */
export { depositRoutes } from './routes.js';
export { getDeposit, listDeposits } from './service.js';
