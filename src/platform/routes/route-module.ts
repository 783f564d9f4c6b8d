import type { ServiceContext } from '../../service-context.js';
import type { RouteModule } from '../http/http-app.js';
import { operatorRouter, type OperatorRouter } from './operator-route.js';
import { router, type Router } from './route.js';

/**
 * A file of routes as src/routes.ts (public) or src/operator/routes.ts (operator) registers it:
 *
 *   export const withdrawalRoutes = publicRoutes((route, { db }) => {
 *     route.get('/v1/withdrawals/:id', readOne({ ... }), async ({ principal, params }) => ...);
 *   });
 *
 * `declare` receives the router of the app the module is registered on and the service context,
 * and declares the routes in the order of the OpenAPI document.
 */
export function publicRoutes(declare: (route: Router, ctx: ServiceContext) => void): RouteModule {
  return async (app, ctx) => declare(router(app, ctx), ctx);
}

/** The same for the operator API: `declare` receives the operator router (operator-route.ts). */
export function operatorRoutes(declare: (route: OperatorRouter, ctx: ServiceContext) => void): RouteModule {
  return async (app, ctx) => declare(operatorRouter(app, ctx), ctx);
}
