import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { useTestService } from './support/service.js';
import { signedInConsole } from './support/console.js';

/**
 * Issue 41, point 5: the console's balances with an "as of" date and the balance monitors, the
 * ledger page, and the exports page (request, progress, download), all without script.
 */

describe('console: money over time', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  let merchantId: string;
  useTestService({}, (s) => ({ service, client, merchantId } = s));

  /** A new console user with `role`, signed in: their cookie jar. */
  const consoleAs = async (role: 'owner' | 'developer' | 'viewer') =>
    (await signedInConsole(service, merchantId, `${role}-${randomUUID().slice(0, 6)}@example.com`, role)).jar;

  /** A new member `external` with a deposit of `amount` USDT: the deposit. */
  async function depositFor(external: string, amount: string) {
    await client.members.create({ external_member_id: external });
    return client.deposits.create({
      member_id: external,
      asset: 'USDT',
      amount,
      tx_hash: `0x${randomUUID().replaceAll('-', '')}`,
    });
  }

  it('shows the balances as of a date, and adds and removes a monitor', async () => {
    const jar = await consoleAs('owner');
    const before = new Date(Date.now() - 1000).toISOString().slice(0, 19);
    await new Promise((r) => setTimeout(r, 1100));
    await depositFor('cl-1', '42');
    const now = await jar.request('GET', '/console/sandbox');
    assert.equal(now.status, 200);
    assert.match(now.body, /42\.000000/);
    assert.doesNotMatch(now.body, /<script/);
    const then = await jar.request('GET', `/console/sandbox?as_of=${encodeURIComponent(before)}`);
    assert.equal(then.status, 200);
    assert.doesNotMatch(then.body, /42\.000000/);
    assert.match(then.body, /No money had moved/);
    const future = await jar.request('GET', '/console/sandbox?as_of=2999-01-01T00:00');
    assert.match(future.body, /in the future/);

    const csrf = await jar.csrfOf('/console/sandbox');
    const added = await jar.request('POST', '/console/sandbox/balance-monitors', {
      csrf_token: csrf,
      balance: 'custody',
      asset: 'USDT',
      below: '50',
    });
    assert.equal(added.status, 303, added.body.slice(0, 500));
    const [m] = await (async () => {
      const out = [];
      for await (const x of client.balanceMonitors.list()) out.push(x);
      return out;
    })();
    assert.deepEqual(
      { balance: m!.balance, below: m!.below, state: m!.state },
      { balance: 'custody', below: '50.000000', state: 'triggered' },
    );
    const page = await jar.request('GET', '/console/sandbox');
    assert.match(page.body, new RegExp(`/console/sandbox/balance-monitors/${m!.id}/delete`));
    const bad = await jar.request('POST', '/console/sandbox/balance-monitors', {
      csrf_token: csrf,
      balance: 'custody',
      asset: 'USDT',
      below: '-1',
    });
    assert.equal(bad.status, 400);
    const removed = await jar.request('POST', `/console/sandbox/balance-monitors/${m!.id}/delete`, {
      csrf_token: csrf,
    });
    assert.equal(removed.status, 303);
    for await (const x of client.balanceMonitors.list()) assert.fail(`still there: ${x.id}`);
    const viewer = await consoleAs('viewer');
    const refused = await viewer.submit(
      '/console/sandbox/balance-monitors',
      { balance: 'custody', asset: 'USDT', below: '1' },
      '/console/sandbox/ledger',
    );
    assert.equal(refused.status, 403);
  });

  it('lists the journal with its filters', async () => {
    const jar = await consoleAs('developer');
    const dep = await depositFor('cl-2', '7');
    const page = await jar.request('GET', '/console/sandbox/ledger');
    assert.equal(page.status, 200);
    assert.match(page.body, new RegExp(dep.id));
    assert.match(page.body, /custody: debit 7\.000000 USDT/);
    const filtered = await jar.request('GET', '/console/sandbox/ledger?member_id=nobody');
    assert.doesNotMatch(filtered.body, new RegExp(dep.id));
    const byRef = await jar.request('GET', `/console/sandbox/ledger?reference_id=${dep.id}`);
    assert.match(byRef.body, new RegExp(dep.id));
  });

  it('requests an export, shows its progress and downloads it', async () => {
    const jar = await consoleAs('developer');
    const csrf = await jar.csrfOf('/console/sandbox/exports');
    const day = (d: number) => new Date(Date.now() + d * 86_400_000).toISOString().slice(0, 10);
    const requested = await jar.request('POST', '/console/sandbox/exports', {
      csrf_token: csrf,
      kind: 'deposits',
      from: day(-1),
      to: day(1),
      format: 'csv',
    });
    assert.equal(requested.status, 303, requested.body.slice(0, 500));
    const id = /requested=(exp_[0-9a-f-]+)/.exec(requested.location ?? '')![1]!;
    assert.match((await jar.request('GET', '/console/sandbox/exports')).body, /pending/);
    assert.equal((await jar.request('GET', `/console/sandbox/exports/${id}/file`)).status, 404, 'not written yet');
    await service.workers.jobs.drain();
    const list = await jar.request('GET', '/console/sandbox/exports');
    assert.match(list.body, new RegExp(`/console/sandbox/exports/${id}/file`));
    const file = await jar.request('GET', `/console/sandbox/exports/${id}/file`);
    assert.equal(file.status, 200);
    assert.match(file.body, /^id,member_id,asset,network,amount,tx_hash,status,created_at\n/);
    assert.equal(file.body.trim().split('\n').length, 1 + (await client.exports.get(id)).row_count!);
  });
});
