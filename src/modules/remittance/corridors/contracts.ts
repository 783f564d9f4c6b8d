// Over 300 lines: one field contract: its types, the reading of a payee's fields against it and the checks of a
// contract itself share every type and constant; split, each half would import all of the other.
/**
 * Field contracts (pure): what a corridor asks of a payee, per entity type, and the one function
 * that reads a payee's `fields` against it (docs/remittance.md, "Field contracts"). The same
 * contract drives `GET /v1/remit/payee-form-schema`, so a client renders exactly what is checked.
 */
import type { FieldProblem } from '../../../platform/errors.js';
import {
  bicCountry,
  checkAbaRouting,
  checkBic,
  checkCountry,
  checkIban,
  checkSortCode,
  normaliseAlnumUpper,
  normaliseDigits,
  normaliseIban,
  normaliseText,
} from './validators.js';

/** How a value is normalised and checked. */
export const fieldTypes = ['text', 'alnum_upper', 'digits', 'enum', 'iban', 'bic', 'country', 'routing_code'] as const;
export type FieldType = (typeof fieldTypes)[number];

/** Which part of the account identifier a field is (the fingerprint is built from these). */
export const identifierParts = ['account_number', 'iban', 'proxy', 'routing_code', 'bic'] as const;
export type IdentifierPart = (typeof identifierParts)[number];
/** At least one of these must be non-empty (the reference's precondition). */
export const primaryIdentifierParts: readonly IdentifierPart[] = ['account_number', 'iban', 'proxy'];

/** Routing-code types the service can check (`routing_code` fields are checked by their type). */
export const routingCodeTypes = ['sort_code', 'aba', 'bic'] as const;
export type RoutingCodeType = (typeof routingCodeTypes)[number];

export interface FieldSpec {
  /** Flat key with dots (`bank_details.iban`); never nested. */
  key: string;
  label: string;
  type: FieldType;
  required: boolean;
  /** Longest normalised value, in characters (at most `fieldValueLengthMax`). */
  max_length: number;
  /** Anchored regular expression the normalised value must match (beyond its type's own check). */
  pattern?: string;
  /** Allowed values of an `enum` field. */
  enum?: string[];
  /** Set when the field is part of the account identifier (and of the payee's fingerprint). */
  account_identifier?: IdentifierPart;
  /** A `routing_code` field: the key of the field that names its type (`sort_code`, `aba`, ...). */
  type_field?: string;
  /** The field's value changes what else is asked or how it is checked: re-read the form schema. */
  refresh_on_change?: boolean;
  example?: string;
  description?: string;
}

/** The reference's constants. */
export const fieldValueLengthMax = 256;
export const nicknameLengthMax = 64;
/** Bound on a contract (operator input). */
export const contractFieldsMax = 40;

export const fieldReasons = [
  'required',
  'too_long',
  'pattern',
  'not_in_enum',
  'iban_length',
  'iban_checksum',
  'account_identifier_required',
  'unknown_clearing_system',
] as const;
export type FieldReason = (typeof fieldReasons)[number];

/** Truncates at `max` characters (code points, so a surrogate pair is never split). */
export function truncate(value: string, max: number): string {
  const chars = Array.from(value);
  return chars.length <= max ? value : chars.slice(0, max).join('');
}

export function normaliseValue(type: FieldType, value: string): string {
  switch (type) {
    case 'alnum_upper':
    case 'bic':
    case 'country':
      return normaliseAlnumUpper(value);
    case 'iban':
      return normaliseIban(value);
    case 'digits':
    case 'routing_code':
      return normaliseAlnumUpper(normaliseDigits(value));
    case 'enum':
      return value.trim();
    case 'text':
      return normaliseText(value);
  }
}

export interface CorridorContext {
  /** The corridor's country: an IBAN or BIC must be of it. */
  country: string;
}

export interface ReadFields {
  /** Normalised values of the contract's fields that were sent non-empty. */
  values: Record<string, string>;
  /** The text as sent (after truncation at 256), for the same keys. */
  original: Record<string, string>;
  problems: FieldProblem[];
}

function checkRouting(type: string | undefined, value: string, corridor: CorridorContext): FieldReason | undefined {
  switch (type) {
    case 'sort_code':
      return checkSortCode(value);
    case 'aba':
      return checkAbaRouting(value);
    case 'bic':
      return checkBic(value, corridor.country);
    default:
      return undefined; // the type field reports its own problem
  }
}

function checkValue(
  spec: FieldSpec,
  value: string,
  values: Record<string, string>,
  corridor: CorridorContext,
): FieldReason | undefined {
  if (Array.from(value).length > spec.max_length) return 'too_long';
  switch (spec.type) {
    case 'enum':
      if (!(spec.enum ?? []).includes(value)) return 'not_in_enum';
      break;
    case 'iban': {
      const problem = checkIban(value, corridor.country);
      if (problem) return problem;
      break;
    }
    case 'bic':
      if (checkBic(value, corridor.country)) return 'pattern';
      break;
    case 'country':
      if (checkCountry(value)) return 'pattern';
      break;
    case 'digits':
      if (!/^[0-9]+$/.test(value)) return 'pattern';
      break;
    case 'routing_code': {
      const problem = checkRouting(spec.type_field ? values[spec.type_field] : undefined, value, corridor);
      if (problem) return problem;
      break;
    }
    default:
      break;
  }
  if (spec.pattern && !new RegExp(spec.pattern, 'u').test(value)) return 'pattern';
  return undefined;
}

/**
 * Reads a payee's `fields` against a contract: keys outside it are dropped, each value is
 * truncated at 256 characters, normalised by its type (the original text is kept), then checked.
 * A value that is not a string is a `pattern` problem; null or absent is not sent. When no
 * account number, IBAN or proxy identifier is non-empty, those fields answer
 * `account_identifier_required` (instead of `required`).
 */
export function readFields(
  contract: readonly FieldSpec[],
  raw: Record<string, unknown> | undefined,
  corridor: CorridorContext,
): ReadFields {
  const values: Record<string, string> = {};
  const original: Record<string, string> = {};
  const problems = new Map<string, FieldReason>();
  const input = raw ?? {};
  for (const spec of contract) {
    const sent = Object.hasOwn(input, spec.key) ? input[spec.key] : undefined;
    if (sent === undefined || sent === null) continue;
    if (typeof sent !== 'string') {
      problems.set(spec.key, 'pattern');
      continue;
    }
    const text = truncate(sent, fieldValueLengthMax);
    const value = normaliseValue(spec.type, text);
    if (value === '') continue;
    values[spec.key] = value;
    original[spec.key] = text;
  }
  // Checked in a second pass: a routing code is read by its type field's normalised value.
  for (const spec of contract) {
    if (problems.has(spec.key)) continue;
    const value = values[spec.key];
    if (value === undefined) {
      if (spec.required) problems.set(spec.key, 'required');
      continue;
    }
    // A routing code whose type field is itself wrong cannot be read: the type field's problem stands alone.
    if (spec.type === 'routing_code' && spec.type_field && problems.has(spec.type_field)) continue;
    const problem = checkValue(spec, value, values, corridor);
    if (problem) problems.set(spec.key, problem);
  }
  const primary = contract.filter((s) => s.account_identifier && primaryIdentifierParts.includes(s.account_identifier));
  if (primary.length > 0 && !primary.some((s) => values[s.key] !== undefined)) {
    for (const s of primary)
      if (!problems.has(s.key) || problems.get(s.key) === 'required')
        problems.set(s.key, 'account_identifier_required');
  }
  const ordered = contract
    .filter((s) => problems.has(s.key))
    .map((s) => ({ key: s.key, reason: problems.get(s.key)! }));
  return { values, original, problems: ordered };
}

/** The identifier parts of a payee's normalised values, sorted by key (the fingerprint's input). */
export function accountIdentifierOf(
  contract: readonly FieldSpec[],
  values: Record<string, string>,
): Array<[string, string]> {
  return contract
    .filter((s) => s.account_identifier && values[s.key] !== undefined)
    .map((s) => [s.key, values[s.key]!] as [string, string])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The routing-code type a payee names (its `type_field`'s value), if its contract has one. */
export function routingTypeOf(contract: readonly FieldSpec[], values: Record<string, string>): string | undefined {
  const field = contract.find((s) => s.type === 'routing_code' && s.type_field && values[s.key] !== undefined);
  if (field) return values[field.type_field!];
  return contract.some((s) => s.type === 'bic' && values[s.key] !== undefined) ? 'bic' : undefined;
}

/** Countries a payee's details point at: its address country and its bank's (BIC) country. */
export function jurisdictionsOf(contract: readonly FieldSpec[], values: Record<string, string>): string[] {
  const out = new Set<string>();
  for (const spec of contract) {
    const value = values[spec.key];
    if (value === undefined) continue;
    if (spec.type === 'country') out.add(value);
    if (spec.type === 'bic') {
      const c = bicCountry(value);
      if (c) out.add(c);
    }
  }
  return [...out];
}

/** The holder name of a payee: `bank_details.account_holder`, else first and last name. */
export function holderNameOf(values: Record<string, string>): string {
  const holder = values['bank_details.account_holder'];
  if (holder) return holder;
  return normaliseText([values.first_name ?? '', values.last_name ?? ''].join(' '));
}

/**
 * Checks a contract an operator sends (programmer-proof: the payee path trusts it). Answers the
 * problems as `{key, reason}` with the field's index in the key.
 */
export function contractProblems(contract: readonly FieldSpec[]): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const keys = new Set<string>();
  if (contract.length > contractFieldsMax) problems.push({ key: 'fields', reason: 'too_long' });
  contract.forEach((spec, i) => {
    const at = (what: string) => `fields[${i}].${what}`;
    if (!/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/.test(spec.key) || spec.key.length > 64)
      problems.push({ key: at('key'), reason: 'pattern' });
    if (keys.has(spec.key)) problems.push({ key: at('key'), reason: 'duplicate' });
    keys.add(spec.key);
    if (!(fieldTypes as readonly string[]).includes(spec.type))
      problems.push({ key: at('type'), reason: 'not_in_enum' });
    if (!Number.isInteger(spec.max_length) || spec.max_length < 1 || spec.max_length > fieldValueLengthMax)
      problems.push({ key: at('max_length'), reason: 'pattern' });
    if (spec.type === 'enum' && (!spec.enum || spec.enum.length === 0))
      problems.push({ key: at('enum'), reason: 'required' });
    if (spec.pattern !== undefined) {
      try {
        new RegExp(spec.pattern, 'u');
        if (!spec.pattern.startsWith('^') || !spec.pattern.endsWith('$'))
          problems.push({ key: at('pattern'), reason: 'pattern' });
      } catch {
        problems.push({ key: at('pattern'), reason: 'pattern' });
      }
    }
    if (spec.account_identifier && !(identifierParts as readonly string[]).includes(spec.account_identifier)) {
      problems.push({ key: at('account_identifier'), reason: 'not_in_enum' });
    }
    if (
      spec.type === 'routing_code' &&
      (!spec.type_field || !contract.some((s) => s.key === spec.type_field && s.type === 'enum'))
    ) {
      problems.push({ key: at('type_field'), reason: 'required' });
    }
  });
  if (
    contract.length > 0 &&
    !contract.some((s) => s.account_identifier && primaryIdentifierParts.includes(s.account_identifier))
  ) {
    problems.push({ key: 'fields', reason: 'account_identifier_required' });
  }
  return problems;
}

/** The keys whose change must refresh a form: a routing code's type field, and fields marked so. */
export function refreshKeys(contract: readonly FieldSpec[]): Set<string> {
  const keys = new Set(contract.filter((s) => s.refresh_on_change).map((s) => s.key));
  for (const s of contract) if (s.type_field) keys.add(s.type_field);
  return keys;
}
