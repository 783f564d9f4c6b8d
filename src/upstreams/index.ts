import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Config } from '../platform/config.js';
import { SimulatedCard, type CardUpstream } from './card.js';
import { SimulatedChain, type ChainUpstream } from './chain.js';
import { SimulatedNotifier, type Notifier } from './notifier.js';
import { SimulatedQrPay, type QrPayUpstream } from './qrpay.js';
import { SimulatedRemittance, type RemittanceUpstream } from './remittance.js';
import { SimulatedKyc, type KycUpstream } from './kyc.js';
import { SimulatedMarket, type RateSource } from './rates.js';
import { createClock, type Clock } from '../platform/clock.js';
import { tracing } from '../platform/telemetry.js';

export * from './types.js';
export type { CardUpstream, ChainUpstream, KycUpstream, Notifier, QrPayUpstream, RemittanceUpstream, RateSource };

/** One adapter per upstream, chosen by configuration at start-up (ServiceContext.upstreams). */
export interface Upstreams {
  remittance: RemittanceUpstream;
  card: CardUpstream;
  qrpay: QrPayUpstream;
  chain: ChainUpstream;
  /** Identity verification (not money-moving: no behaviour injection; `kyc.ts`). */
  kyc: KycUpstream;
  /** Delivers one-time codes to members (step-up). Not a money-moving upstream: no behaviour injection. */
  notifier: Notifier;
  /** The one rate service (not an injectable upstream: it moves no money). */
  rates: RateSource;
}

type UpstreamConfig = Pick<Config, 'upstreamAdapters' | 'simulatorConfirmDelayMs' | 'simulatorChainNetworks'>;

/** `clock`: the simulators' time per caller (a sandbox merchant's clock moves the simulated calendar). */
export function createUpstreams(db: Kysely<Database>, config: UpstreamConfig, clock: Clock = createClock()): Upstreams {
  const sim = { confirmDelayMs: config.simulatorConfirmDelayMs };
  // With tracing on, each port's calls are client spans (telemetry.ts); the adapter itself otherwise.
  const t = tracing();
  const pick = <T extends object>(name: Exclude<keyof Upstreams, 'rates'>, simulator: () => T): T => {
    const kind = config.upstreamAdapters[name] ?? 'simulator';
    if (kind !== 'simulator') throw new Error(`upstream ${name}: unknown adapter ${kind}`);
    const adapter = simulator();
    return t ? t.traceAdapter(name, adapter) : adapter;
  };
  return {
    remittance: pick('remittance', () => new SimulatedRemittance(db, sim, (call) => clock.now(db, call))),
    card: pick('card', () => new SimulatedCard(db, sim, (call) => clock.now(db, call))),
    qrpay: pick('qrpay', () => new SimulatedQrPay(db, sim)),
    chain: pick('chain', () => new SimulatedChain(db, { ...sim, networks: config.simulatorChainNetworks })),
    kyc: pick('kyc', () => new SimulatedKyc(db, (call) => clock.now(db, call))),
    notifier: pick('notifier', () => new SimulatedNotifier(db)),
    rates: new SimulatedMarket(undefined, (call) => clock.now(db, call), () => clock.real()),
  };
}
