import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { CompiledQuery } from 'kysely';
import type { RunningService } from '../src/server.js';
import { AssetCatalogueCache, assetCacheOf, ownAssetWriteBypassMs } from '../src/modules/assets/catalogue-cache.js';
import type { Asset } from '../src/modules/assets/rules.js';
import { admin, newMerchantClient, useTestService } from './support/service.js';

/** The asset catalogue held per process (docs/performance.md, "Request pipeline and the authenticated read"). */

const usdt = { code: 'USDT', scale: 6, type: 'crypto', enabled: true, networks: [] } as unknown as Asset;

describe('asset catalogue cache', () => {
  it(
    'holds nothing unless listening, never stores a read from before a notification, and steps aside after its ' +
      'own write',
    () => {
      let now = 0;
      const cache = new AssetCatalogueCache(() => now);
      cache.put('USDT', usdt, cache.begin());
      assert.equal(cache.get('USDT'), undefined);
      cache.setListening(true);
      const generation = cache.begin();
      cache.invalidate();
      cache.put('USDT', usdt, generation);
      assert.equal(cache.get('USDT'), undefined);
      cache.put('USDT', usdt, cache.begin());
      assert.equal(cache.get('USDT'), usdt);
      cache.ownWrite();
      assert.equal(cache.get('USDT'), undefined);
      cache.put('USDT', usdt, cache.begin());
      assert.equal(cache.size, 0);
      now += ownAssetWriteBypassMs;
      cache.put('USDT', usdt, cache.begin());
      assert.equal(cache.get('USDT'), usdt);
    },
  );
});

describe('asset catalogue cache in the service', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));

  async function depositor() {
    const { client } = await newMerchantClient(service);
    const member = await client.members.create({ external_member_id: `a-${randomUUID()}` });
    return (asset = 'USDT') =>
      client.requestRaw({
        method: 'POST',
        path: '/v1/deposits',
        body: { member_id: member.id, asset, amount: '1', tx_hash: `0x${randomUUID().replace(/-/g, '')}` },
      });
  }

  async function until(
    request: () => Promise<{ status: number; body: any }>,
    done: (r: { status: number; body: any }) => boolean,
  ) {
    let r = await request();
    for (const started = Date.now(); !done(r) && Date.now() - started < 1_000;) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      r = await request();
    }
    return r;
  }

  it('is the cache of the service handle and of its transactions', async () => {
    const cache = assetCacheOf(service.ctx.db);
    assert.ok(cache?.isListening);
    await service.ctx.db.transaction().execute(async (trx) => assert.equal(assetCacheOf(trx), cache));
  });

  // First: the operator's change in the next test makes this process step aside for a while.
  it('forgets the catalogue changed behind the service, straight in the table, on the notification', async () => {
    const deposit = await depositor();
    assert.equal((await deposit()).status, 201);
    assert.equal(assetCacheOf(service.ctx.db)?.get('USDT')?.enabled, true, 'held');
    await service.ctx.db.executeQuery(CompiledQuery.raw('UPDATE assets SET enabled = false WHERE code = $1', ['USDT']));
    try {
      const refused = await until(deposit, (r) => r.status !== 201);
      assert.equal(refused.body.code, 'asset_not_allowed', JSON.stringify(refused.body));
    } finally {
      await service.ctx.db.executeQuery(
        CompiledQuery.raw('UPDATE assets SET enabled = true WHERE code = $1', ['USDT']),
      );
    }
    assert.equal((await until(deposit, (r) => r.status === 201)).status, 201);
  });

  it('refuses an asset the moment the operator disables it, and takes it again when it is enabled', async () => {
    const deposit = await depositor();
    assert.equal((await deposit()).status, 201);
    assert.equal((await admin(service, 'PATCH', '/admin/v1/assets/USDT', { enabled: false })).status, 200);
    try {
      const refused = await deposit();
      assert.equal(refused.body.code, 'asset_not_allowed');
    } finally {
      assert.equal((await admin(service, 'PATCH', '/admin/v1/assets/USDT', { enabled: true })).status, 200);
    }
    assert.equal((await deposit()).status, 201);
  });
});
