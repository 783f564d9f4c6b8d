import type { AppInstance } from '../platform/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { qrpayRoutes } from '../modules/qrpay/routes.js';
import { qrpayOperatorRoutes } from '../modules/qrpay/operator-routes.js';
import { sandboxRoutes } from '../modules/sandbox/routes.js';
import { merchantDepositAddressRoutes } from '../modules/merchant-deposit-address/routes.js';

/** The public routes of the upstream-backed areas: QR pay, sandbox tools, merchant deposit addresses. */
export async function upstreamPublicRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  await app.register(async (scope) => qrpayRoutes(scope as AppInstance, ctx));
  await app.register(async (scope) => sandboxRoutes(scope as AppInstance, ctx));
  await app.register(async (scope) => merchantDepositAddressRoutes(scope as AppInstance, ctx));
}

/** Their operator routes. */
export async function upstreamOperatorRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  await app.register(async (scope) => qrpayOperatorRoutes(scope as AppInstance, ctx));
}
