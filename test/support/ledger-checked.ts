import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../../src/server.js';
import { verifyLedger } from '../../src/ledger/index.js';
import { startTestService } from './service.js';

/**
 * A service for the enclosing `describe`, started before its tests; after them the ledger's
 * invariants are checked (every asset's postings sum to zero, balances match) before it closes.
 * `set` receives the service (the suite keeps it in its own variable).
 */
export function useLedgerCheckedService(set: (service: RunningService) => void, options?: Parameters<typeof startTestService>[0]): void {
  let service: RunningService | undefined;
  before(async () => {
    service = await startTestService(options);
    set(service);
  });
  after(async () => {
    if (!service) return;
    const report = await verifyLedger(service.ctx.db);
    await service.close();
    assert.deepEqual(report.problems, [], 'ledger invariants hold after the suite');
  });
}

/** A new member of the client's merchant with `amount` of `asset` deposited. */
export async function fundedMember(client: MerchantWalletClient, amount = '100', asset = 'USDT'): Promise<{ id: string; external: string }> {
  const external = `m-${randomUUID().slice(0, 8)}`;
  const member = (await client.members.create({ external_member_id: external })) as { id: string };
  await client.deposits.create({ member_id: external, asset, amount, tx_hash: `0x${randomUUID()}` });
  return { id: member.id, external };
}

/** The member's balance line of `asset`. */
export const balanceOf = async (client: MerchantWalletClient, member: string, asset = 'USDT') =>
  ((await client.balances.list({ onBehalfOf: member })) as any[]).find((b) => b.asset === asset);

/** The merchant's custody line of `asset`. */
export const custodyOf = async (client: MerchantWalletClient, asset = 'USDT') =>
  ((await client.merchant.balances()) as any[]).find((b) => b.asset === asset);
