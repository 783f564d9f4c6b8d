import type { Kysely, Transaction } from 'kysely';
/**
 * The one Kysely schema, composed of each area's tables; each area owns its tables.ts. This file
 * only composes: it imports types and nothing imports it back from a table file (column helper
 * types are in ./columns.ts), so there is no cycle.
 */
import type { PlatformTables } from '../platform/tables.js';
import type { LedgerTables } from '../money/tables.js';
import type { JobTables } from '../jobs/tables.js';
import type { UpstreamTables } from '../upstreams/tables.js';
import type { AlertTables } from '../modules/alerts/tables.js';
import type { CardTables } from '../modules/cards/tables.js';
import type { BalanceTables } from '../modules/balances/tables.js';
import type { DepositTables } from '../modules/deposits/tables.js';
import type { DepositAddressTables } from '../modules/merchant-deposit-address/tables.js';
import type { MemberTables } from '../modules/members/tables.js';
import type { HostedScreenTables } from '../modules/hosted-screens/tables.js';
import type { KycTables } from '../modules/kyc/tables.js';
import type { QrPayTables } from '../modules/qrpay/tables.js';
import type { StepUpTables } from '../modules/step-up/tables.js';
import type { RemittanceTables } from '../modules/remittance/tables.js';
import type { ExchangeTables } from '../modules/exchange/tables.js';
import type { EarnTables } from '../modules/earn/tables.js';
import type { WebhookTables } from '../modules/webhooks/tables.js';
import type { WithdrawalTables } from '../modules/withdrawals/tables.js';
import type { CardLifecycleTables } from '../modules/cards/tables.js';
import type { ConsoleTables } from '../console/tables.js';
import type { ExportTables } from '../modules/exports/tables.js';
import type { EventTables } from '../modules/events/tables.js';

/** Kept here for the many callers that type a query by environment; new code imports it from ./columns.js. */
export type { Environment } from './columns.js';

/** A database handle or a transaction: what every read and write takes. */
export type Db = Kysely<Database> | Transaction<Database>;

/** A transaction: what a statement that must run in its caller's takes (a lock, a write with its event). */
export type Trx = Transaction<Database>;

export interface Database
  extends
    PlatformTables,
    LedgerTables,
    JobTables,
    UpstreamTables,
    AlertTables,
    BalanceTables,
    CardTables,
    DepositTables,
    DepositAddressTables,
    MemberTables,
    HostedScreenTables,
    KycTables,
    QrPayTables,
    RemittanceTables,
    ExchangeTables,
    EarnTables,
    StepUpTables,
    WebhookTables,
    WithdrawalTables,
    CardLifecycleTables,
    ConsoleTables,
    ExportTables,
    EventTables {}
