/**
 * A payee request as sent, read: the four corridor segments and the entity type (canonical names
 * or their aliases), and the nickname. Pure: the corridor itself is found by service.ts.
 */
import { ApiError, invalidFields, type FieldProblem } from '../../../platform/errors.js';
import { nicknameLengthMax, truncate } from '../corridors/contracts.js';
import { paymentMethods } from '../corridors/queries.js';
import type { EntityType } from '../corridors/tables.js';

export interface PayeeInput {
  country_code?: unknown;
  country?: unknown;
  currency?: unknown;
  payment_method?: unknown;
  method?: unknown;
  clearing_system?: unknown;
  clearing?: unknown;
  entity_type?: unknown;
  entity?: unknown;
  nickname?: unknown;
  fields?: unknown;
}

/** The canonical name wins over its alias when both are sent. */
const pick = (canonical: unknown, alias: unknown): unknown =>
  canonical !== undefined && canonical !== null ? canonical : alias;
const textOf = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? v : v === undefined || v === null || v === '' ? undefined : String(v);

export interface Segments {
  country: string;
  currency: string;
  paymentMethod: string;
  clearingSystem: string;
  entityType: EntityType;
}

/**
 * The four segments and the entity type, aliases resolved. Any of the four missing: the
 * corridor is incomplete (`corridor_not_supported`); malformed values are `invalid_fields`.
 */
export function segmentsOf(input: PayeeInput): Segments {
  const raw = {
    country_code: pick(input.country_code, input.country),
    currency: input.currency,
    payment_method: pick(input.payment_method, input.method),
    clearing_system: pick(input.clearing_system, input.clearing),
  };
  if (Object.values(raw).some((v) => textOf(v) === undefined)) {
    throw new ApiError(
      'corridor_not_supported',
      'The four corridor segments (country_code, currency, payment_method, clearing_system) are needed.',
    );
  }
  const problems: FieldProblem[] = [];
  const str = (key: string, v: unknown) => {
    if (typeof v !== 'string') problems.push({ key, reason: 'pattern' });
    return typeof v === 'string' ? v : '';
  };
  const country = str('country_code', raw.country_code);
  const currency = str('currency', raw.currency);
  const paymentMethod = str('payment_method', raw.payment_method);
  const clearingSystem = str('clearing_system', raw.clearing_system);
  if (typeof raw.country_code === 'string' && !/^[A-Z]{2}$/.test(country))
    problems.push({ key: 'country_code', reason: 'pattern' });
  if (typeof raw.currency === 'string' && !/^[A-Z]{3}$/.test(currency))
    problems.push({ key: 'currency', reason: 'pattern' });
  if (typeof raw.payment_method === 'string' && !(paymentMethods as readonly string[]).includes(paymentMethod))
    problems.push({ key: 'payment_method', reason: 'not_in_enum' });
  if (typeof raw.clearing_system === 'string' && Array.from(clearingSystem).length > 32)
    problems.push({ key: 'clearing_system', reason: 'too_long' });
  const entity = pick(input.entity_type, input.entity);
  if (textOf(entity) === undefined) problems.push({ key: 'entity_type', reason: 'required' });
  else if (entity !== 'INDIVIDUAL' && entity !== 'COMPANY')
    problems.push({ key: 'entity_type', reason: 'not_in_enum' });
  if (problems.length > 0) throw invalidFields(problems);
  return { country, currency, paymentMethod, clearingSystem, entityType: entity as EntityType };
}

/** Nickname: truncated at 64 characters; an empty one is none. */
export function nicknameOf(v: unknown): string | null | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') return null;
  const t = truncate(v.trim(), nicknameLengthMax);
  return t === '' ? null : t;
}
