import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { randomUUID, timingSafeEqual, createHash } from 'node:crypto';
import type { ServiceContext } from '../service-context.js';
import { ApiError } from '../platform/errors.js';
import { installBodyParsing, installErrorHandling, loggerOptions, type AppInstance } from '../platform/http-app.js';
import { validatorCompiler } from '../platform/validation.js';
import { healthRoutes } from '../platform/health.js';
import { operatorRoutes } from './routes.js';
import { assetOperatorRoutes } from './assets-routes.js';
import { operatorMemberRoutes } from './members-routes.js';
import { operatorMoneyRoutes } from './money-routes.js';
import { operatorAlertRoutes } from './alerts-routes.js';
import { webhookOperatorRoutes } from '../modules/webhooks/operator-routes.js';
import { upstreamOperatorRoutes } from '../upstreams/routes.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** The operator listener: bearer ADMIN_TOKEN on every /admin call, health and metrics without. */
export function buildAdminApp(ctx: ServiceContext, adminToken: string): AppInstance {
  const app = Fastify({
    logger: ctx.logger === false ? false : loggerOptions(ctx.config.logLevel),
    genReqId: () => `req_${randomUUID()}`,
    bodyLimit: ctx.config.bodyLimitBytes,
    return503OnClosing: true,
  }).withTypeProvider<TypeBoxTypeProvider>() as AppInstance;
  app.setValidatorCompiler(validatorCompiler);
  installBodyParsing(app);
  installErrorHandling(app);
  const expected = digest(adminToken);

  app.addHook('onRequest', async (req, reply) => {
    void reply.header('x-request-id', req.id);
    if (!req.url.startsWith('/admin/')) return;
    const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!m || !timingSafeEqual(digest(m[1]!), expected)) throw new ApiError('invalid_token');
  });

  app.get('/metrics', async (_req, reply) => {
    return reply.header('content-type', ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics());
  });
  void app.register(async (scope) => healthRoutes(scope as AppInstance, ctx));
  void app.register(async (scope) => operatorRoutes(scope as AppInstance, ctx));
  void app.register(async (scope) => assetOperatorRoutes(scope as AppInstance, ctx));
  void app.register(async (scope) => operatorMemberRoutes(scope as AppInstance, ctx));
  void app.register(async (scope) => operatorMoneyRoutes(scope as AppInstance, ctx));
  void app.register(async (scope) => operatorAlertRoutes(scope as AppInstance, ctx));
  void app.register(async (scope) => webhookOperatorRoutes(scope as AppInstance, ctx));
  void app.register(async (scope) => upstreamOperatorRoutes(scope as AppInstance, ctx));
  return app;
}
