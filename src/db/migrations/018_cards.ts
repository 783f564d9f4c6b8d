import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * Card issuing I (docs/cards.md; src/modules/cards): the product catalogue with the defaults of
 * extensions 7 in both environments, per-merchant BIN authorisations, card applications with
 * their supplement work order and its sealed images, and cards. Amounts are minor units: product
 * amounts in the card currency, the opening fee on an application in its source asset. Nothing
 * here holds a full card number, a CVV or a PIN: the issuer keeps them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    CREATE TABLE card_products (
      seq bigserial PRIMARY KEY,
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      form_factor text NOT NULL CHECK (form_factor IN ('virtual', 'physical')),
      currency text NOT NULL REFERENCES assets (code),
      bin text NOT NULL CHECK (bin ~ '^[0-9]{6,8}$'),
      scheme text NOT NULL,
      card_types jsonb NOT NULL,
      source_assets jsonb NOT NULL,
      opening_fee numeric(78,0) NOT NULL CHECK (opening_fee >= 0),
      topup_min numeric(78,0) NOT NULL CHECK (topup_min > 0),
      topup_max_single numeric(78,0) NOT NULL CHECK (topup_max_single >= topup_min),
      max_single numeric(78,0) NOT NULL CHECK (max_single > 0),
      max_daily numeric(78,0) NOT NULL CHECK (max_daily >= max_single),
      max_monthly numeric(78,0) NOT NULL CHECK (max_monthly >= max_daily),
      billing_address_updatable boolean NOT NULL,
      card_lists_supported boolean NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE card_bin_authorizations (
      merchant_id text NOT NULL REFERENCES merchants (id),
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      bin text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (merchant_id, environment, bin)
    );

    CREATE TABLE card_applications (
      seq bigserial PRIMARY KEY,
      id text NOT NULL UNIQUE,
      merchant_id text NOT NULL REFERENCES merchants (id),
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      member_id text NOT NULL REFERENCES members (id),
      product_seq bigint NOT NULL REFERENCES card_products (seq),
      source_asset text NOT NULL REFERENCES assets (code),
      fee numeric(78,0) NOT NULL CHECK (fee >= 0),
      shipping_address jsonb,
      status text NOT NULL CHECK (status IN ('pending', 'need_docs', 'approved', 'rejected', 'failed')),
      status_version integer NOT NULL,
      upstream_outcome text NOT NULL CHECK (upstream_outcome IN ('none', 'accepted', 'unknown')),
      upstream_ref text,
      supplement_status text CHECK (supplement_status IN ('pending', 'submitted')),
      supplement_expires_at timestamptz,
      card_id text,
      failure_reason text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX card_applications_member ON card_applications (member_id, seq);
    CREATE INDEX card_applications_supplement_due ON card_applications (merchant_id, environment, supplement_expires_at)
      WHERE status = 'need_docs' AND supplement_status = 'pending';

    CREATE TABLE card_supplement_images (
      id text PRIMARY KEY,
      application_id text NOT NULL REFERENCES card_applications (id),
      member_id text NOT NULL REFERENCES members (id),
      kind text NOT NULL CHECK (kind IN ('document', 'selfie')),
      content_type text NOT NULL,
      size_bytes integer NOT NULL,
      key_label text NOT NULL,
      iv bytea NOT NULL,
      ciphertext bytea NOT NULL,
      auth_tag bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE cards (
      seq bigserial PRIMARY KEY,
      id text NOT NULL UNIQUE,
      merchant_id text NOT NULL REFERENCES merchants (id),
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      member_id text NOT NULL REFERENCES members (id),
      application_id text NOT NULL UNIQUE REFERENCES card_applications (id),
      product_seq bigint NOT NULL REFERENCES card_products (seq),
      form_factor text NOT NULL CHECK (form_factor IN ('virtual', 'physical')),
      currency text NOT NULL,
      status text NOT NULL CHECK (status IN ('unactivated', 'active', 'closing', 'closed', 'expired', 'replaced')),
      status_version integer NOT NULL,
      upstream_ref text NOT NULL,
      last4 text NOT NULL CHECK (last4 ~ '^[0-9]{4}$'),
      exp_month integer NOT NULL CHECK (exp_month BETWEEN 1 AND 12),
      exp_year integer NOT NULL,
      billing_address jsonb,
      cvv_blocked boolean NOT NULL DEFAULT false,
      inventory_status text CHECK (inventory_status IN ('in_production', 'shipped', 'binding', 'bound', 'voided')),
      activation_failures integer NOT NULL DEFAULT 0,
      locked_until timestamptz,
      limit_single numeric(78,0) NOT NULL DEFAULT 0,
      limit_daily numeric(78,0) NOT NULL DEFAULT 0,
      limit_monthly numeric(78,0) NOT NULL DEFAULT 0,
      activated_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX cards_member ON cards (member_id, seq);
    CREATE INDEX cards_locked ON cards (merchant_id, environment, locked_until) WHERE locked_until IS NOT NULL;

    INSERT INTO card_products (environment, form_factor, currency, bin, scheme, card_types, source_assets,
      opening_fee, topup_min, topup_max_single,
                               max_single, max_daily, max_monthly, billing_address_updatable, card_lists_supported)
    SELECT e.environment, p.form_factor, 'USD', p.bin, 'visa', '["debit"]'::jsonb, '["USDT","USDC"]'::jsonb, p.fee,
      1000, 1000000,
           1000000, 2000000, 10000000, true, true
    FROM (VALUES ('sandbox', 1), ('production', 2)) AS e (environment, o)
    CROSS JOIN (VALUES ('virtual', '48953710', 500, 1), ('physical', '48953720', 1500, 2))
      AS p (form_factor, bin, fee, o)
    ORDER BY e.o, p.o;
  `,
  );
}
