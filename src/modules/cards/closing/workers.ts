import type { TimedProcess } from '../../../jobs/types.js';
import { expireCards, reconcileClosingCards } from './service.js';
import { nextClosingCheck, nextExpiry } from './queries.js';

/** The reconciliation of closing cards and card expiry, on the merchant's clock. */
export const closingReconcileProcess: TimedProcess = {
  name: 'card.closing_reconcile',
  nextDue: nextClosingCheck,
  runDue: reconcileClosingCards,
};
export const cardExpiryProcess: TimedProcess = { name: 'card.expiry', nextDue: nextExpiry, runDue: expireCards };
