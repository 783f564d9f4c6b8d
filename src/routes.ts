import type { AppInstance } from './platform/http-app.js';
import type { ServiceContext } from './service-context.js';
import { healthRoutes } from './platform/health.js';
import { authRoutes } from './modules/auth/routes.js';
import { memberRoutes } from './modules/members/routes.js';

/** Every public route module, registered in one place. */
export async function registerPublicRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  await app.register(async (scope) => healthRoutes(scope as AppInstance, ctx));
  await app.register(async (scope) => authRoutes(scope as AppInstance, ctx));
  await app.register(async (scope) => memberRoutes(scope as AppInstance, ctx));
}
