import { ApiError } from '../platform/errors.js';

/**
 * Money is a bigint count of minor units: the asset's smallest unit, 10^-scale of one unit
 * (USDT scale 6: "1.5" is 1_500_000n). Decimal strings come in and go out; a JavaScript `number`
 * never holds an amount.
 */

/** Largest scale an asset may have (ETH uses 18). */
export const scaleMax = 18;

/**
 * Largest amount accepted from outside, in minor units (60 digits). Sums of many such amounts
 * still fit the ledger's numeric(78,0) columns.
 */
export const amountMinorMax = 10n ** 60n - 1n;

/** Longest decimal string looked at: 60 digits, a point, 18 places. */
const amountLengthMax = 80;

const decimalShape = /^(\d+)(?:\.(\d+))?$/;

function assertScale(scale: number): void {
  if (!Number.isInteger(scale) || scale < 0 || scale > scaleMax) {
    throw new Error(`money: scale must be an integer from 0 to ${scaleMax}, got ${String(scale)}`);
  }
}

/**
 * Parses a decimal string into minor units. Accepts only `digits` or `digits.digits`: no sign,
 * exponent, spaces, '+', '.5' or '5.'. More places than `scale` are accepted only when the extra
 * places are zeros ("1.500" at scale 2). Zero is accepted; callers decide whether it is allowed.
 * Throws `ApiError('invalid_request')` naming `field` for a malformed value.
 */
export function parseAmount(value: string, scale: number, field = 'amount'): bigint {
  assertScale(scale);
  if (typeof value !== 'string') throw new ApiError('invalid_request', `${field} must be a decimal string.`);
  if (value.length > amountLengthMax) throw new ApiError('invalid_request', `${field} is too long.`);
  const m = decimalShape.exec(value);
  if (!m) {
    throw new ApiError('invalid_request', `${field} must be a decimal string of digits with an optional fractional part, like "12.50".`);
  }
  const whole = m[1]!;
  const fraction = m[2] ?? '';
  if (fraction.length > scale && !/^0*$/.test(fraction.slice(scale))) {
    throw new ApiError('invalid_request', `${field} has more than ${scale} decimal places.`);
  }
  const minor = BigInt(whole + fraction.slice(0, scale).padEnd(scale, '0'));
  if (minor > amountMinorMax) throw new ApiError('invalid_request', `${field} is too large.`);
  return minor;
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
