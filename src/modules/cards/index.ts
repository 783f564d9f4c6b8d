/**
 * The card area's public surface (docs/cards.md): what the composition roots list (route modules,
 * hosted screens, operator routes, job handlers, tickers, timed processes) and what other areas
 * use (the merchant console's card pages). Another area imports this file and nothing else of
 * `cards/` (`npm run lint:deps`).
 */
import { topUpRoutes as topUps } from './topups/routes.js';
import { transactionRoutes as transactions } from './transactions/routes.js';
import { productRoutes as products } from './products/routes.js';
import { applicationRoutes as applications } from './applications/routes.js';
import { cardRecordRoutes as cards } from './cards/routes.js';
import { controlRoutes as controls } from './controls/routes.js';
import { replacementRoutes as replacements } from './replacements/routes.js';
import { closingRoutes as closing } from './closing/routes.js';
import { cardRouteModule } from './shared/routes.js';
import type { HostedScreen } from '../hosted-screens/index.js';
import { cardSupplementScreen } from './applications/screens.js';
import { cardRevealScreen } from './cards/reveal.js';

export type { CardTables, CardLifecycleTables } from './tables.js';

/**
 * Card issuing I (docs/cards.md): products, applications and their supplement, the card record,
 * activation, controls. Registered in this order, the order of their paths in the OpenAPI document.
 */
export const cardRoutes = cardRouteModule([
  products.list,
  applications.create,
  applications.getById,
  applications.supplementSession,
  cards.list,
  cards.getById,
  cards.activate,
  controls.setLimits,
  controls.getMerchantRules,
  controls.setMerchantRules,
  controls.deleteMerchantRules,
  controls.setBillingAddress,
  controls.unblockCvv,
  cards.secureSession,
  applications.sandboxAdvance,
  cards.sandboxShip,
]);

/**
 * Card issuing II, the lifecycle (docs/cards.md, "Replacement, closing and expiry"): replacements
 * and closing, registered in the order of the OpenAPI document.
 */
export const cardLifecycleRoutes = cardRouteModule([
  replacements.create,
  replacements.list,
  replacements.getById,
  closing.close,
]);

/** The card area's hosted screens, listed in src/routes.ts. */
export const cardScreens: readonly HostedScreen[] = [cardSupplementScreen, cardRevealScreen];

export { cardOperatorRoutes } from './products/operator-routes.js';
export { cardMoneyOperatorRoutes } from './topups/operator-routes.js';
export {
  cardJobHandlers,
  cardTickers,
  cardTimedProcesses,
  cardReconcileTickers,
  cardReconcileTimedProcesses,
  cardLifecycleJobHandlers,
  cardLifecycleTickers,
  cardLifecycleTimedProcesses,
} from './shared/workers.js';
export { cardMoneyJobHandlers, cardMoneyTickers } from './topups/workers.js';

// The merchant console's card pages and sandbox helpers.
export { getCard, sandboxShip } from './cards/service.js';
export { getApplication, sandboxAdvance } from './applications/service.js';
export { getTopUp, listTopUps } from './topups/service.js';
export { authorize, listTransactions } from './transactions/service.js';
export { getReplacement, listReplacements } from './replacements/service.js';
export { AuthorizationBody as AuthorizationBodySchema } from './transactions/schemas.js';

/**
 * Card issuing II, the money side (docs/cards.md "Card money"): top-up quotes and top-ups,
 * transactions and their sandbox helpers. Registered in this order, the order of their paths in
 * the OpenAPI document.
 */
export const cardMoneyRoutes = cardRouteModule([
  topUps.quote,
  topUps.create,
  topUps.list,
  topUps.getById,
  transactions.getById,
  topUps.getOfCard,
  transactions.list,
  transactions.sandboxAuthorization,
  transactions.sandboxClearing,
  transactions.sandboxReversal,
  transactions.sandboxRefund,
]);
