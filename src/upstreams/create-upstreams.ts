import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Config } from '../platform/config/config.js';
import { createClock, type Clock } from '../platform/clock.js';
import { tracing } from '../platform/telemetry/telemetry.js';
import { SimulatedCard } from './card/simulator.js';
import { SimulatedChain } from './chain/simulator.js';
import type { Upstreams } from './index.js';
import { SimulatedKyc } from './kyc/simulator.js';
import { SimulatedNotifier } from './notifier/simulator.js';
import { SimulatedQrPay } from './qrpay/simulator.js';
import { SimulatedMarket } from './rates/simulator.js';
import { SimulatedRemittance } from './remittance/simulator.js';

/**
 * The composition of the upstreams at start-up (`src/server.ts`): the adapter configured for each
 * port (`config.ts`; today the built-in simulators), traced when tracing is on.
 */

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
    rates: new SimulatedMarket(
      undefined,
      (call) => clock.now(db, call),
      () => clock.real(),
    ),
  };
}
