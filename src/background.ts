import type { BatchQueue, JobHandlers, Ticker, TimedProcess } from './jobs/types.js';
import { housekeepingTicker } from './jobs/housekeeping.js';
import {
  webhookBatchQueues,
  webhookJobHandlers,
  webhookTickers,
  webhookTimedProcesses,
} from './modules/webhooks/index.js';
import { qrpayTickers } from './modules/qrpay/index.js';
import { upstreamTickers } from './upstreams/workers.js';
import { kycJobHandlers } from './modules/kyc/index.js';
import { remittanceJobHandlers, remittanceTickers, remittanceTimedProcesses } from './modules/remittance/index.js';
import { exchangeTickers, exchangeTimedProcesses } from './modules/exchange/index.js';
import { earnTickers, earnTimedProcesses } from './modules/earn/index.js';
import {
  cardJobHandlers,
  cardLifecycleJobHandlers,
  cardLifecycleTickers,
  cardLifecycleTimedProcesses,
  cardMoneyJobHandlers,
  cardMoneyTickers,
  cardReconcileTickers,
  cardReconcileTimedProcesses,
  cardTickers,
  cardTimedProcesses,
} from './modules/cards/index.js';
import { consoleTickers } from './console/workers.js';
import { eventTickers, eventTimedProcesses } from './modules/events/index.js';
import { exportJobHandlers, exportTickers } from './modules/exports/index.js';

/**
 * Every background job, assembled in one place (a composition root, like src/routes.ts): src/jobs
 * runs what it is given and imports no module. An area with jobs or tickers exports them from its
 * workers.ts and is listed here.
 */

/** Queue handlers by job kind. */
export const jobHandlers: JobHandlers = {
  ...webhookJobHandlers,
  ...kycJobHandlers,
  ...remittanceJobHandlers,
  ...cardJobHandlers,
  ...cardMoneyJobHandlers,
  ...cardLifecycleJobHandlers,
  ...exportJobHandlers,
};

/** Periodic work of every area. */
export const tickers: Ticker[] = [
  housekeepingTicker,
  ...webhookTickers,
  ...qrpayTickers,
  ...remittanceTickers,
  ...exchangeTickers,
  ...earnTickers,
  ...upstreamTickers,
  ...cardTickers,
  ...cardReconcileTickers,
  ...cardMoneyTickers,
  ...cardLifecycleTickers,
  ...consoleTickers,
  ...eventTickers,
  ...exportTickers,
];

/**
 * Work due at a time on a merchant's clock, which `POST /v1/sandbox/clock/advance` runs as the
 * clock passes it (docs/clock.md). Processes due at the same time run in this order.
 */
export const timedProcesses: TimedProcess[] = [
  ...webhookTimedProcesses,
  ...exchangeTimedProcesses,
  ...remittanceTimedProcesses,
  ...earnTimedProcesses,
  ...cardTimedProcesses,
  ...cardReconcileTimedProcesses,
  ...cardLifecycleTimedProcesses,
  // Last: an event's own deliveries due at the same time go first.
  ...eventTimedProcesses,
];

/** Queues claimed in batches from an area's own table (the job runner polls them beside the jobs table). */
export const batchQueues: BatchQueue[] = [...webhookBatchQueues];
