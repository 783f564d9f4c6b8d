import type { ServiceContext } from '../service-context.js';
import type { JobHandler } from './runner.js';
import { purgeExpiredNonces } from '../platform/nonces.js';
import { purgeExpiredKeys } from '../platform/idempotency.js';
import { purgeOldWindows } from '../platform/rate-limit.js';
import { purgeExpiredTokens } from '../platform/auth.js';
import { upstreamTickers } from '../upstreams/workers.js';
import { qrpayTickers } from '../modules/qrpay/workers.js';
import { webhookJobHandlers, webhookTickers } from '../modules/webhooks/workers.js';

/** Queue handlers by job kind. Each module that enqueues jobs adds its handlers here. */
export const jobHandlers: Record<string, JobHandler> = {
  ...webhookJobHandlers,
};

export interface Ticker {
  name: string;
  intervalMs: number;
  run(ctx: ServiceContext): Promise<void>;
}

/**
 * Periodic work. Every ticker must be safe to run in several processes at once (SKIP LOCKED claims
 * or idempotent deletes), because each process runs its own.
 */
export const tickers: Ticker[] = [
  {
    name: 'housekeeping',
    intervalMs: 60_000,
    async run(ctx) {
      await purgeExpiredNonces(ctx.db);
      await purgeExpiredKeys(ctx.db);
      await purgeOldWindows(ctx.db);
      await purgeExpiredTokens(ctx.db);
    },
  },
  ...webhookTickers,
  ...qrpayTickers,
  ...upstreamTickers,
];
