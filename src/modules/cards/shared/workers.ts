/**
 * The card area's background work as the composition root (src/background.ts) lists it: job
 * handlers, timed processes and the tickers that run them in production. Here and not in the
 * sub-areas because each ticker runs the timed processes of several sub-areas on each scope's own
 * clock, over one query of the scopes with work due in any of them (the role of `workers.ts`, at
 * the area's level; each process lives in its sub-area's workers.ts or reconcile.ts).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { Environment } from '../../../db/columns.js';
import type { JobHandler, Ticker, TimedProcess } from '../../../jobs/types.js';
import { applicationReconcileProcess } from '../applications/reconcile.js';
import { voidIssuedCard, voidIssuedCardJobKind } from '../applications/void-issued.js';
import { supplementExpiryProcess } from '../applications/workers.js';
import { activationUnlockProcess } from '../cards/workers.js';
import { cardExpiryProcess, closingReconcileProcess } from '../closing/workers.js';
import { rulesReconcileProcess } from '../controls/reconcile.js';
import { limitsPushJobKind, pushLimits } from '../controls/limits.js';
import { replacementJobKind } from '../replacements/service.js';
import { replacementExecutorProcess, replacementJob } from '../replacements/workers.js';
import { authorizationExpiryProcess } from '../transactions/workers.js';
import { dueLifecycleScopes, dueReconcileScopes, dueTimedScopes } from '../queries.js';
import { rowScope } from '../../../db/owned-by.js';

/**
 * A ticker that runs `processes` on each scope's own clock, for the service running on its own
 * (not only on a sandbox advance): each scope `dueScopes` answers, each process of it that is due
 * by that scope's now.
 */
function scopeTicker(
  name: string,
  intervalMs: number,
  dueScopes: (db: Kysely<Database>) => Promise<{ merchant_id: string; environment: Environment }[]>,
  processes: readonly TimedProcess[],
): Ticker {
  return {
    name,
    intervalMs,
    async run(ctx) {
      for (const s of await dueScopes(ctx.db)) {
        const scope = rowScope(s);
        const now = await ctx.clock.now(ctx.db, scope);
        for (const p of processes) {
          const due = await p.nextDue(ctx.db, scope);
          if (due && due.getTime() <= now.getTime()) await p.runDue(ctx, scope, now);
        }
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Supplements and activation locks

/**
 * Work due on a merchant's clock (docs/clock.md): supplement work orders that expire (application
 * `failed`, fee refunded, no card) and activation locks that end. `POST /v1/sandbox/clock/advance`
 * runs them as the clock passes; the housekeeping of production runs them on real time the same way.
 */
export const cardTimedProcesses: TimedProcess[] = [supplementExpiryProcess, activationUnlockProcess];

/** The same processes on each scope's own clock, for the service running on its own (not only on a sandbox advance). */
export const cardTickers: Ticker[] = [scopeTicker('card.timed', 60_000, dueTimedScopes, cardTimedProcesses)];

/** Queue handlers: the push of recorded limits to the issuer; the cancellation of a card issued for a failed
 * application. */
export const cardJobHandlers: Record<string, JobHandler> = {
  [limitsPushJobKind]: pushLimits,
  [voidIssuedCardJobKind]: voidIssuedCard,
};

// ---------------------------------------------------------------------------------------------
// Reconciliation of unknown outcomes (applications/reconcile.ts, controls/reconcile.ts)

/** The card area's reconciliation processes (src/background.ts lists them among the timed processes). */
export const cardReconcileTimedProcesses: TimedProcess[] = [applicationReconcileProcess, rulesReconcileProcess];

/**
 * The same processes on each scope's own clock, for the service running on its own (not only on a
 * sandbox advance): every scope with a check due.
 */
export const cardReconcileTickers: Ticker[] = [
  scopeTicker('card.reconcile', 5_000, dueReconcileScopes, cardReconcileTimedProcesses),
];

// ---------------------------------------------------------------------------------------------
// The lifecycle
/**
 * The card lifecycle's work on the merchant's clock (docs/cards.md, docs/clock.md): the
 * replacement executor, the reconciliation of closing cards, card expiry and the expiry of
 * authorisation holds (transactions/expiry.ts). Each is a timed process
 * (so `POST /v1/sandbox/clock/advance` runs it as the clock passes), the executor also a job
 * queued with each request, and one ticker runs them all on each scope's own clock in production.
 */
export const cardLifecycleTimedProcesses: TimedProcess[] = [
  replacementExecutorProcess,
  closingReconcileProcess,
  cardExpiryProcess,
  authorizationExpiryProcess,
];

export const cardLifecycleJobHandlers: Record<string, JobHandler> = { [replacementJobKind]: replacementJob };

/** The processes on each scope's own clock, for the service running on its own. */
export const cardLifecycleTickers: Ticker[] = [
  scopeTicker('card.lifecycle', 60_000, dueLifecycleScopes, cardLifecycleTimedProcesses),
];
