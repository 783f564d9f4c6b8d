/**
 * The operator's side of the corridor catalogue: the paged list, and creating and changing a
 * corridor (settings checked, amounts at the payout currency's scale). Reads: queries.ts.
 */
import type { Transaction } from 'kysely';
import type { Database, Environment } from '../../../db/schema.js';
import { ApiError, invalidFields, type FieldProblem } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { type PageParams } from '../../../platform/routes/pagination.js';
import { keysetPage, viewPage } from '../../../db/keyset-page.js';
import { parseAmount } from '../../../money/index.js';
import { getAsset } from '../../assets/index.js';
import { contractProblems, type FieldSpec } from './contracts.js';
import {
  allCorridorsQuery,
  corridorById,
  corridorOf,
  insertCorridor,
  updateCorridorRow,
  type Corridor,
  type Db,
} from './queries.js';
import type { EntityType, PaymentMethod } from './tables.js';
import { operatorCorridorView } from './views.js';

async function payoutScale(db: Db, currency: string): Promise<number> {
  return (await getAsset(db, currency))?.scale ?? 2;
}

export async function viewCorridor(db: Db, c: Corridor) {
  return operatorCorridorView(c, await payoutScale(db, c.currency));
}

export async function listCorridorsPage(db: Db, query: PageParams & { environment?: Environment; country?: string }) {
  return viewPage(await keysetPage(allCorridorsQuery(db, query), query), (row) => viewCorridor(db, corridorOf(row)));
}

/** What the operator may set on a corridor; amounts are decimal strings at the payout currency's scale. */
export interface CorridorSettings {
  enabled?: boolean;
  contracts?: Partial<Record<EntityType, FieldSpec[]>>;
  restricted_jurisdictions?: string[];
  confirmable_routing_types?: string[];
  min_kyc_level?: number;
  fee_bps?: number;
  fee_fixed?: string;
  fx_spread_bps?: number;
  payout_min?: string;
  member_single_max?: string | null;
  member_daily_max?: string | null;
  merchant_single_max?: string | null;
  merchant_daily_max?: string | null;
}

export interface NewCorridor extends CorridorSettings {
  environment: Environment;
  country: string;
  currency: string;
  payment_method: PaymentMethod;
  clearing_system: string;
  contracts: Partial<Record<EntityType, FieldSpec[]>>;
}

const limitKeys = ['member_single_max', 'member_daily_max', 'merchant_single_max', 'merchant_daily_max'] as const;

/** The columns of the settings given, amounts in minor units; problems as invalid_fields. */
function settingsColumns(s: CorridorSettings, scale: number): Record<string, unknown> {
  const problems: FieldProblem[] = [];
  for (const [entity, contract] of Object.entries(s.contracts ?? {})) {
    for (const p of contractProblems(contract ?? []))
      problems.push({ key: `contracts.${entity}.${p.key}`, reason: p.reason });
  }
  const amount = (key: string, v: string, positive: boolean): string | undefined => {
    try {
      const minor = parseAmount(v, scale, key);
      if (positive && minor <= 0n) problems.push({ key, reason: 'pattern' });
      return minor.toString();
    } catch {
      problems.push({ key, reason: 'pattern' });
      return undefined;
    }
  };
  const cols: Record<string, unknown> = {};
  if (s.enabled !== undefined) cols.enabled = s.enabled;
  if (s.contracts !== undefined) cols.contracts = JSON.stringify(s.contracts);
  if (s.restricted_jurisdictions !== undefined)
    cols.restricted_jurisdictions = JSON.stringify([...new Set(s.restricted_jurisdictions)]);
  if (s.confirmable_routing_types !== undefined)
    cols.confirmable_routing_types = JSON.stringify([...new Set(s.confirmable_routing_types)]);
  if (s.min_kyc_level !== undefined) cols.min_kyc_level = s.min_kyc_level;
  if (s.fee_bps !== undefined) cols.fee_bps = s.fee_bps;
  if (s.fx_spread_bps !== undefined) cols.fx_spread_bps = s.fx_spread_bps;
  if (s.fee_fixed !== undefined) cols.fee_fixed = amount('fee_fixed', s.fee_fixed, false);
  if (s.payout_min !== undefined) cols.payout_min = amount('payout_min', s.payout_min, true);
  for (const k of limitKeys) {
    const v = s[k];
    if (v !== undefined) cols[k] = v === null ? null : amount(k, v, true);
  }
  if (problems.length > 0) throw invalidFields(problems);
  return cols;
}

export async function createCorridor(trx: Transaction<Database>, input: NewCorridor, now: Date) {
  const scale = await payoutScale(trx, input.currency);
  const cols = settingsColumns(input, scale);
  const row = await insertCorridor(trx, {
    id: newId('rco'),
    environment: input.environment,
    country: input.country,
    currency: input.currency,
    payment_method: input.payment_method,
    clearing_system: input.clearing_system,
    contracts: JSON.stringify(input.contracts),
    restricted_jurisdictions: '[]',
    confirmable_routing_types: '[]',
    min_kyc_level: 1,
    fee_bps: 0,
    fee_fixed: '0',
    fx_spread_bps: 0,
    payout_min: '1',
    updated_at: now,
    ...cols,
  });
  if (!row)
    throw new ApiError('duplicate_resource', 'A corridor with these four segments already exists in this environment.');
  return operatorCorridorView(corridorOf(row), scale);
}

export async function updateCorridor(trx: Transaction<Database>, id: string, settings: CorridorSettings) {
  const current = await corridorById(trx, id);
  if (!current) throw new ApiError('not_found', 'No such corridor.');
  const scale = await payoutScale(trx, current.currency);
  const cols = settingsColumns(settings, scale);
  const row = await updateCorridorRow(trx, id, cols);
  return operatorCorridorView(corridorOf(row), scale);
}
