/**
 * What the public routes call. QR pay's services are one file per job (docs/qrpay.md):
 * `decode.ts` (pure: QR text to payee and amount), `reads.ts` (decode check, get, lists),
 * `create.ts` (the write around the provider call), `apply.ts` (an answer applied exactly once),
 * `reconcile.ts`, `operator.ts`, `queries.ts` (SQL), `views.ts`. This file only gathers.
 */
export { decodeQr, getPayment, listPayments } from './reads.js';
export { claimLeaseMs, finishPayment, noteLengthMax, openPayment, paymentPlan, type PaymentInput } from './create.js';
