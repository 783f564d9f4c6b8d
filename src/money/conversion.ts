/**
 * Pure rate maths: a rate after spread and amounts converted at a rate, always rounding in the
 * service's favour: a rate after spread and an amount paid out are rounded down, an amount
 * charged is rounded up. Rates are decimal strings and exact rationals, never floats.
 */

/** Decimal places of every rate the service states (a rate is at most this precise). */
export const ratePlaces = 10;

/** An exact rational of a decimal string (`1.0825` → 10825/10000). */
export interface Ratio {
  num: bigint;
  den: bigint;
}

const decimal = /^(0|[1-9][0-9]{0,19})(?:\.([0-9]{1,18}))?$/;

export function ratioOf(text: string): Ratio {
  const m = decimal.exec(text);
  if (!m) throw new Error(`rates: not a decimal rate: ${text}`);
  const places = m[2]?.length ?? 0;
  return { num: BigInt(m[1]! + (m[2] ?? '')), den: 10n ** BigInt(places) };
}

/** a/b rounded down (a, b > 0 or a = 0). */
const floorDiv = (a: bigint, b: bigint) => a / b;
/** a/b rounded up. */
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

/** A ratio as a decimal string with exactly `places` places, rounded down. */
export function formatRatioDown(r: Ratio, places = ratePlaces): string {
  const scaled = floorDiv(r.num * 10n ** BigInt(places), r.den);
  const digits = scaled.toString().padStart(places + 1, '0');
  return places === 0 ? digits : `${digits.slice(0, -places)}.${digits.slice(-places)}`;
}

/** The rate a customer gets: mid less `spreadBps` basis points, rounded down to `ratePlaces`. */
export function rateAfterSpread(mid: string, spreadBps: number): string {
  if (!Number.isInteger(spreadBps) || spreadBps < 0 || spreadBps > 10_000)
    throw new Error(`rates: spread out of range: ${spreadBps}`);
  const m = ratioOf(mid);
  return formatRatioDown({ num: m.num * BigInt(10_000 - spreadBps), den: m.den * 10_000n });
}

/** A minor amount at one scale turned into minor units at another by a rate: rounded down or up. */
type Conversion = (
  amountMinor: bigint,
  fromScale: number,
  toScale: number,
  rate: string,
  rounding: 'down' | 'up',
) => bigint;

/** `amountMinor` at `fromScale` times the ratio `r`, in minor units at `toScale`. */
function timesRatio(amountMinor: bigint, r: Ratio, fromScale: number, toScale: number, rounding: 'down' | 'up') {
  const num = amountMinor * r.num * 10n ** BigInt(toScale);
  const den = r.den * 10n ** BigInt(fromScale);
  return rounding === 'down' ? floorDiv(num, den) : ceilDiv(num, den);
}

/**
 * `amountMinor` (at `fromScale`) times `rate`, in minor units at `toScale`: rounded down (what
 * the service pays out) or up (what it charges).
 */
export const convert: Conversion = (amountMinor, fromScale, toScale, rate, rounding) => {
  if (amountMinor < 0n) throw new Error('rates: negative amount');
  return timesRatio(amountMinor, ratioOf(rate), fromScale, toScale, rounding);
};

/**
 * The amount at `fromScale` that `amountMinor` (at `toScale`) is worth at `rate` (the inverse
 * of `convert`): rounded up when it is charged. A zero rate cannot be inverted.
 */
export const convertBack: Conversion = (amountMinor, fromScale, toScale, rate, rounding) => {
  const r = ratioOf(rate);
  if (r.num === 0n) throw new Error('rates: a zero rate has no inverse');
  return timesRatio(amountMinor, { num: r.den, den: r.num }, toScale, fromScale, rounding);
};
