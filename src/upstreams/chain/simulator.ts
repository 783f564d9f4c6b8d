import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { SimulatedUpstream, type SimulatorOptions } from '../simulated-provider.js';
import type { CallContext, CallOutcome } from '../port.js';
import type { ChainUpstream } from './port.js';

export interface ChainSimulatorOptions extends SimulatorOptions {
  /** Networks the simulated provider has a channel on (e.g. TRON, ETHEREUM, BITCOIN). */
  networks: readonly string[];
}

const base58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const bech32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

function digestOf(seed: string): Buffer {
  return createHash('sha256').update(seed).digest();
}

/** Characters of `alphabet` drawn from a digest of the seed (bounded: `length` ≤ 64). */
function charsFrom(seed: string, alphabet: string, length: number): string {
  const bytes = Buffer.concat([digestOf(seed), digestOf(`${seed}#2`)]);
  let out = '';
  for (let i = 0; i < length && i < bytes.length; i++) out += alphabet[bytes[i]! % alphabet.length];
  return out;
}

/** A well-formed address for the network, derived from the request id (same id, same address). */
export function simulatedAddress(network: string, seed: string): string {
  switch (network) {
    case 'TRON':
      return `T${charsFrom(seed, base58, 33)}`;
    case 'BITCOIN':
      return `bc1q${charsFrom(seed, bech32, 38)}`;
    default:
      return `0x${digestOf(seed).toString('hex').slice(0, 40)}`;
  }
}

export class SimulatedChain extends SimulatedUpstream<'chain'> implements ChainUpstream {
  private readonly networks: ReadonlySet<string>;

  constructor(db: Kysely<Database>, options: ChainSimulatorOptions) {
    super(db, 'chain', 'CH', options);
    this.networks = new Set(options.networks.map((n) => n.toUpperCase()));
  }

  private refusalOf(network: string): string | undefined {
    return this.networks.has(network) ? undefined : `no channel on ${network}`;
  }

  createDepositAddress(
    call: CallContext,
    req: { requestId: string; asset: string; network: string },
  ): Promise<CallOutcome<{ address: string }>> {
    return this.provider.submit(call, {
      requestId: req.requestId,
      operation: 'deposit_address',
      detail: { address: simulatedAddress(req.network, `${req.requestId}|${req.asset}|${req.network}`) },
      refusal: this.refusalOf(req.network),
      synchronous: true,
    });
  }

  send(
    call: CallContext,
    req: { requestId: string; asset: string; network: string; address: string; amountMinor: bigint },
  ): Promise<CallOutcome<{ tx_hash: string }>> {
    return this.provider.submit(call, {
      requestId: req.requestId,
      operation: 'send',
      detail: { tx_hash: `0x${digestOf(`tx|${req.requestId}`).toString('hex')}` },
      refusal: this.refusalOf(req.network),
    });
  }
}
