import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * Hosted screens and KYC (extensions 9, 10; src/modules/hosted-screens, src/modules/kyc):
 * - `hosted_screen_settings`: per merchant and environment, the origins allowed to frame the screens;
 * - `kyc_requirements`: the minimum KYC level per business, changed by the operator;
 * - `kyc_images`: document and selfie images, AES-256-GCM encrypted (never stored in clear);
 * - `kyc_profiles`: one real-name profile per member, from its first submission on;
 * - `upstream_sim_orders` also keeps the KYC simulator's checks (upstream `kyc`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    CREATE TABLE hosted_screen_settings (
      merchant_id text NOT NULL REFERENCES merchants (id),
      environment text NOT NULL,
      frame_ancestors text NOT NULL DEFAULT '[]',
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (merchant_id, environment)
    );

    CREATE TABLE kyc_requirements (
      environment text NOT NULL,
      business text NOT NULL,
      min_kyc_level integer NOT NULL CHECK (min_kyc_level BETWEEN 0 AND 2),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (environment, business)
    );
    INSERT INTO kyc_requirements (environment, business, min_kyc_level) VALUES
      ('sandbox', 'card_issuing', 1), ('sandbox', 'remittance', 1), ('sandbox', 'exchange', 1),
      ('sandbox', 'high_value_transfer', 2),
      ('production', 'card_issuing', 1), ('production', 'remittance', 1), ('production', 'exchange', 1),
      ('production', 'high_value_transfer', 2);

    CREATE TABLE kyc_images (
      id text PRIMARY KEY,
      merchant_id text NOT NULL REFERENCES merchants (id),
      environment text NOT NULL,
      member_id text NOT NULL REFERENCES members (id),
      kind text NOT NULL,
      content_type text NOT NULL,
      size_bytes integer NOT NULL,
      key_label text NOT NULL,
      iv bytea NOT NULL,
      ciphertext bytea NOT NULL,
      auth_tag bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX kyc_images_member ON kyc_images (member_id);

    CREATE TABLE kyc_profiles (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      merchant_id text NOT NULL REFERENCES merchants (id),
      environment text NOT NULL,
      member_id text NOT NULL UNIQUE REFERENCES members (id),
      status text NOT NULL,
      status_version integer NOT NULL DEFAULT 1,
      submissions integer NOT NULL DEFAULT 1,
      first_name text NOT NULL,
      last_name text NOT NULL,
      birth_date text NOT NULL,
      nationality text NOT NULL,
      document_type text NOT NULL,
      document_number text NOT NULL,
      address_line1 text NOT NULL,
      address_line2 text NOT NULL DEFAULT '',
      city text NOT NULL,
      postal_code text NOT NULL,
      address_country text NOT NULL,
      document_image_id text NOT NULL REFERENCES kyc_images (id),
      selfie_image_id text NOT NULL REFERENCES kyc_images (id),
      granted_level integer NOT NULL DEFAULT 0,
      rejection_reason text,
      review_source text,
      provider_ref text,
      submitted_at timestamptz NOT NULL,
      reviewed_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX kyc_profiles_queue ON kyc_profiles (environment, status, seq);

    ALTER TABLE upstream_sim_orders DROP CONSTRAINT upstream_sim_orders_upstream_check;
    ALTER TABLE upstream_sim_orders ADD CONSTRAINT upstream_sim_orders_upstream_check
      CHECK (upstream IN ('remittance', 'card', 'qrpay', 'chain', 'kyc'));
  `,
  );
}
