/** Earn's daily accrual, flexible payouts and fixed-term maturity: a timed process (the sandbox advance) and a ticker.
 * */
import type { Ticker, TimedProcess } from '../../jobs/types.js';
import { nextAccrual, runDueAccruals } from './service.js';

const batchMax = 200;

export const earnAccrualProcess: TimedProcess = {
  name: 'earn.accrual',
  nextDue: (db, scope) => nextAccrual(db, scope),
  runDue: (ctx, scope, now) => runDueAccruals(ctx, batchMax, scope, now),
};

export const earnTimedProcesses: TimedProcess[] = [earnAccrualProcess];

export const earnTickers: Ticker[] = [
  { name: 'earn.accrual', intervalMs: 60_000, run: (ctx) => runDueAccruals(ctx, batchMax) },
];
