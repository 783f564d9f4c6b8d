import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * Upstreams (docs/upstreams.md): sandbox behaviour injection, the built-in simulator's own books,
 * and QR payment orders (docs/qrpay.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    -- A sandbox merchant's preset for one upstream's money-moving step. No row (or an expired
    -- one) means success; 'success' is never stored.
    CREATE TABLE upstream_behaviors (
      merchant_id text NOT NULL REFERENCES merchants(id),
      environment text NOT NULL CHECK (environment = 'sandbox'),
      upstream text NOT NULL CHECK (upstream IN ('remittance', 'card', 'qrpay', 'chain')),
      behavior text NOT NULL CHECK (behavior IN ('reject', 'timeout', 'unknown', 'unknown_status')),
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (merchant_id, environment, upstream)
    );

    -- The simulator plays the provider: what it knows of each request, keyed by our request id.
    CREATE TABLE upstream_sim_orders (
      upstream text NOT NULL CHECK (upstream IN ('remittance', 'card', 'qrpay', 'chain')),
      request_id text NOT NULL,
      merchant_id text NOT NULL,
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      provider_order_id text NOT NULL UNIQUE,
      operation text NOT NULL,
      status text NOT NULL CHECK (status IN ('processing', 'succeeded', 'failed', 'refunded')),
      final_status text NOT NULL CHECK (final_status IN ('processing', 'succeeded', 'failed', 'refunded')),
      settle_at timestamptz NOT NULL,
      unknown_status boolean NOT NULL DEFAULT false,
      detail jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (upstream, request_id)
    );

    CREATE TABLE qrpay_orders (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      merchant_id text NOT NULL REFERENCES merchants(id),
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      member_id text NOT NULL REFERENCES members(id),
      -- The x-idempotency-key of the creating request: a retry with it resumes this order.
      idempotency_key text NOT NULL,
      request_hash text NOT NULL,
      scheme text NOT NULL,
      merchant_name text NOT NULL,
      merchant_city text NOT NULL,
      country text NOT NULL,
      asset text NOT NULL REFERENCES assets(code),
      amount numeric(78,0) NOT NULL CHECK (amount > 0),
      note text,
      qr_code text NOT NULL,
      -- suspended is ours (a status outside the provider's enumeration); callers see processing.
      status text NOT NULL CHECK (status IN ('processing', 'suspended', 'completed', 'failed', 'refunded')),
      status_version integer NOT NULL CHECK (status_version > 0),
      -- What the provider last told us about the payment call: pending while it is in flight.
      upstream_outcome text NOT NULL CHECK (upstream_outcome IN ('pending', 'accepted', 'timeout', 'unknown')),
      provider_order_id text,
      provider_status text,
      failure_reason text,
      call_started_at timestamptz NOT NULL DEFAULT now(),
      check_count integer NOT NULL DEFAULT 0,
      next_check_at timestamptz,
      last_checked_at timestamptz,
      completed_at timestamptz,
      failed_at timestamptz,
      refunded_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX qrpay_orders_key ON qrpay_orders (merchant_id, environment, idempotency_key);
    CREATE INDEX qrpay_orders_merchant ON qrpay_orders (merchant_id, environment, seq);
    CREATE INDEX qrpay_orders_member ON qrpay_orders (member_id, seq);
    CREATE INDEX qrpay_orders_due ON qrpay_orders (next_check_at) WHERE status IN ('processing', 'suspended');
  `,
  );
}
