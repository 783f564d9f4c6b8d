import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { spawnService, type ServiceProcess, adminPost, processClient } from './support/process.js';
import { openSse } from './support/sse.js';
import { postgresOnly } from './support/service.js';

/*
 * The event stream across service processes on one PostgreSQL (docs/events.md, "Several
 * processes"): an event written through one process reaches a stream held by another within a
 * second (the mwa_events notification); a process stopped (SIGTERM) ends its streams at once,
 * and a client that reconnects with Last-Event-ID after the restart gets what was written in
 * between, then new events, none lost or repeated.
 */

const databaseUrl = process.env.TEST_DATABASE_URL ?? '';

describe('the event stream across processes', { skip: postgresOnly() }, () => {
  const adminToken = `adm_${randomUUID()}`;
  const env = { DATABASE_URL: databaseUrl, ADMIN_TOKEN: adminToken };
  let a: ServiceProcess;
  let b: ServiceProcess;
  let key: { client_id: string; api_key: string; signing_key: string };

  const sandboxUrl = (p: ServiceProcess) => `http://api-sandbox.localhost:${new URL(p.publicUrl).port}`;
  const clientOf = (p: ServiceProcess) => processClient(p, key);

  before(async () => {
    [a, b] = await Promise.all([
      spawnService({ ...env, DATA_DIR: mkdtempSync(join(tmpdir(), 'mwa-ev-a-')) }),
      spawnService({ ...env, DATA_DIR: mkdtempSync(join(tmpdir(), 'mwa-ev-b-')) }),
    ]);
    const merchant = await adminPost(a, adminToken, '/admin/v1/merchants', { name: 'event streams' });
    key = await adminPost(a, adminToken, `/admin/v1/merchants/${merchant.id}/api-keys`, {
      environment: 'sandbox',
      scopes: ['members:write', 'deposits:write', 'events:read'],
    });
  });
  after(async () => {
    for (const p of [a, b]) p?.child.kill('SIGTERM');
    await Promise.all([a?.exited, b?.exited]);
  });

  it(
    'delivers an event written through another process within a second, and resumes across a restart with ' +
      'nothing lost or repeated',
    async () => {
      const viaB = clientOf(b);
      const external = `mp-${randomUUID()}`;
      await viaB.members.create({ external_member_id: external });
      const deposit = async () =>
        (
          (await viaB.deposits.create({
            member_id: external,
            asset: 'USDT',
            amount: '1',
            tx_hash: `t-${randomUUID()}`,
          })) as { id: string }
        ).id;
      const written: string[] = [];
      const seen: string[] = [];

      const first = await openSse(
        sandboxUrl(a),
        await clientOf(a).getToken(),
        '/v1/events/stream?type=deposit.credited',
      );
      assert.equal(first.status, 200, first.body);
      for (let i = 0; i < 3; i++) {
        written.push(await deposit());
        // From the write's answer (its commit): the write's own time is not the stream's (through
        // PgBouncer on a loaded CI machine, deposit and delivery together once took 1,006 ms).
        const wrote = Date.now();
        const [ev] = (await first.waitFor(i + 1, 5_000)).slice(i);
        const ms = Date.now() - wrote;
        assert.ok(
          ms < 1_000,
          `event ${i + 1} reached the other process's stream ${ms} ms after the write was answered`,
        );
        seen.push(JSON.parse(ev!.data).data.id);
      }
      const lastId = first.events.at(-1)!.id;

      // A stops: its stream ends at once (the drain does not wait for it).
      const stopping = Date.now();
      a.child.kill('SIGTERM');
      await first.ended;
      assert.ok(Date.now() - stopping < 3_000, `stream ended ${Date.now() - stopping} ms after SIGTERM`);
      assert.equal(await a.exited, 0, a.output());
      // Written while no stream is connected.
      written.push(await deposit(), await deposit());
      a = await spawnService({ ...env, DATA_DIR: mkdtempSync(join(tmpdir(), 'mwa-ev-a-')) });
      const second = await openSse(
        sandboxUrl(a),
        await clientOf(a).getToken(),
        '/v1/events/stream?type=deposit.credited',
        { 'last-event-id': lastId },
      );
      assert.equal(second.status, 200, second.body);
      await second.waitFor(2);
      written.push(await deposit());
      const resumed = await second.waitFor(3);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(second.events.length, 3, 'nothing repeated');
      seen.push(...resumed.map((e) => JSON.parse(e.data).data.id));
      second.close();
      assert.deepEqual(seen, written);
    },
  );
});
