// Over 300 lines: one migration, the remittance tables with their seeded corridor catalogue, as released.
import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * Cross-border remittance (docs/remittance.md; src/modules/remittance): the corridor catalogue
 * with its field contracts, the platform-level shared payee entities, the members' links to them
 * (`pye_<number>`), and remittance orders. The default corridors of extensions 7 are inserted for
 * both environments. A migration is frozen once released: the defaults are written out here, not
 * read from the module (tests check them against the module's rules).
 */

type Spec = Record<string, unknown>;

const text = (key: string, label: string, required: boolean, max = 140, extra: Spec = {}): Spec => ({
  key,
  label,
  type: 'text',
  required,
  max_length: max,
  ...extra,
});

const address = (country: string): Spec[] => [
  {
    key: 'address.country',
    label: 'Country of residence',
    type: 'country',
    required: true,
    max_length: 2,
    example: country,
  },
  country === 'US'
    ? {
        key: 'address.state',
        label: 'State',
        type: 'alnum_upper',
        required: true,
        max_length: 2,
        pattern: '^[A-Z]{2}$',
        example: 'NY',
      }
    : text('address.state', 'State or region', false, 64),
  text('address.city', 'City', true, 64),
  text('address.street_address', 'Street address', true, 140),
  country === 'GB'
    ? {
        key: 'address.postal_code',
        label: 'Postcode',
        type: 'alnum_upper',
        required: true,
        max_length: 7,
        pattern: '^[A-Z]{1,2}[0-9][A-Z0-9]?[0-9][A-Z]{2}$',
        example: 'SW1A1AA',
      }
    : country === 'US'
      ? {
          key: 'address.postal_code',
          label: 'ZIP code',
          type: 'alnum_upper',
          required: true,
          max_length: 9,
          pattern: '^[0-9]{5}([0-9]{4})?$',
          example: '10001',
        }
      : {
          key: 'address.postal_code',
          label: 'Postal code',
          type: 'alnum_upper',
          required: true,
          max_length: 10,
          pattern: '^[A-Z0-9]{3,10}$',
        },
];

const holder = (entity: 'INDIVIDUAL' | 'COMPANY'): Spec[] =>
  entity === 'INDIVIDUAL'
    ? [
        text('first_name', 'First name', true, 50),
        text('last_name', 'Last name', true, 50),
        text('bank_details.account_holder', 'Account holder name (if not first and last name)', false, 140),
      ]
    : [text('bank_details.account_holder', 'Company name as held by the bank', true, 140)];

const bankDetails: Record<string, (country: string) => Spec[]> = {
  SEPA: (country) => [
    {
      key: 'bank_details.iban',
      label: 'IBAN',
      type: 'iban',
      required: true,
      max_length: 34,
      account_identifier: 'iban',
      example: country === 'DE' ? 'DE89370400440532013000' : undefined,
    },
    { key: 'bank_details.swift_code', label: 'BIC', type: 'bic', required: false, max_length: 11 },
    text('bank_details.bank_name', 'Bank name', false, 140),
  ],
  FPS: () => [
    {
      key: 'bank_details.routing_code_type1',
      label: 'Routing code type',
      type: 'enum',
      required: true,
      max_length: 16,
      enum: ['sort_code'],
      refresh_on_change: true,
      example: 'sort_code',
    },
    {
      key: 'bank_details.routing_code_value1',
      label: 'Sort code',
      type: 'routing_code',
      type_field: 'bank_details.routing_code_type1',
      required: true,
      max_length: 6,
      account_identifier: 'routing_code',
      example: '040004',
    },
    {
      key: 'bank_details.account_number',
      label: 'Account number',
      type: 'digits',
      required: true,
      max_length: 8,
      pattern: '^[0-9]{8}$',
      account_identifier: 'account_number',
      example: '12345678',
    },
    text('bank_details.bank_name', 'Bank name', false, 140),
  ],
  ACH: () => [
    {
      key: 'bank_details.routing_code_type1',
      label: 'Routing code type',
      type: 'enum',
      required: true,
      max_length: 16,
      enum: ['aba'],
      refresh_on_change: true,
      example: 'aba',
    },
    {
      key: 'bank_details.routing_code_value1',
      label: 'ABA routing number',
      type: 'routing_code',
      type_field: 'bank_details.routing_code_type1',
      required: true,
      max_length: 9,
      account_identifier: 'routing_code',
      example: '021000021',
    },
    {
      key: 'bank_details.account_number',
      label: 'Account number',
      type: 'digits',
      required: true,
      max_length: 17,
      pattern: '^[0-9]{4,17}$',
      account_identifier: 'account_number',
      example: '000123456789',
    },
    {
      key: 'bank_details.account_type',
      label: 'Account type',
      type: 'enum',
      required: true,
      max_length: 16,
      enum: ['checking', 'savings'],
    },
    text('bank_details.bank_name', 'Bank name', false, 140),
  ],
  SWIFT: () => [
    {
      key: 'bank_details.swift_code',
      label: 'SWIFT / BIC',
      type: 'bic',
      required: true,
      max_length: 11,
      account_identifier: 'bic',
      example: 'CHASUS33',
    },
    {
      key: 'bank_details.account_number',
      label: 'Account number',
      type: 'alnum_upper',
      required: false,
      max_length: 34,
      pattern: '^[A-Z0-9]{1,34}$',
      account_identifier: 'account_number',
    },
    {
      key: 'bank_details.routing_code_type1',
      label: 'Local routing code type (optional)',
      type: 'enum',
      required: false,
      max_length: 16,
      enum: ['aba'],
      refresh_on_change: true,
    },
    {
      key: 'bank_details.routing_code_value1',
      label: 'Local routing code',
      type: 'routing_code',
      type_field: 'bank_details.routing_code_type1',
      required: false,
      max_length: 9,
    },
    text('bank_details.bank_name', 'Bank name', true, 140),
    text('bank_details.bank_address', 'Bank address', true, 140),
  ],
};

const contractFor = (country: string, clearing: string, entity: 'INDIVIDUAL' | 'COMPANY'): Spec[] =>
  [...holder(entity), ...bankDetails[clearing]!(country), ...address(country)].map((s) =>
    Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)),
  );

export interface DefaultCorridor {
  country: string;
  currency: string;
  payment_method: 'LOCAL' | 'SWIFT';
  clearing_system: string;
  confirmable_routing_types: string[];
  fee_bps: number;
  /** Minor units of the payout currency (scale 2 for the defaults). */
  fee_fixed: string;
  payout_min: string;
  member_single_max: string;
  member_daily_max: string;
  merchant_single_max: string;
  merchant_daily_max: string;
  contracts: Record<'INDIVIDUAL' | 'COMPANY', Spec[]>;
}

const corridor = (
  country: string,
  currency: string,
  method: 'LOCAL' | 'SWIFT',
  clearing: string,
  confirmable: string[],
  feeFixed: string,
): DefaultCorridor => ({
  country,
  currency,
  payment_method: method,
  clearing_system: clearing,
  confirmable_routing_types: confirmable,
  fee_bps: method === 'SWIFT' ? 100 : 50,
  fee_fixed: feeFixed,
  payout_min: '100',
  member_single_max: '1000000',
  member_daily_max: '2000000',
  merchant_single_max: '5000000',
  merchant_daily_max: '100000000',
  contracts: {
    INDIVIDUAL: contractFor(country, clearing, 'INDIVIDUAL'),
    COMPANY: contractFor(country, clearing, 'COMPANY'),
  },
});

/** Extensions 7: the corridors present and enabled on a fresh start, in both environments. */
export const defaultCorridors: DefaultCorridor[] = [
  ...['DE', 'FR', 'NL', 'ES', 'IT'].map((c) => corridor(c, 'EUR', 'LOCAL', 'SEPA', ['bic'], '100')),
  corridor('GB', 'GBP', 'LOCAL', 'FPS', ['sort_code'], '100'),
  corridor('US', 'USD', 'LOCAL', 'ACH', ['aba'], '100'),
  corridor('US', 'USD', 'SWIFT', 'SWIFT', ['bic', 'aba'], '1500'),
];

export const defaultRestrictedJurisdictions = ['CU', 'IR', 'KP', 'SY'];
export const defaultMinKycLevel = 1;
export const defaultFxSpreadBps = 30;

export async function up(db: Kysely<any>): Promise<void> {
  await runScript(
    db,
    `
    CREATE TABLE remit_corridors (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      country text NOT NULL CHECK (country ~ '^[A-Z]{2}$'),
      currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
      payment_method text NOT NULL CHECK (payment_method IN ('LOCAL', 'SWIFT')),
      -- Case preserved, compared exactly.
      clearing_system text NOT NULL CHECK (length(clearing_system) BETWEEN 1 AND 32),
      enabled boolean NOT NULL DEFAULT true,
      -- {"INDIVIDUAL": [field spec, ...], "COMPANY": [...]}: the entity types served are its keys.
      contracts jsonb NOT NULL,
      restricted_jurisdictions jsonb NOT NULL DEFAULT '[]',
      confirmable_routing_types jsonb NOT NULL DEFAULT '[]',
      min_kyc_level integer NOT NULL DEFAULT 1 CHECK (min_kyc_level BETWEEN 0 AND 2),
      -- Fees and limits in minor units of the payout currency; a null limit is no limit.
      fee_bps integer NOT NULL DEFAULT 0 CHECK (fee_bps BETWEEN 0 AND 10000),
      fee_fixed numeric(78,0) NOT NULL DEFAULT 0 CHECK (fee_fixed >= 0),
      fx_spread_bps integer NOT NULL DEFAULT 0 CHECK (fx_spread_bps BETWEEN 0 AND 5000),
      payout_min numeric(78,0) NOT NULL DEFAULT 1 CHECK (payout_min > 0),
      member_single_max numeric(78,0) CHECK (member_single_max > 0),
      member_daily_max numeric(78,0) CHECK (member_daily_max > 0),
      merchant_single_max numeric(78,0) CHECK (merchant_single_max > 0),
      merchant_daily_max numeric(78,0) CHECK (merchant_daily_max > 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (environment, country, currency, payment_method, clearing_system)
    );

    -- The platform-level shared payee: one per account fingerprint and environment, whoever links it.
    CREATE TABLE remit_payee_entities (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      fingerprint text NOT NULL,
      country text NOT NULL,
      currency text NOT NULL,
      payment_method text NOT NULL,
      clearing_system text NOT NULL,
      entity_type text NOT NULL CHECK (entity_type IN ('INDIVIDUAL', 'COMPANY')),
      fields jsonb NOT NULL,
      holder_name text NOT NULL,
      holder_fingerprint text NOT NULL,
      account_mask text NOT NULL,
      provider_payee_ref text,
      registered_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (environment, fingerprint)
    );

    -- A member's link to a shared payee: pye_<seq>. Nickname, favourite and the name check are the link's own.
    CREATE TABLE remit_payees (
      seq bigserial PRIMARY KEY,
      merchant_id text NOT NULL REFERENCES merchants(id),
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      member_id text NOT NULL REFERENCES members(id),
      entity_id text NOT NULL REFERENCES remit_payee_entities(id),
      corridor_id text NOT NULL REFERENCES remit_corridors(id),
      entity_type text NOT NULL CHECK (entity_type IN ('INDIVIDUAL', 'COMPANY')),
      status text NOT NULL CHECK (status IN ('active', 'unlinked')),
      outcome text NOT NULL CHECK (outcome IN ('created', 'linked', 'review')),
      name_mismatch boolean NOT NULL DEFAULT false,
      holder_name text NOT NULL,
      fields jsonb NOT NULL,
      original_fields jsonb NOT NULL,
      nickname text,
      favorite boolean NOT NULL DEFAULT false,
      name_check text CHECK (name_check IN ('match', 'close_match', 'no_match', 'unavailable')),
      name_check_suggestion text,
      name_checked_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      unlinked_at timestamptz
    );
    CREATE UNIQUE INDEX remit_payees_one_active_link ON remit_payees (member_id, entity_id) WHERE status = 'active';
    CREATE INDEX remit_payees_member ON remit_payees (member_id, favorite, seq) WHERE status = 'active';

    CREATE TABLE remit_orders (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      merchant_id text NOT NULL REFERENCES merchants(id),
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      member_id text NOT NULL REFERENCES members(id),
      payee_seq bigint NOT NULL REFERENCES remit_payees(seq),
      entity_id text NOT NULL REFERENCES remit_payee_entities(id),
      corridor_id text NOT NULL REFERENCES remit_corridors(id),
      source_asset text NOT NULL REFERENCES assets(code),
      source_amount numeric(78,0) NOT NULL CHECK (source_amount > 0),
      fee numeric(78,0) NOT NULL CHECK (fee >= 0),
      payout_currency text NOT NULL,
      payout_amount numeric(78,0) NOT NULL CHECK (payout_amount > 0),
      rate text NOT NULL,
      -- The day on the merchant's clock the order counts against (daily limits).
      value_day date NOT NULL,
      payout_date text,
      -- suspended is ours (a status outside the provider's enumeration); callers see processing.
      status text NOT NULL CHECK (status IN ('pending', 'processing', 'suspended', 'completed', 'failed', 'returned')),
      status_version integer NOT NULL CHECK (status_version > 0),
      upstream_outcome text NOT NULL CHECK (upstream_outcome IN ('none', 'pending', 'accepted', 'timeout', 'unknown')),
      provider_order_id text,
      provider_status text,
      failure_reason text,
      dispatch_started_at timestamptz,
      check_count integer NOT NULL DEFAULT 0,
      next_check_at timestamptz,
      last_checked_at timestamptz,
      completed_at timestamptz,
      failed_at timestamptz,
      returned_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX remit_orders_merchant ON remit_orders (merchant_id, environment, seq);
    CREATE INDEX remit_orders_member ON remit_orders (member_id, seq);
    CREATE INDEX remit_orders_daily ON remit_orders (corridor_id, value_day);
    CREATE INDEX remit_orders_due ON remit_orders (next_check_at) WHERE status IN ('processing', 'suspended');
  `,
  );

  const rows = ['sandbox', 'production'].flatMap((environment) =>
    defaultCorridors.map((c) => ({
      id: ['rco', c.country, c.currency, c.payment_method, c.clearing_system]
        .map((part) => part.toLowerCase())
        .concat(environment === 'sandbox' ? 'sbx' : 'prd')
        .join('_'),
      environment,
      country: c.country,
      currency: c.currency,
      payment_method: c.payment_method,
      clearing_system: c.clearing_system,
      enabled: true,
      contracts: JSON.stringify(c.contracts),
      restricted_jurisdictions: JSON.stringify(defaultRestrictedJurisdictions),
      confirmable_routing_types: JSON.stringify(c.confirmable_routing_types),
      min_kyc_level: defaultMinKycLevel,
      fee_bps: c.fee_bps,
      fee_fixed: c.fee_fixed,
      fx_spread_bps: defaultFxSpreadBps,
      payout_min: c.payout_min,
      member_single_max: c.member_single_max,
      member_daily_max: c.member_daily_max,
      merchant_single_max: c.merchant_single_max,
      merchant_daily_max: c.merchant_daily_max,
    })),
  );
  await db.insertInto('remit_corridors').values(rows).execute();
}
