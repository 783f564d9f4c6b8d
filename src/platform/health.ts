import { sql } from 'kysely';
import type { ServiceContext } from '../service-context.js';
import type { AppInstance } from './http-app.js';

const publicAccess = { access: { scope: 'public' as const } };

export async function healthRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  // Reads nothing of the request: no hook runs for it (http-app.ts, `readsNoInput`), only its
  // request id, the log and the latency histogram.
  app.get('/healthz', { config: { ...publicAccess, readsNoInput: true }, schema: { hide: true } as object }, async () => ({ ok: true }));
  // A probe for load balancers, not part of the API's error contract: 503 while the database is unreachable.
  app.get('/readyz', { config: publicAccess, schema: { hide: true } as object }, async (_req, reply) => {
    try {
      await sql`SELECT 1`.execute(ctx.db);
      return { ok: true };
    } catch {
      return reply.code(503).send({ ok: false });
    }
  });
}
