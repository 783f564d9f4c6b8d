/**
 * The one rate service: where every conversion between assets gets its price (remittance now;
 * exchange and merchant conversions, docs/exchange.md "Rates"; docs/remittance.md "FX").
 * A `RateSource` answers a mid-market rate; the pure helpers below turn it into amounts, always
 * rounding in the service's favour: a rate after spread and an amount paid out are rounded down,
 * an amount charged is rounded up. Rates are decimal strings and exact rationals, never floats.
 */
import type { CallContext } from './types.js';

export interface RateSource {
  readonly name: 'rates';
  /** Read-only: units of `to` per one unit of `from` at mid-market (a decimal string). */
  mid(call: CallContext, from: string, to: string): Promise<RateOutcome>;
  /** Simulators only: stop (at `at`) or restart (`undefined`) one code's feed, to test `rate unavailable`. */
  halt?(code: string, at: Date | undefined): void;
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
 * A deterministic simulated market: every code has a reference price in US dollars, and a rate
 * is the ratio of two prices, rounded down to 12 places. Same inputs and same time, same rate,
 * always; an unknown code has no rate (`unavailable`).
 *
 * Movement is driven by the caller's clock (`now(call)`: in the sandbox, the merchant's clock),
 * so tests are deterministic: the volatile codes (`volatileCodes`: BTC, ETH) move by a
 * deterministic step within ±2 % every hour of that clock (`driftBps`); stable coins and fiat
 * keep their reference price. A feed can be halted (`halt`): its price and `asOf` stay where they
 * were, and a caller that requires a fresh rate (`isStale`) treats it as `rate unavailable`.
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

/** Codes whose simulated price moves with the clock. */
export const volatileCodes: ReadonlySet<string> = new Set(['BTC', 'ETH']);

/** One hour of the caller's clock: the simulated market's step. */
export const marketStepMs = 3_600_000;

/** Deterministic move of a volatile code in the hour `step` (basis points, -200..200). */
export function driftBps(code: string, step: number): number {
  let h = 0;
  for (const ch of code) h = (h * 31 + ch.charCodeAt(0)) % 1_000_003;
  return Number((BigInt(step) * 7919n + BigInt(h) * 104_729n) % 401n) - 200;
}

/** The simulated USD price of `code` at time `at` (a ratio; undefined for an unknown code). */
export function simulatedPrice(prices: Readonly<Record<string, string>>, code: string, at: Date): Ratio | undefined {
  const base = prices[code];
  if (base === undefined) return undefined;
  const r = ratioOf(base);
  if (!volatileCodes.has(code)) return r;
  const bps = driftBps(code, Math.floor(at.getTime() / marketStepMs));
  return { num: r.num * BigInt(10_000 + bps), den: r.den * 10_000n };
}

/** Whether a rate stated `asOf` is too old at `now` to be dealt on (older than `maxAgeSeconds`). */
export function isStale(asOf: string, now: Date, maxAgeSeconds: number): boolean {
  const t = Date.parse(asOf);
  return !Number.isFinite(t) || now.getTime() - t > maxAgeSeconds * 1000;
}

/** A halted feed: when it stopped (real time), and that moment on each caller's clock. */
interface Halt {
  at: Date;
  /** Caller (`merchant|environment`) → its clock's offset from real time, taken at its first rate after the halt. */
  offsets: Map<string, number>;
}

export class SimulatedMarket implements RateSource {
  readonly name = 'rates' as const;
  private readonly halted = new Map<string, Halt>();

  /** `now`: the caller's clock (a sandbox merchant's may be ahead); `real`: real time, the clock a halt is given on. */
  constructor(
    private readonly prices: Readonly<Record<string, string>> = simulatedUsdPrices,
    private readonly now: (call: CallContext) => Promise<Date>,
    private readonly real: () => Date,
  ) {}

  /** Stops (at `at`, real time) or restarts (`at` undefined) one code's feed: a simulator switch for tests and operators. */
  halt(code: string, at: Date | undefined): void {
    if (at) this.halted.set(code, { at, offsets: new Map() });
    else this.halted.delete(code);
  }

  /**
   * When a halted feed stopped, on the caller's clock: the real halt time moved by the caller's
   * offset as it was at its first rate after the halt, so that a sandbox clock already ahead sees
   * the feed fresh, then stale once it moves 60 s on (an offset taken anew at each call would
   * never let the feed age by an advance; none at all would make it stale at once).
   */
  private stoppedAt(halt: Halt, call: CallContext, now: Date): Date {
    const caller = `${call.merchantId}|${call.environment}`;
    let offset = halt.offsets.get(caller);
    if (offset === undefined) {
      offset = Math.max(0, now.getTime() - this.real().getTime());
      halt.offsets.set(caller, offset);
    }
    return new Date(halt.at.getTime() + offset);
  }

  async mid(call: CallContext, from: string, to: string): Promise<RateOutcome> {
    if (this.prices[from] === undefined || this.prices[to] === undefined) return { kind: 'unavailable', reason: `no market between ${from} and ${to}` };
    const now = await this.now(call);
    const stops = [this.halted.get(from), this.halted.get(to)].filter((h): h is Halt => h !== undefined).map((h) => this.stoppedAt(h, call, now));
    const at = stops.length > 0 ? new Date(Math.min(...stops.map((d) => d.getTime()))) : now;
    if (from === to) return { kind: 'rate', rate: '1', asOf: at.toISOString() };
    const pa = simulatedPrice(this.prices, from, at)!;
    const pb = simulatedPrice(this.prices, to, at)!;
    const rate = formatRatioDown({ num: pa.num * pb.den, den: pa.den * pb.num }, 12).replace(/\.?0+$/, '');
    return { kind: 'rate', rate: rate === '' ? '0' : rate, asOf: at.toISOString() };
  }
}
