/**
 * The one rate service: where every conversion between assets gets its price (remittance now;
 * the exchange area is meant to use the same `ctx.upstreams.rates`, docs/remittance.md "FX").
 * A `RateSource` answers a mid-market rate; the pure helpers below turn it into amounts, always
 * rounding in the service's favour: a rate after spread and an amount paid out are rounded down,
 * an amount charged is rounded up. Rates are decimal strings and exact rationals, never floats.
 */
import type { CallContext } from './types.js';

export interface RateSource {
  readonly name: 'rates';
  /** Read-only: units of `to` per one unit of `from` at mid-market (a decimal string). */
  mid(call: CallContext, from: string, to: string): Promise<RateOutcome>;
}

export type RateOutcome =
  | { kind: 'rate'; rate: string; asOf: string }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'timeout' }
  | { kind: 'unknown'; reason: string };

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
  if (!Number.isInteger(spreadBps) || spreadBps < 0 || spreadBps > 10_000) throw new Error(`rates: spread out of range: ${spreadBps}`);
  const m = ratioOf(mid);
  return formatRatioDown({ num: m.num * BigInt(10_000 - spreadBps), den: m.den * 10_000n });
}

/**
 * `amountMinor` (at `fromScale`) times `rate`, in minor units at `toScale`: rounded down (what
 * the service pays out) or up (what it charges).
 */
export function convert(amountMinor: bigint, fromScale: number, toScale: number, rate: string, rounding: 'down' | 'up'): bigint {
  if (amountMinor < 0n) throw new Error('rates: negative amount');
  const r = ratioOf(rate);
  const num = amountMinor * r.num * 10n ** BigInt(toScale);
  const den = r.den * 10n ** BigInt(fromScale);
  return rounding === 'down' ? floorDiv(num, den) : ceilDiv(num, den);
}

/**
 * The amount at `fromScale` that `amountMinor` (at `toScale`) is worth at `rate` (the inverse
 * of `convert`): rounded up when it is charged. A zero rate cannot be inverted.
 */
export function convertBack(amountMinor: bigint, fromScale: number, toScale: number, rate: string, rounding: 'down' | 'up'): bigint {
  const r = ratioOf(rate);
  if (r.num === 0n) throw new Error('rates: a zero rate has no inverse');
  const num = amountMinor * r.den * 10n ** BigInt(fromScale);
  const den = r.num * 10n ** BigInt(toScale);
  return rounding === 'down' ? floorDiv(num, den) : ceilDiv(num, den);
}

/**
 * A deterministic simulated market: every code has a fixed reference price in US dollars, and a
 * rate is the ratio of two prices, rounded down to 12 places. Same inputs, same rate, always;
 * an unknown code has no rate (`unavailable`).
 */
export const simulatedUsdPrices: Readonly<Record<string, string>> = {
  USD: '1',
  USDT: '1',
  USDC: '1',
  EUR: '1.08',
  GBP: '1.27',
  SGD: '0.74',
  HKD: '0.128',
  BTC: '65000',
  ETH: '3200',
};

export class SimulatedMarket implements RateSource {
  readonly name = 'rates' as const;

  constructor(private readonly prices: Readonly<Record<string, string>> = simulatedUsdPrices, private readonly asOf: () => Date = () => new Date()) {}

  async mid(_call: CallContext, from: string, to: string): Promise<RateOutcome> {
    const a = this.prices[from];
    const b = this.prices[to];
    if (a === undefined || b === undefined) return { kind: 'unavailable', reason: `no market between ${from} and ${to}` };
    if (from === to) return { kind: 'rate', rate: '1', asOf: this.asOf().toISOString() };
    const pa = ratioOf(a);
    const pb = ratioOf(b);
    const rate = formatRatioDown({ num: pa.num * pb.den, den: pa.den * pb.num }, 12).replace(/\.?0+$/, '');
    return { kind: 'rate', rate: rate === '' ? '0' : rate, asOf: this.asOf().toISOString() };
  }
}
