import type { JobHandler, Ticker } from '../../jobs/types.js';
import { exportJobKind, failExport, writeExport } from './service.js';
import { deleteExpiredExports } from './queries/exports.js';

/** The export writer: a failed attempt is run again from the start; after the last, the export is `failed`. */
export const exportJobHandlers: Record<string, JobHandler> = {
  [exportJobKind]: async (job, ctx) => {
    const id = String(job.payload.id);
    try {
      await writeExport(ctx.db, ctx.clock, id);
    } catch (err) {
      if (job.attempts >= job.max_attempts) {
        await failExport(ctx.db, ctx.clock, id, err instanceof Error ? err.message : String(err));
        return;
      }
      throw err;
    }
  },
};

/** Files past their seven days go (with their rows). */
export const exportTickers: Ticker[] = [
  {
    name: 'exports.expire',
    intervalMs: 60_000,
    run: async (ctx) => {
      while ((await deleteExpiredExports(ctx.db)) > 0);
    },
  },
];
