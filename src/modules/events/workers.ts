import type { Ticker, TimedProcess } from '../../jobs/types.js';
import { eventRetentionProcess, eventRetentionTicker } from './retention.js';

/** Retention (retention.ts): pruned on each merchant's clock, by the advance and by the ticker. */
export const eventTimedProcesses: TimedProcess[] = [eventRetentionProcess];
export const eventTickers: Ticker[] = [eventRetentionTicker];
