import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * Exchange, merchant conversions and earn (docs/exchange.md, docs/earn.md; src/modules/exchange,
 * src/modules/earn): the exchange directions catalogue (which also marks the merchant conversion
 * pairs), exchange orders (a locked quote is an order in state `quoted`), merchant conversions,
 * earn products and earn orders (each with its position). The defaults of extensions 7 are
 * inserted for both environments. A migration is frozen once released: the defaults are written
 * out here, not read from the module (tests check them against the module's rules).
 */

export interface DefaultDirection {
  from_asset: string;
  to_asset: string;
  fee_side: 'from' | 'to';
  fee_bps: number;
  spread_bps: number;
  /** Minor units of the from-asset. */
  min_amount: string;
  max_amount: string;
  member_daily_amount: string;
  member_daily_count: number;
  quote_lock_seconds: number;
  step_up_threshold: string;
  merchant_conversion: boolean;
}

/** Per asset (minor units): minimum, single maximum, member's daily amount, step-up threshold. */
const sizes: Record<string, [string, string, string, string]> = {
  USDT: ['1000000', '100000000000', '250000000000', '10000000000'],
  USDC: ['1000000', '100000000000', '250000000000', '10000000000'],
  BTC: ['10000', '200000000', '500000000', '20000000'],
  ETH: ['1000000000000000', '30000000000000000000', '80000000000000000000', '3000000000000000000'],
  EUR: ['100', '10000000', '25000000', '1000000'],
  USD: ['100', '10000000', '25000000', '1000000'],
};
const spread: Record<string, number> = { BTC: 50, ETH: 50, USDC: 10, EUR: 30, USD: 20 };
const conversionPairs = new Set(['USDC', 'BTC', 'EUR']);

const direction = (from: string, to: string): DefaultDirection => {
  const other = from === 'USDT' ? to : from;
  const [min, max, daily, stepUp] = sizes[from]!;
  return {
    from_asset: from,
    to_asset: to,
    // Buying a volatile coin pays the fee in the coin bought; every other way pays in the asset sold.
    fee_side: from === 'USDT' && (to === 'BTC' || to === 'ETH') ? 'to' : 'from',
    fee_bps: 10,
    spread_bps: spread[other]!,
    min_amount: min,
    max_amount: max,
    member_daily_amount: daily,
    member_daily_count: 50,
    quote_lock_seconds: 60,
    step_up_threshold: stepUp,
    merchant_conversion: conversionPairs.has(other),
  };
};

/** Extensions 7: both ways between USDT and each of BTC, ETH, USDC, EUR, USD; minimum KYC level 1. */
export const defaultDirections: DefaultDirection[] = ['BTC', 'ETH', 'USDC', 'EUR', 'USD'].flatMap((a) => [
  direction('USDT', a),
  direction(a, 'USDT'),
]);
export const defaultDirectionMinKycLevel = 1;

export interface DefaultEarnProduct {
  asset: string;
  type: 'flexible' | 'fixed';
  term_days: number;
  apr_bps: number;
  min_amount: string;
  max_amount: string;
}

/** Extensions 7: one flexible and one fixed-term (30 days) product in USDT. */
export const defaultEarnProducts: DefaultEarnProduct[] = [
  { asset: 'USDT', type: 'flexible', term_days: 0, apr_bps: 365, min_amount: '1000000', max_amount: '1000000000000' },
  { asset: 'USDT', type: 'fixed', term_days: 30, apr_bps: 730, min_amount: '10000000', max_amount: '1000000000000' },
];

const q = (s: string) => `'${s.replace(/'/g, "''")}'`;

export async function up(db: Kysely<any>): Promise<void> {
  const directionRows = ['sandbox', 'production'].flatMap((env) =>
    defaultDirections.map(
      (d) =>
        `(${[
          q(`exd_${env === 'sandbox' ? 's' : 'p'}_${d.from_asset.toLowerCase()}_${d.to_asset.toLowerCase()}`),
          q(env),
          q(d.from_asset),
          q(d.to_asset),
          defaultDirectionMinKycLevel,
          q(d.fee_side),
          d.fee_bps,
          d.spread_bps,
          d.min_amount,
          d.max_amount,
          d.member_daily_amount,
          d.member_daily_count,
          d.quote_lock_seconds,
          d.step_up_threshold,
          d.merchant_conversion,
        ].join(', ')})`,
    ),
  );
  const productRows = ['sandbox', 'production'].flatMap((env) =>
    defaultEarnProducts.map(
      (p) =>
        `(${[
          q(
            ['epr', env === 'sandbox' ? 's' : 'p', p.asset.toLowerCase(), p.type].join('_') +
              (p.term_days ? `_${p.term_days}d` : ''),
          ),
          q(env),
          q(p.asset),
          q(p.type),
          p.term_days,
          p.apr_bps,
          p.min_amount,
          p.max_amount,
        ].join(', ')})`,
    ),
  );
  await runScript(
    db,
    `
    CREATE TABLE exchange_directions (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      from_asset text NOT NULL REFERENCES assets(code),
      to_asset text NOT NULL REFERENCES assets(code),
      enabled boolean NOT NULL DEFAULT true,
      min_kyc_level integer NOT NULL DEFAULT 1 CHECK (min_kyc_level BETWEEN 0 AND 2),
      -- The fee: fee_bps of the side's amount plus fee_fixed (minor units of the fee asset).
      fee_side text NOT NULL CHECK (fee_side IN ('from', 'to')),
      fee_bps integer NOT NULL DEFAULT 0 CHECK (fee_bps BETWEEN 0 AND 10000),
      fee_fixed numeric(78,0) NOT NULL DEFAULT 0 CHECK (fee_fixed >= 0),
      spread_bps integer NOT NULL DEFAULT 0 CHECK (spread_bps BETWEEN 0 AND 5000),
      -- Amounts in minor units of the from-asset; a null limit is no limit.
      min_amount numeric(78,0) NOT NULL CHECK (min_amount > 0),
      max_amount numeric(78,0) CHECK (max_amount > 0),
      member_daily_amount numeric(78,0) CHECK (member_daily_amount > 0),
      member_daily_count integer CHECK (member_daily_count > 0),
      quote_lock_seconds integer NOT NULL DEFAULT 60 CHECK (quote_lock_seconds BETWEEN 5 AND 3600),
      step_up_threshold numeric(78,0) CHECK (step_up_threshold >= 0),
      -- Also a merchant conversion pair (GET /v1/merchant/conversion-pairs).
      merchant_conversion boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (environment, from_asset, to_asset),
      CHECK (from_asset <> to_asset)
    );
    INSERT INTO exchange_directions (id, environment, from_asset, to_asset, min_kyc_level, fee_side, fee_bps,
      spread_bps, min_amount, max_amount, member_daily_amount, member_daily_count, quote_lock_seconds,
      step_up_threshold, merchant_conversion)
    VALUES ${directionRows.join(',\n      ')};

    -- A locked quote is an order in state quoted (exc_<uuid>); a market order is born completed.
    CREATE TABLE exchange_orders (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      merchant_id text NOT NULL REFERENCES merchants(id),
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      member_id text NOT NULL REFERENCES members(id),
      direction_id text NOT NULL REFERENCES exchange_directions(id),
      kind text NOT NULL CHECK (kind IN ('locked', 'market')),
      status text NOT NULL CHECK (status IN ('quoted', 'completed', 'expired')),
      status_version integer NOT NULL,
      from_asset text NOT NULL,
      to_asset text NOT NULL,
      from_amount numeric(78,0) NOT NULL CHECK (from_amount > 0),
      to_amount numeric(78,0) NOT NULL CHECK (to_amount > 0),
      fee_amount numeric(78,0) NOT NULL CHECK (fee_amount >= 0),
      fee_asset text NOT NULL,
      rate text NOT NULL,
      mid_rate text NOT NULL,
      quote_expires_at timestamptz,
      -- The merchant's day (its clock) the execution counts against.
      value_day date,
      created_at timestamptz NOT NULL,
      executed_at timestamptz,
      expired_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX exchange_orders_quoted ON exchange_orders (merchant_id, environment, quote_expires_at)
      WHERE status = 'quoted';
    CREATE INDEX exchange_orders_day ON exchange_orders (member_id, direction_id, value_day) WHERE status = 'completed';
    CREATE INDEX exchange_orders_list ON exchange_orders (merchant_id, environment, member_id, seq);

    CREATE TABLE merchant_conversions (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      merchant_id text NOT NULL REFERENCES merchants(id),
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      direction_id text NOT NULL REFERENCES exchange_directions(id),
      status text NOT NULL CHECK (status IN ('completed')),
      from_asset text NOT NULL,
      to_asset text NOT NULL,
      from_amount numeric(78,0) NOT NULL CHECK (from_amount > 0),
      to_amount numeric(78,0) NOT NULL CHECK (to_amount > 0),
      fee_amount numeric(78,0) NOT NULL CHECK (fee_amount >= 0),
      fee_asset text NOT NULL,
      rate text NOT NULL,
      created_at timestamptz NOT NULL
    );

    CREATE TABLE earn_products (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      asset text NOT NULL REFERENCES assets(code),
      type text NOT NULL CHECK (type IN ('flexible', 'fixed')),
      term_days integer NOT NULL CHECK ((type = 'flexible' AND term_days = 0) OR (type = 'fixed'
        AND term_days BETWEEN 1 AND 3650)),
      apr_bps integer NOT NULL CHECK (apr_bps BETWEEN 0 AND 10000),
      min_amount numeric(78,0) NOT NULL CHECK (min_amount > 0),
      max_amount numeric(78,0) CHECK (max_amount > 0),
      enabled boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    INSERT INTO earn_products (id, environment, asset, type, term_days, apr_bps, min_amount, max_amount)
    VALUES ${productRows.join(',\n      ')};

    -- One earn order per subscription, with its position (epo_<uuid>): principal in the member's earn bucket.
    CREATE TABLE earn_orders (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      position_id text NOT NULL UNIQUE,
      merchant_id text NOT NULL REFERENCES merchants(id),
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      member_id text NOT NULL REFERENCES members(id),
      product_id text NOT NULL REFERENCES earn_products(id),
      asset text NOT NULL,
      type text NOT NULL CHECK (type IN ('flexible', 'fixed')),
      term_days integer NOT NULL,
      apr_bps integer NOT NULL,
      amount numeric(78,0) NOT NULL CHECK (amount > 0),
      status text NOT NULL CHECK (status IN ('active', 'settled', 'redeemed')),
      status_version integer NOT NULL,
      -- Interest accrued and not yet paid (fixed-term: paid at maturity), and paid so far.
      accrued numeric(78,0) NOT NULL DEFAULT 0 CHECK (accrued >= 0),
      interest_paid numeric(78,0) NOT NULL DEFAULT 0 CHECK (interest_paid >= 0),
      days_accrued integer NOT NULL DEFAULT 0,
      started_at timestamptz NOT NULL,
      matures_at timestamptz,
      next_accrual_at timestamptz,
      settled_at timestamptz,
      redeemed_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX earn_orders_due ON earn_orders (merchant_id, environment, next_accrual_at) WHERE status = 'active';
    CREATE INDEX earn_orders_member ON earn_orders (merchant_id, environment, member_id, seq);
  `,
  );
}
