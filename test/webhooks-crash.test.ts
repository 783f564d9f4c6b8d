import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { verifyWebhookSignature } from '@merchant-wallet/sdk';
import { verifyLedger } from '../src/money/index.js';
import { spawnService, type ServiceProcess, adminPost, ownServiceDatabase, processClient } from './support/process.js';

/**
 * The real service as a process, killed with SIGKILL while deliveries and jobs are in flight, then
 * started again on the same data: every event is delivered at least once, no record is `sent`
 * twice, each event has one record per endpoint, and the ledger is what it was before the kill.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('webhook delivery across a crash of the service', () => {
  it(
    'delivers every event at least once and records each one sent once after SIGKILL and restart',
    { timeout: 240_000 },
    async () => {
      // The receiver holds each answer for a second, so that requests are in flight when the service dies.
      const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
      let inFlight = 0;
      const receiver = createServer((req, res) => {
        const chunks: Buffer[] = [];
        inFlight++;
        // Once per request: answered, or the connection dropped by the dying service.
        res.on('close', () => inFlight--);
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
          setTimeout(() => res.end('ok'), 1000);
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const receiverPort = (receiver.address() as { port: number }).port;

      const { adminToken, env, inDatabase } = await ownServiceDatabase('whcrash', {
        JOB_POLL_INTERVAL_MS: '50',
        JOB_LEASE_SECONDS: '4',
        WEBHOOK_DELIVERY_TIMEOUT_MS: '2000',
        WEBHOOK_RETRY_SCHEDULE_MS: '500,500,500,500,500,500,500,500,500,500',
      });
      let svc: ServiceProcess | undefined;
      try {
        // The events are made with the workers off; the next start finds all 30 due at once and
        // sends 16 (the bound per endpoint), so that some are still to come when the service dies.
        svc = await spawnService({ ...env, WORKERS: 'off' });
        const adminCall = (path: string, body: unknown) => adminPost(svc!, adminToken, path, body);
        const merchant = await adminCall('/admin/v1/merchants', { name: 'crash' });
        const key = await adminCall(`/admin/v1/merchants/${merchant.id}/api-keys`, {
          environment: 'sandbox',
          scopes: ['members:write', 'deposits:write', 'webhooks:write', 'merchant:read', 'balances:read'],
        });
        const clientOf = (p: ServiceProcess) => processClient(p, key);
        let client = clientOf(svc);
        const endpoint = (await client.webhooks.createEndpoint({
          url: `http://127.0.0.1:${receiverPort}/hook`,
          event_types: ['*'],
        })) as any;
        await client.members.create({ external_member_id: 'crash-member' });
        const depositIds: string[] = [];
        for (let i = 0; i < 30; i++) {
          const d = (await client.deposits.create({
            member_id: 'crash-member',
            asset: 'USDT',
            amount: '1.5',
            tx_hash: `0x${randomUUID()}`,
          })) as any;
          depositIds.push(d.id);
        }
        const balancesBefore = {
          member: await client.balances.list({ onBehalfOf: 'crash-member' }),
          merchant: await client.merchant.balances(),
        };
        client.close();
        assert.equal(await svc.stop(), 0);
        svc = await spawnService(env);
        client = clientOf(svc);

        await waitFor('deliveries in flight', () => received.length >= 10 && inFlight > 0, 60_000);
        const receivedBeforeKill = received.length;
        svc.child.kill('SIGKILL');
        await svc.exited;
        svc = undefined;
        assert.ok(
          receivedBeforeKill < 30,
          `killed with ${receivedBeforeKill} of 30 received and ${inFlight} in flight`,
        );

        svc = await spawnService(env);
        client.close();
        client = clientOf(svc);
        // Leases of jobs claimed by the dead process run out (60 s) before another run takes them.
        await waitFor(
          'every delivery sent',
          async () => {
            const log = await client.request<any>({
              method: 'GET',
              path: '/v1/webhooks/deliveries',
              query: { limit: 100 },
            });
            return log.data.length === 30 && log.data.every((d: any) => d.status === 'sent');
          },
          150_000,
        );

        const bodies = received.map((r) => JSON.parse(r.body));
        const delivered = new Set(bodies.map((b) => b.data.id));
        assert.deepEqual(
          [...delivered].sort(),
          [...depositIds].sort(),
          'every deposit.credited event reached the receiver',
        );
        for (const r of received)
          assert.ok(verifyWebhookSignature({ secret: endpoint.secret, headers: r.headers, body: r.body }));
        assert.deepEqual(
          {
            member: await client.balances.list({ onBehalfOf: 'crash-member' }),
            merchant: await client.merchant.balances(),
          },
          balancesBefore,
          'the ledger is unchanged by the crash and the restart',
        );
        client.close();
        assert.equal(await svc.stop(), 0);
        svc = undefined;

        await inDatabase(async (db) => {
          const records = await db
            .selectFrom('webhook_deliveries')
            .selectAll()
            .where('merchant_id', '=', merchant.id)
            .execute();
          assert.equal(records.length, 30);
          assert.equal(
            new Set(records.map((r) => `${r.event_id}|${r.endpoint_id}`)).size,
            30,
            'one record per event and endpoint',
          );
          assert.ok(records.every((r) => r.endpoint_id === endpoint.id && r.status === 'sent'));
          const { rows: sentTransitions } = await sql<{ delivery_id: string; sent: string }>`
          SELECT a.delivery_id, count(*) FILTER (WHERE a.outcome = 'sent')::text AS sent
          FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
          WHERE d.merchant_id = ${merchant.id} GROUP BY a.delivery_id
        `.execute(db);
          assert.equal(sentTransitions.length, 30);
          assert.ok(
            sentTransitions.every((r) => r.sent === '1'),
            'no record went to sent twice',
          );
          const { rows: outcomes } = await sql<{ outcome: string; n: string }>`
          SELECT a.outcome, count(*)::text AS n FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id =
            a.delivery_id
          WHERE d.merchant_id = ${merchant.id} GROUP BY a.outcome ORDER BY a.outcome
        `.execute(db);
          const byOutcome = Object.fromEntries(outcomes.map((o) => [o.outcome, Number(o.n)]));
          assert.equal(
            byOutcome.in_flight,
            undefined,
            'attempts cut by the kill were marked abandoned when taken over',
          );
          assert.ok((byOutcome.abandoned ?? 0) >= 1, JSON.stringify(byOutcome));
          const { rows: leftJobs } = await sql<{ n: string }>`
          SELECT count(*)::text AS n FROM jobs WHERE kind = 'webhook.deliver' AND payload->>'delivery_id' =
            ANY(${sql.val(records.map((r) => r.id))}::text[])
        `.execute(db);
          assert.equal(leftJobs[0]!.n, '0', 'every delivery job completed; none parked dead');
          const { rows: entries } = await sql<{ n: string }>`
          SELECT count(*)::text AS n FROM journal_entries WHERE reference_type = 'deposit' AND reference_id =
            ANY(${sql.val(depositIds)}::text[])
        `.execute(db);
          assert.equal(entries[0]!.n, '30', 'one journal entry per deposit');
          const report = await verifyLedger(db);
          assert.deepEqual(report.problems, []);
          const duplicates = received.length - 30;
          console.log(
            `# crash test: ${receivedBeforeKill} received before SIGKILL, ${received.length} requests in all ` +
              `(${duplicates} resent: at least once); attempts ${JSON.stringify(byOutcome)}`,
          );
        });
      } finally {
        svc?.child.kill('SIGKILL');
        // Connections first: close() waits for every open one, so a failed start must not hang the file.
        const closed = new Promise<void>((resolve) => receiver.close(() => resolve()));
        receiver.closeAllConnections();
        await closed;
      }
    },
  );
});
