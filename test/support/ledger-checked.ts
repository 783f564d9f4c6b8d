import { before, after } from 'node:test';
import assert from 'node:assert/strict';
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

/** Moved to the fixtures module (support/fixtures.ts); imported from there. */
export { balanceOf, custodyOf, fundedMember } from './fixtures.js';
