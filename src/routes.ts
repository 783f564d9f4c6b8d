import { registerModules, type AppInstance } from './platform/http/http-app.js';
import type { ServiceContext } from './service-context.js';
import { healthRoutes } from './platform/http/health.js';
import { authRoutes } from './modules/auth/index.js';
import { registerOpenApi } from './platform/openapi/openapi.js';
import { webhooksDocument } from './events/index.js';
import { registerDocsPage } from './platform/openapi/docs-page.js';
import { assetRoutes } from './modules/assets/index.js';
import { memberRoutes } from './modules/members/index.js';
import { depositRoutes } from './modules/deposits/index.js';
import { balanceRoutes } from './modules/balances/index.js';
import { withdrawalRoutes } from './modules/withdrawals/index.js';
import { qrpayRoutes } from './modules/qrpay/index.js';
import { sandboxRoutes } from './modules/sandbox/index.js';
import { merchantDepositAddressRoutes } from './modules/merchant-deposit-address/index.js';
import { webhookRoutes } from './modules/webhooks/index.js';
import { timedProcesses } from './background.js';
import { type HostedScreen, hostedScreenRoutes, screenRegistry } from './modules/hosted-screens/index.js';
import { kycRoutes, kycScreens } from './modules/kyc/index.js';
import { stepUpScreen } from './modules/step-up/index.js';
import { cardLifecycleRoutes, cardMoneyRoutes, cardRoutes, cardScreens } from './modules/cards/index.js';

/**
 * Every area's hosted screens (one per ticket purpose). A purpose missing here shows "not
 * available yet" (card reveal until its area adds one).
 */
const hostedScreens: readonly HostedScreen[] = [...kycScreens, stepUpScreen, ...cardScreens];
import { remittanceRoutes } from './modules/remittance/index.js';
import { exchangeRoutes } from './modules/exchange/index.js';
import { earnRoutes } from './modules/earn/index.js';
import { consoleRoutes } from './console/routes.js';
import { ledgerEntryRoutes } from './modules/ledger-entries/index.js';
import { exportRoutes } from './modules/exports/index.js';
import { eventRoutes } from './modules/events/index.js';

/** Every public route module, registered in one place. */
export async function registerPublicRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  await registerOpenApi(app, ctx, webhooksDocument); // first: it collects every route registered after it
  await registerDocsPage(app, ctx);
  registerModules(app, ctx, [
    healthRoutes,
    authRoutes,
    assetRoutes,
    memberRoutes,
    depositRoutes,
    balanceRoutes,
    withdrawalRoutes,
    qrpayRoutes,
    sandboxRoutes(timedProcesses),
    merchantDepositAddressRoutes,
    webhookRoutes,
    hostedScreenRoutes(hostedScreens),
    kycRoutes,
    remittanceRoutes,
    exchangeRoutes,
    earnRoutes,
    cardRoutes,
    cardMoneyRoutes,
    cardLifecycleRoutes,
    ledgerEntryRoutes,
    exportRoutes,
    eventRoutes,
    consoleRoutes(timedProcesses, screenRegistry(hostedScreens)),
  ]);
  await app.after(); // loaded now, so callers see every route when this resolves
}
