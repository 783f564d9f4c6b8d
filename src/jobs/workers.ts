import type { ServiceContext } from '../service-context.js';
import { purgeExpiredNonces } from '../platform/nonces.js';
import { purgeExpiredKeys } from '../platform/idempotency.js';
import { purgeOldWindows } from '../platform/rate-limit.js';
import { purgeExpiredTokens } from '../platform/auth.js';

export interface Workers {
  stop(): Promise<void>;
}

const housekeepingIntervalMs = 60_000;

/** Periodic work. Each run is bounded; stop() waits for a run in progress to end. */
export function startWorkers(ctx: ServiceContext): Workers {
  let running: Promise<void> | undefined;
  const housekeeping = async () => {
    for (const [job, fn] of [
      ['purge_nonces', purgeExpiredNonces],
      ['purge_idempotency_keys', purgeExpiredKeys],
      ['purge_rate_windows', purgeOldWindows],
      ['purge_tokens', purgeExpiredTokens],
    ] as const) {
      try {
        await fn(ctx.db);
        ctx.metrics.jobRuns.inc({ job, outcome: 'ok' });
      } catch {
        ctx.metrics.jobRuns.inc({ job, outcome: 'error' });
      }
    }
  };
  const timer = setInterval(() => {
    running ??= housekeeping().finally(() => (running = undefined));
  }, housekeepingIntervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
