import type { FastifyReply } from 'fastify';
import type { ServiceContext } from '../../service-context.js';
import type { AppInstance } from './http-app.js';
import { selectOne } from '../queries/health.js';

const publicAccess = { access: { scope: 'public' as const } };

/** Services whose shutdown has begun (server.ts `close`): their /readyz answers 503 from that moment. */
const draining = new WeakSet<ServiceContext>();

/** The drain has begun: load balancers must send no more requests to this process. */
export function beginDrain(ctx: ServiceContext): void {
  draining.add(ctx);
}

export async function healthRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  // Reads nothing of the request: no hook runs for it (http-app.ts, `readsNoInput`), only its
  // request id, the log and the latency histogram.
  app.get(
    '/healthz',
    { config: { ...publicAccess, readsNoInput: true }, schema: { hide: true } as object },
    async () => ({ ok: true }),
  );
  // A probe for load balancers, not part of the API's error contract: 503 from the moment a drain
  // begins (also on a listener already closing, where other requests are refused) and while the
  // database is unreachable.
  app.get(
    '/readyz',
    { config: { ...publicAccess, answersWhileClosing: true }, schema: { hide: true } as object },
    async (_req, reply) => {
      if (draining.has(ctx)) return notReady(reply, { ok: false, draining: true });
      try {
        await selectOne(ctx.db);
        return { ok: true };
      } catch {
        return notReady(reply, { ok: false });
      }
    },
  );
}

/** 503 with the probe's own body, sent as JSON text: it is not the API's error envelope (which every other 4xx and 5xx
 * body is). */
function notReady(reply: FastifyReply, body: { ok: false; draining?: true }): FastifyReply {
  return reply.code(503).type('application/json; charset=utf-8').send(JSON.stringify(body));
}
