import { timingSafeEqual, createHash } from 'node:crypto';
import type { ServiceContext } from '../service-context.js';
import { ApiError } from '../platform/errors.js';
import { createBaseApp, registerModules, type AppInstance } from '../platform/http/http-app.js';
import { registerOperatorOpenApi } from '../platform/openapi/openapi-operator.js';
import { operatorRouteModules } from './routes.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** The operator listener's routes that answer without the token (extensions 2: health, readiness, metrics). */
const openRoutes = new Set(['/healthz', '/readyz', '/metrics']);

/** The operator listener: bearer ADMIN_TOKEN on every /admin call, health and metrics without. */
export function buildAdminApp(ctx: ServiceContext, adminToken: string): AppInstance {
  const app = createBaseApp(ctx);
  const expected = digest(adminToken);

  // Decided by the route the router matched, never by the URL as sent: the router decodes
  // percent-escapes (`/%61dmin/...` is `/admin/...`), a prefix test of the raw URL does not.
  // Everything but the probes and the metrics needs the token, unmatched paths included.
  app.addHook('onRequest', async (req, reply) => {
    void reply.header('x-request-id', req.id);
    const route = req.routeOptions.url;
    if (route !== undefined && openRoutes.has(route)) return;
    const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!m || !timingSafeEqual(digest(m[1]!), expected)) throw new ApiError('invalid_token');
  });

  // A change of keys, merchants or tokens reaches every process's authentication cache by the
  // database's notification, which may arrive a moment after the answer; this process forgets
  // its cache before answering, so the caller's next request here sees the change at once.
  app.addHook('onSend', async (req, _reply, payload) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') ctx.authCache.invalidate();
    return payload;
  });

  app.get('/metrics', async (_req, reply) => {
    return reply.header('content-type', ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics());
  });
  registerOperatorOpenApi(app); // first: it collects every route registered after it
  registerModules(app, ctx, operatorRouteModules);
  return app;
}
