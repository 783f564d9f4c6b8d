import type { TimedProcess } from '../../../jobs/types.js';
import { expireAuthorizations } from './expiry.js';
import { nextAuthorizationExpiry } from './queries.js';

/** Holds neither cleared nor reversed by their `expires_at` go back (expiry.ts, docs/cards.md "Transactions"). */
export const authorizationExpiryProcess: TimedProcess = {
  name: 'card.authorization_expiry',
  nextDue: nextAuthorizationExpiry,
  async runDue(ctx, scope, now) {
    await expireAuthorizations(ctx, scope, now);
  },
};
