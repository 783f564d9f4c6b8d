import type { CallContext } from '../port.js';
import { formatRatioDown, ratioOf, type Ratio } from '../../money/conversion.js';
import type { RateOutcome, RateSource } from './port.js';

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

  /** Stops (at `at`, real time) or restarts (`at` undefined) one code's feed: a simulator switch for tests and
   * operators. */
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
    if (this.prices[from] === undefined || this.prices[to] === undefined)
      return { kind: 'unavailable', reason: `no market between ${from} and ${to}` };
    const now = await this.now(call);
    const stops = [this.halted.get(from), this.halted.get(to)]
      .filter((h): h is Halt => h !== undefined)
      .map((h) => this.stoppedAt(h, call, now));
    const at = stops.length > 0 ? new Date(Math.min(...stops.map((d) => d.getTime()))) : now;
    if (from === to) return { kind: 'rate', rate: '1', asOf: at.toISOString() };
    const pa = simulatedPrice(this.prices, from, at)!;
    const pb = simulatedPrice(this.prices, to, at)!;
    const rate = formatRatioDown({ num: pa.num * pb.den, den: pa.den * pb.num }, 12).replace(/\.?0+$/, '');
    return { kind: 'rate', rate: rate === '' ? '0' : rate, asOf: at.toISOString() };
  }
}
