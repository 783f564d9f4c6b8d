import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { MerchantWalletClient } from '@merchant-wallet/sdk';
import { openDatabase } from '../src/db/connection.js';
import { verifyLedger } from '../src/ledger/index.js';
import { seedEmbeddedDataDir, testDatabaseOptions } from './support/database.js';
import { rawRequest } from './support/raw-http.js';
import { spawnService, type ServiceProcess } from './support/process.js';

/**
 * Issue 16: the service killed with SIGKILL while group-committed deposits are in flight, then
 * started again on the same data. Nothing acknowledged is lost, nothing is doubled: every deposit
 * answered 201 before the kill is there with the same id, and sending every request again with
 * its key answers each with one deposit (the stored one, or a new one for a request whose batch
 * never committed), once per tx_hash; the ledger balances.
 */

describe('group commit across a crash of the service', () => {
  it('loses no acknowledged deposit and doubles none after SIGKILL and restart', { timeout: 240_000 }, async () => {
    const testDatabaseUrl = process.env.TEST_DATABASE_URL ?? '';
    const onPostgres = /^postgres(ql)?:\/\//.test(testDatabaseUrl);
    const dataDir = mkdtempSync(join(tmpdir(), 'mwa-gccrash-'));
    if (!onPostgres) await seedEmbeddedDataDir(dataDir);
    const adminToken = `adm_${randomUUID()}`;
    const env = { DATA_DIR: dataDir, DATABASE_URL: onPostgres ? testDatabaseUrl : '', ADMIN_TOKEN: adminToken, WORKERS: 'off', RATE_LIMIT_SCALE: '1000' };
    let svc: ServiceProcess | undefined = await spawnService(env);
    try {
      const adminCall = async (path: string, body: unknown) =>
        (await rawRequest(`${svc!.adminUrl}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` } })).body;
      const merchant = await adminCall('/admin/v1/merchants', { name: 'group commit crash' });
      const key = await adminCall(`/admin/v1/merchants/${merchant.id}/api-keys`, {
        environment: 'sandbox', scopes: ['members:write', 'deposits:write', 'deposits:read', 'balances:read'],
      });
      const clientOf = (p: ServiceProcess) => new MerchantWalletClient({
        baseUrl: `http://api-sandbox.localhost:${new URL(p.publicUrl).port}`, connectHost: '127.0.0.1',
        clientId: key.client_id, apiKey: key.api_key, signingKey: key.signing_key, maxAttempts: 1,
      });
      let client = clientOf(svc);
      await client.members.create({ external_member_id: 'crash-a' });
      await client.members.create({ external_member_id: 'crash-b' });

      const total = 120;
      const requests = Array.from({ length: total }, (_, i) => ({
        key: randomUUID(),
        body: { member_id: i % 2 ? 'crash-a' : 'crash-b', asset: 'USDT', amount: '1.25', tx_hash: `0x${randomUUID()}` },
      }));
      const acknowledged = new Map<number, string>();
      let next = 0;
      let killed = false;
      const send = (c: MerchantWalletClient, i: number) =>
        c.requestRaw({ method: 'POST', path: '/v1/deposits', body: requests[i]!.body, idempotencyKey: requests[i]!.key });
      // 32 senders, each sending the next request when its previous one is answered; the kill
      // comes once 30 deposits were acknowledged, with the rest in flight or still to send.
      const sender = async () => {
        while (!killed && next < total) {
          const i = next++;
          try {
            const res = await send(client, i);
            if (res.status === 201 && !killed) acknowledged.set(i, res.body.id);
            else if (res.status !== 201) assert.fail(`request ${i} answered ${res.status} ${res.rawBody}`);
          } catch {
            // Cut by the kill: its outcome is unknown to this client.
          }
          if (acknowledged.size >= 30 && !killed) {
            killed = true;
            svc!.child.kill('SIGKILL');
          }
        }
      };
      await Promise.all(Array.from({ length: 32 }, sender));
      await svc.exited;
      svc = undefined;
      const sentBeforeKill = next;
      assert.ok(acknowledged.size >= 30 && sentBeforeKill < total, `killed after ${acknowledged.size} acknowledged, ${sentBeforeKill} sent`);

      svc = await spawnService(env);
      client.close();
      client = clientOf(svc);
      // Every request again, with its key: each is answered with one deposit.
      let replays = 0;
      const answers: string[] = [];
      for (let start = 0; start < total; start += 32) {
        const batch = await Promise.all(requests.slice(start, start + 32).map((_, j) => send(client, start + j)));
        batch.forEach((res, j) => {
          assert.equal(res.status, 201, `request ${start + j} after the restart: ${res.rawBody}`);
          if (res.headers['x-idempotent-replay'] === 'true') replays++;
          answers.push(res.body.id);
        });
      }
      for (const [i, id] of acknowledged) assert.equal(answers[i], id, `acknowledged deposit ${i} is the one replayed`);
      assert.equal(new Set(answers).size, total, 'one deposit per request');
      assert.ok(replays >= acknowledged.size, `${replays} replays`);
      const balances = (await client.balances.list({ onBehalfOf: 'crash-a' })) as any[];
      assert.equal(balances.find((b) => b.asset === 'USDT').available, '75.000000');
      client.close();
      svc.child.kill('SIGTERM');
      assert.equal(await svc.exited, 0);
      svc = undefined;

      const handle = await openDatabase(env.DATABASE_URL || undefined, dataDir, testDatabaseOptions());
      try {
        const db = handle.db;
        const { rows } = await sql<{ deposits: string; hashes: string; entries: string }>`
          SELECT count(*)::text AS deposits, count(DISTINCT tx_hash)::text AS hashes,
                 (SELECT count(*) FROM journal_entries j WHERE j.reference_type = 'deposit' AND j.reference_id IN (SELECT id FROM deposits WHERE merchant_id = ${merchant.id}))::text AS entries
          FROM deposits WHERE merchant_id = ${merchant.id}
        `.execute(db);
        assert.deepEqual(rows[0], { deposits: String(total), hashes: String(total), entries: String(total) });
        const report = await verifyLedger(db);
        assert.deepEqual(report.problems, []);
        console.log(`# group commit crash: killed after ${acknowledged.size} acknowledged of ${sentBeforeKill} sent; ${replays} of ${total} answered from their key after the restart`);
      } finally {
        await handle.close();
      }
    } finally {
      svc?.child.kill('SIGKILL');
    }
  });
});
