/**
 * The QR pay area's one public file (docs/qrpay.md): the routes, operator routes and tickers the
 * composition roots register, and the payment reads the merchant console shows. Inside, one file
 * per job: `decode.ts` (pure: QR text to payee and amount), `reads.ts` (decode check, get, lists),
 * `create.ts` (the write around the provider call), `apply.ts` (an answer applied exactly once),
 * `reconcile.ts`, `operator.ts`, `queries.ts` (SQL), `views.ts`. Another area imports this file and
 * nothing else of `qrpay/` (`npm run lint:deps`).
 */
export { qrpayRoutes } from './routes.js';
export { qrpayOperatorRoutes } from './operator-routes.js';
export { qrpayTickers } from './workers.js';
export { getPayment, listPayments } from './reads.js';
/** The EMVCo checksum (the demo script builds QR codes with it). */
export { crc16 } from './emvco.js';
