/**
 * The one rate service: where every conversion between assets gets its price (remittance now;
 * exchange and merchant conversions, docs/exchange.md "Rates"; docs/remittance.md "FX").
 * A `RateSource` answers a mid-market rate; the pure helpers of `conversion.ts` turn it into
 * amounts. Rates are decimal strings and exact rationals, never floats.
 */
import type { CallContext, NoAnswer } from '../port.js';

export interface RateSource {
  readonly name: 'rates';
  /** Read-only: units of `to` per one unit of `from` at mid-market (a decimal string). */
  mid(call: CallContext, from: string, to: string): Promise<RateOutcome>;
  /** Simulators only: stop (at `at`) or restart (`undefined`) one code's feed, to test `rate unavailable`. */
  halt?(code: string, at: Date | undefined): void;
}

export type RateOutcome =
  { kind: 'rate'; rate: string; asOf: string } | { kind: 'unavailable'; reason: string } | NoAnswer;

/** Whether a rate stated `asOf` is too old at `now` to be dealt on (older than `maxAgeSeconds`). */
export function isStale(asOf: string, now: Date, maxAgeSeconds: number): boolean {
  const t = Date.parse(asOf);
  return !Number.isFinite(t) || now.getTime() - t > maxAgeSeconds * 1000;
}
