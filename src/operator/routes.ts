import type { RouteModule } from '../platform/http/http-app.js';
import { healthRoutes } from '../platform/http/health.js';
import { merchantOperatorRoutes } from '../modules/merchants/index.js';
import { assetOperatorRoutes } from '../modules/assets/index.js';
import { balanceOperatorRoutes } from '../modules/balances/index.js';
import { withdrawalOperatorRoutes } from '../modules/withdrawals/index.js';
import { alertOperatorRoutes } from '../modules/alerts/index.js';
import { webhookOperatorRoutes } from '../modules/webhooks/index.js';
import { qrpayOperatorRoutes } from '../modules/qrpay/index.js';
import { hostedScreenOperatorRoutes } from '../modules/hosted-screens/index.js';
import { kycOperatorRoutes } from '../modules/kyc/index.js';
import { stepUpOperatorRoutes } from '../modules/step-up/index.js';
import { remittanceOperatorRoutes } from '../modules/remittance/index.js';
import { exchangeOperatorRoutes } from '../modules/exchange/index.js';
import { earnOperatorRoutes } from '../modules/earn/index.js';
import { cardMoneyOperatorRoutes, cardOperatorRoutes } from '../modules/cards/index.js';
import { consoleOperatorRoutes } from '../console/operator-routes.js';

/** Every operator route module (each area's operator-routes.ts), registered on the operator listener. */
export const operatorRouteModules: readonly RouteModule[] = [
  healthRoutes,
  merchantOperatorRoutes,
  assetOperatorRoutes,
  balanceOperatorRoutes,
  withdrawalOperatorRoutes,
  alertOperatorRoutes,
  webhookOperatorRoutes,
  qrpayOperatorRoutes,
  hostedScreenOperatorRoutes,
  kycOperatorRoutes,
  stepUpOperatorRoutes,
  remittanceOperatorRoutes,
  exchangeOperatorRoutes,
  earnOperatorRoutes,
  cardOperatorRoutes,
  cardMoneyOperatorRoutes,
  consoleOperatorRoutes,
];
