import { describe } from 'node:test';
import type { RunningService } from '../../src/server.js';
import { instantUpstreams, postgresOnly, useTestService } from './service.js';

/**
 * A suite of requests sent at once, on PostgreSQL only: the embedded database runs one transaction
 * at a time, so nothing races there. Its service answers from the upstreams at once and scales the
 * rate windows by `rateLimitScale`; `suite` reads the running service through `service()`.
 */
export function describeOnPostgres(
  name: string,
  rateLimitScale: number,
  suite: (service: () => RunningService) => void,
): void {
  describe(name, { skip: postgresOnly('the embedded database runs one transaction at a time') }, () => {
    let service: RunningService;
    useTestService({ config: { ...instantUpstreams, rateLimitScale } }, (s) => ({ service } = s));
    suite(() => service);
  });
}

/** Runs what the requests left to do: their jobs, the periodic workers once, then the jobs those queued. */
export async function drainWork(service: RunningService): Promise<void> {
  await service.workers.jobs.drain();
  await service.workers.tick();
  await service.workers.jobs.drain();
}
