/**
 * The remittance area's one public file (docs/remittance.md): what the composition roots and other
 * areas use of it. Inside, three sub-areas, each with the role files of docs/architecture.md:
 * `corridors/` (the catalogue, field contracts, the payee form), `payees/` (members' links to
 * shared payees), `orders/` (remittance orders, their dispatch, reconciliation and return watch).
 * A sub-area uses those below it (orders → payees → corridors), never the reverse.
 */
import type { AppInstance } from '../../platform/http/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { corridorOperatorRoutes } from './corridors/operator-routes.js';
import { corridorRoutes } from './corridors/routes.js';
import { orderOperatorRoutes } from './orders/operator-routes.js';
import { orderRoutes } from './orders/routes.js';
import { payeeRoutes } from './payees/routes.js';

export { remittanceJobHandlers, remittanceTickers, remittanceTimedProcesses } from './orders/workers.js';
/** The order reads, as the API's routes answer them (the merchant console lists and shows orders). */
export { getOrder, listOrders } from './orders/service.js';

/** The public routes: the payee form, payees, conversion dates and orders, in this order (the OpenAPI document's). */
export async function remittanceRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  await corridorRoutes(app, ctx);
  await payeeRoutes(app, ctx);
  await orderRoutes(app, ctx);
}

/** The operator routes: the corridor catalogue, then orders. */
export async function remittanceOperatorRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  await corridorOperatorRoutes(app, ctx);
  await orderOperatorRoutes(app, ctx);
}
