import type { JobHandler, Ticker } from './jobs/types.js';
import { housekeepingTicker } from './jobs/housekeeping.js';
import { webhookJobHandlers, webhookTickers } from './modules/webhooks/workers.js';
import { qrpayTickers } from './modules/qrpay/workers.js';
import { upstreamTickers } from './upstreams/workers.js';
import { remittanceJobHandlers, remittanceTickers } from './modules/remittance/workers.js';

/**
 * Every background job, assembled in one place (a composition root, like src/routes.ts): src/jobs
 * runs what it is given and imports no module. An area with jobs or tickers exports them from its
 * workers.ts and is listed here.
 */

/** Queue handlers by job kind. */
export const jobHandlers: Record<string, JobHandler> = {
  ...webhookJobHandlers,
  ...remittanceJobHandlers,
};

/** Periodic work of every area. */
export const tickers: Ticker[] = [
  housekeepingTicker,
  ...webhookTickers,
  ...qrpayTickers,
  ...remittanceTickers,
  ...upstreamTickers,
];
