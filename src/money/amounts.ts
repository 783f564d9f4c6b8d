/**
 * Money is a bigint count of minor units: the asset's smallest unit, 10^-scale of one unit
 * (USDT scale 6: "1.5" is 1_500_000n). Decimal strings come in and go out; a JavaScript `number`
 * never holds an amount.
 */

/** Largest scale an asset may have (ETH uses 18). */
export const scaleMax = 18;

/**
 * The amount grammar, the one rule for every amount the API reads:
 *
 *   amount   = integer [ "." fraction ]
 *   integer  = "0" / ( "1"-"9" *19DIGIT )      ; 1 to 20 digits, no leading zero
 *   fraction = 1*18DIGIT                       ; at most 18 places (the largest scale)
 *
 * No sign, exponent, spaces, thousands separators, "5." or ".5"; at most 39 characters. Places
 * beyond the asset's scale are accepted only when they are all zeros ("1.500" at scale 2), never
 * rounded (the reference's rule for exchange amounts, applied everywhere).
 *
 * Why 20 integer digits: 10^20 units is beyond any real amount of any asset (the largest token
 * supplies are near 10^15), and 20 digits plus 18 places is 38 digits of minor units: the ledger's
 * numeric(78,0) columns keep 40 digits of headroom, so no sum of accepted amounts can overflow.
 */
export const amountIntegerDigitsMax = 20;
export const amountFractionDigitsMax = scaleMax;
export const amountLengthMax = amountIntegerDigitsMax + 1 + amountFractionDigitsMax;

/** Largest whole-unit amount accepted (20 nines). */
export const amountWholeMax = 10n ** BigInt(amountIntegerDigitsMax) - 1n;

/** Largest amount accepted at `scale`, in minor units. */
export function amountMinorMaxAt(scale: number): bigint {
  assertScale(scale);
  return 10n ** BigInt(amountIntegerDigitsMax + scale) - 1n;
}

/** No accepted amount exceeds this many minor units, at any scale (10^38 - 1). */
export const amountMinorMax = amountMinorMaxAt(scaleMax);

const decimalShape = /^([0-9]+)(?:\.([0-9]+))?$/;

function assertScale(scale: number): void {
  if (!Number.isInteger(scale) || scale < 0 || scale > scaleMax) {
    throw new Error(`money: scale must be an integer from 0 to ${scaleMax}, got ${String(scale)}`);
  }
}

/** Why a text is not an amount. */
export type AmountProblem =
  'not_a_string' | 'too_long' | 'malformed' | 'leading_zero' | 'too_large' | 'too_many_places';

export type AmountReading = { ok: true; minor: bigint } | { ok: false; problem: AmountProblem };

/**
 * Reads a decimal string by the amount grammar into minor units at `scale` (pure; no error
 * thrown for bad input). Zero is accepted; callers decide whether it is allowed.
 */
export function readAmount(value: unknown, scale: number): AmountReading {
  assertScale(scale);
  if (typeof value !== 'string') return { ok: false, problem: 'not_a_string' };
  if (value.length > amountLengthMax) return { ok: false, problem: 'too_long' };
  const m = decimalShape.exec(value);
  if (!m) return { ok: false, problem: 'malformed' };
  const whole = m[1]!;
  const fraction = m[2] ?? '';
  if (whole.length > 1 && whole.startsWith('0')) return { ok: false, problem: 'leading_zero' };
  if (whole.length > amountIntegerDigitsMax) return { ok: false, problem: 'too_large' };
  if (fraction.length > amountFractionDigitsMax) return { ok: false, problem: 'too_many_places' };
  if (fraction.length > scale && !/^0*$/.test(fraction.slice(scale))) return { ok: false, problem: 'too_many_places' };
  return { ok: true, minor: BigInt(whole + fraction.slice(0, scale).padEnd(scale, '0')) };
}

/** The message for a refused amount, naming the field. */
export function amountProblemMessage(problem: AmountProblem, field: string, scale: number): string {
  switch (problem) {
    case 'not_a_string':
      return `${field} must be a decimal string.`;
    case 'too_long':
      return `${field} is longer than ${amountLengthMax} characters.`;
    case 'malformed':
      return `${field} must be digits with an optional fractional part, like "12.50" (no sign, exponent or spaces).`;
    case 'leading_zero':
      return `${field} must not start with a zero unless it is below 1, like "0.5".`;
    case 'too_large':
      return `${field} has more than ${amountIntegerDigitsMax} integer digits.`;
    case 'too_many_places':
      return (
        `${field} has more than ${scale} decimal places that are not zeros (at most ${amountFractionDigitsMax} ` +
        `places in all).`
      );
  }
}

/**
 * A text that is not an amount by the grammar, naming the field: the ledger's error (the API
 * edge answers it with 400 `invalid_request` and this message).
 */
export class AmountError extends Error {
  override readonly name = 'AmountError';
  constructor(
    readonly reason: AmountProblem,
    readonly field: string,
    scale: number,
  ) {
    super(amountProblemMessage(reason, field, scale));
  }
}

/** `readAmount` for request fields: throws `AmountError` naming `field` for a value outside the grammar. */
export function parseAmount(value: string, scale: number, field = 'amount'): bigint {
  const reading = readAmount(value, scale);
  if (!reading.ok) throw new AmountError(reading.problem, field, scale);
  return reading.minor;
}

/** Prints minor units with exactly `scale` places ("1.500000"); scale 0 prints no point. */
export function formatAmount(minor: bigint, scale: number): string {
  assertScale(scale);
  if (typeof minor !== 'bigint') throw new Error('money: formatAmount needs a bigint');
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(scale + 1, '0');
  const sign = negative ? '-' : '';
  if (scale === 0) return sign + digits;
  return `${sign}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/** A stored amount (minor units as the database answers them, `minorFromDb`) printed with `scale` places. */
export function formatStored(value: string | bigint | number, scale: number): string {
  return formatAmount(minorFromDb(value), scale);
}

/** A numeric value read from the database (numeric columns arrive as strings, int8 as bigint). */
export function minorFromDb(value: string | bigint | number | null | undefined): bigint {
  if (value === null || value === undefined) return 0n;
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`money: unsafe number from the database: ${value}`);
    return BigInt(value);
  }
  if (!/^-?\d+$/.test(value)) throw new Error(`money: not an integer of minor units: ${value}`);
  return BigInt(value);
}
