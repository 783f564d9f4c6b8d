/**
 * The resource helpers of the client, one file per resource (src/resources/; a card's money, merged
 * into `cards`, in card-money.ts). Each helper is a single `request` (or `paginate`) call. Writes
 * that create objects or move money get an idempotency key (UUID v4) per call unless the caller
 * passes one; non-paged lists resolve with their `data` array.
 */

import { createAssetsResource, type AssetsResource } from './resources/assets.js';
import { createBalancesResource, type BalancesResource } from './resources/balances.js';
import { createBalanceMonitorsResource, type BalanceMonitorsResource } from './resources/balance-monitors.js';
import { createCardsResource, type CardsResource } from './resources/cards.js';
import { createDepositsResource, type DepositsResource } from './resources/deposits.js';
import { createEarnResource, type EarnResource } from './resources/earn.js';
import { createEventsResource, type EventsResource } from './resources/events.js';
import { createExchangeResource, type ExchangeResource } from './resources/exchange.js';
import { createExportsResource, type ExportsResource } from './resources/exports.js';
import { createHostedScreensResource, type HostedScreensResource } from './resources/hosted-screens.js';
import { createKycResource, type KycResource } from './resources/kyc.js';
import { createLedgerResource, type LedgerResource } from './resources/ledger.js';
import { createMembersResource, type MembersResource } from './resources/members.js';
import { createMerchantResource, type MerchantResource } from './resources/merchant.js';
import { createQrpayResource, type QrpayResource } from './resources/qrpay.js';
import { createRemittanceResource, type RemittanceResource } from './resources/remittance.js';
import { createSandboxResource, type SandboxResource } from './resources/sandbox.js';
import type { ResourceHost } from './resources/shared.js';
import { createWebhooksResource, type WebhooksResource } from './resources/webhook-endpoints.js';
import { createWithdrawalsResource, type WithdrawalsResource } from './resources/withdrawals.js';

export type { OnBehalfOfOptions, ResourceHost, WriteOptions } from './resources/shared.js';

export interface Resources {
  members: MembersResource;
  deposits: DepositsResource;
  balances: BalancesResource;
  merchant: MerchantResource;
  assets: AssetsResource;
  withdrawals: WithdrawalsResource;
  webhooks: WebhooksResource;
  /** Events kept by the service (list, one, the live stream with resume). */
  events: EventsResource;
  qrpay: QrpayResource;
  /** The merchant's journal entries (resources/ledger.ts). */
  ledger: LedgerResource;
  /** Monitors of the merchant's prepaid and custody balances (resources/balance-monitors.ts). */
  balanceMonitors: BalanceMonitorsResource;
  /** Export files of the merchant's objects (resources/exports.ts). */
  exports: ExportsResource;
  kyc: KycResource;
  hostedScreens: HostedScreensResource;
  /** Sandbox tools: 404 `not_found` on a production host. */
  sandbox: SandboxResource;
  /** Payees, their form schema and name check, settlement dates, remittance orders (resources/remittance.ts). */
  remittance: RemittanceResource;
  /** Exchange quotes (read-only or locked), exchange orders, merchant conversions (resources/exchange.ts). */
  exchange: ExchangeResource;
  /** Earn products, subscriptions, positions, redemption (resources/earn.ts). */
  earn: EarnResource;
  /**
   * Card issuing: products, applications, supplement, the card record, activation (resources/cards.ts; its money:
   * resources/card-money.ts).
   */
  cards: CardsResource;
}

export function createResources(host: ResourceHost): Resources {
  return {
    members: createMembersResource(host),
    deposits: createDepositsResource(host),
    balances: createBalancesResource(host),
    merchant: createMerchantResource(host),
    assets: createAssetsResource(host),
    withdrawals: createWithdrawalsResource(host),
    webhooks: createWebhooksResource(host),
    events: createEventsResource(host),
    qrpay: createQrpayResource(host),
    ledger: createLedgerResource(host),
    balanceMonitors: createBalanceMonitorsResource(host),
    exports: createExportsResource(host),
    kyc: createKycResource(host),
    hostedScreens: createHostedScreensResource(host),
    sandbox: createSandboxResource(host),
    remittance: createRemittanceResource(host),
    exchange: createExchangeResource(host),
    earn: createEarnResource(host),
    cards: createCardsResource(host),
  };
}
