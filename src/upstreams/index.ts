import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Config } from '../platform/config.js';
import { SimulatedCard, type CardUpstream } from './card.js';
import { SimulatedChain, type ChainUpstream } from './chain.js';
import { SimulatedNotifier, type Notifier } from './notifier.js';
import { SimulatedQrPay, type QrPayUpstream } from './qrpay.js';
import { SimulatedRemittance, type RemittanceUpstream } from './remittance.js';
import { SimulatedKyc, type KycUpstream } from './kyc.js';

export * from './types.js';
export type { CardUpstream, ChainUpstream, KycUpstream, Notifier, QrPayUpstream, RemittanceUpstream };

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
}

type UpstreamConfig = Pick<Config, 'upstreamAdapters' | 'simulatorConfirmDelayMs' | 'simulatorChainNetworks'>;

export function createUpstreams(db: Kysely<Database>, config: UpstreamConfig): Upstreams {
  const sim = { confirmDelayMs: config.simulatorConfirmDelayMs };
  const pick = <T>(name: keyof Upstreams, simulator: () => T): T => {
    const kind = config.upstreamAdapters[name] ?? 'simulator';
    if (kind === 'simulator') return simulator();
    throw new Error(`upstream ${name}: unknown adapter ${kind}`);
  };
  return {
    remittance: pick('remittance', () => new SimulatedRemittance(db, sim)),
    card: pick('card', () => new SimulatedCard(db, sim)),
    qrpay: pick('qrpay', () => new SimulatedQrPay(db, sim)),
    chain: pick('chain', () => new SimulatedChain(db, { ...sim, networks: config.simulatorChainNetworks })),
    kyc: pick('kyc', () => new SimulatedKyc(db)),
    notifier: pick('notifier', () => new SimulatedNotifier(db)),
  };
}
