import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { MerchantWalletClient } from '@merchant-wallet/sdk';
import { verifyLedger } from '../src/money/index.js';
import { spawnService, type ServiceProcess, adminPost, ownServiceDatabase, processClient } from './support/process.js';
import { TRON } from './support/fixtures.js';

/**
 * Issue 16, and issue 37 (batches across merchants): the service killed with SIGKILL while
 * group-committed writes of four merchants are in flight (deposits spread across them, member
 * creations and withdrawals), then started again on the same data. Nothing acknowledged is lost,
 * nothing is doubled, for each merchant: every deposit, member and withdrawal answered 201 before
 * the kill is there with the same id, and sending every request again with its key answers each
 * with one deposit (one per tx_hash), one member or one withdrawal (the stored one, or a new one
 * for a request whose batch never committed); one journal entry per deposit and per withdrawal;
 * each merchant's balances; the ledger balances.
 */

describe('group commit across a crash of the service', () => {
  it(
    'loses no acknowledged write and doubles none, for any merchant, after SIGKILL and restart',
    { timeout: 240_000 },
    async () => {
      const { adminToken, env, inDatabase } = await ownServiceDatabase('gccrash', {
        WORKERS: 'off',
        RATE_LIMIT_SCALE: '1000',
      });
      let svc: ServiceProcess | undefined = await spawnService(env);
      try {
        const adminCall = (path: string, body: unknown) => adminPost(svc!, adminToken, path, body);
        const merchantCount = 4;
        const merchants: { id: string; key: { client_id: string; api_key: string; signing_key: string } }[] = [];
        for (let m = 0; m < merchantCount; m++) {
          const merchant = await adminCall('/admin/v1/merchants', { name: `group commit crash ${m}` });
          const key = await adminCall(`/admin/v1/merchants/${merchant.id}/api-keys`, {
            environment: 'sandbox',
            scopes: [
              'members:write',
              'members:read',
              'deposits:write',
              'deposits:read',
              'withdrawals:write',
              'balances:read',
            ],
          });
          merchants.push({ id: merchant.id, key });
        }
        const clientsOf = (p: ServiceProcess) => merchants.map(({ key }) => processClient(p, key));
        let clients = clientsOf(svc);
        const funding = '1000';
        for (const c of clients) {
          for (const member of ['crash-a', 'crash-b']) {
            await c.members.create({ external_member_id: member });
            await c.deposits.create({
              member_id: member,
              asset: 'USDT',
              amount: funding,
              tx_hash: `0x${randomUUID()}`,
            });
          }
        }

        // Spread across the merchants in turn; one request in five creates a member, one in five withdraws 2 USDT
        // (and the fee of 1) on behalf of a member: each is paid whatever the order, from the funding.
        const total = 160;
        const requests = Array.from({ length: total }, (_, i) => {
          const merchant = i % merchantCount;
          const key = randomUUID();
          const member = Math.floor(i / merchantCount) % 2 ? 'crash-a' : 'crash-b';
          if (i % 5 === 2)
            return {
              merchant,
              key,
              kind: 'member' as const,
              path: '/v1/members',
              body: { external_member_id: `crash-new-${i}` },
            };
          if (i % 5 === 4)
            return {
              merchant,
              key,
              kind: 'withdrawal' as const,
              member,
              path: '/v1/withdrawals',
              body: { asset: 'USDT', network: 'TRON', address: TRON, amount: '2' },
            };
          return {
            merchant,
            key,
            kind: 'deposit' as const,
            member,
            path: '/v1/deposits',
            body: { member_id: member, asset: 'USDT', amount: '1.25', tx_hash: `0x${randomUUID()}` },
          };
        });
        const acknowledged = new Map<number, string>();
        let next = 0;
        let killed = false;
        const send = (cs: MerchantWalletClient[], i: number) =>
          cs[requests[i]!.merchant]!.requestRaw({
            method: 'POST',
            path: requests[i]!.path,
            body: requests[i]!.body,
            idempotencyKey: requests[i]!.key,
            ...(requests[i]!.kind === 'withdrawal' ? { onBehalfOf: requests[i]!.member } : {}),
          });
        // 32 senders, each sending the next request when its previous one is answered; the kill
        // comes once 40 writes were acknowledged, with the rest in flight or still to send.
        const sender = async () => {
          while (!killed && next < total) {
            const i = next++;
            try {
              const res = await send(clients, i);
              if (res.status === 201 && !killed) acknowledged.set(i, res.body.id);
              else if (res.status !== 201) assert.fail(`request ${i} answered ${res.status} ${res.rawBody}`);
            } catch {
              // Cut by the kill: its outcome is unknown to this client.
            }
            if (acknowledged.size >= 40 && !killed) {
              killed = true;
              svc!.child.kill('SIGKILL');
            }
          }
        };
        await Promise.all(Array.from({ length: 32 }, sender));
        await svc.exited;
        svc = undefined;
        const sentBeforeKill = next;
        assert.ok(
          acknowledged.size >= 40 && sentBeforeKill < total,
          `killed after ${acknowledged.size} acknowledged, ${sentBeforeKill} sent`,
        );
        const acknowledgedKinds = new Set([...acknowledged.keys()].map((i) => requests[i]!.kind));
        assert.deepEqual([...acknowledgedKinds].sort(), ['deposit', 'member', 'withdrawal'], 'writes of every kind');
        const acknowledgedMerchants = new Set([...acknowledged.keys()].map((i) => requests[i]!.merchant));
        assert.equal(
          acknowledgedMerchants.size,
          merchantCount,
          'writes of every merchant were acknowledged before the kill',
        );

        svc = await spawnService(env);
        for (const c of clients) c.close();
        clients = clientsOf(svc);
        // Every request again, with its key: each is answered with one deposit, member or withdrawal.
        let replays = 0;
        const answers: string[] = [];
        for (let start = 0; start < total; start += 32) {
          const batch = await Promise.all(requests.slice(start, start + 32).map((_, j) => send(clients, start + j)));
          batch.forEach((res, j) => {
            assert.equal(res.status, 201, `request ${start + j} after the restart: ${res.rawBody}`);
            if (res.headers['x-idempotent-replay'] === 'true') replays++;
            answers.push(res.body.id);
          });
        }
        for (const [i, id] of acknowledged)
          assert.equal(
            answers[i],
            id,
            `acknowledged ${requests[i]!.kind} ${i} (merchant ${requests[i]!.merchant}) is the one replayed`,
          );
        assert.equal(new Set(answers).size, total, 'one deposit, member or withdrawal per request');
        assert.ok(replays >= acknowledged.size, `${replays} replays`);
        for (const [m, c] of clients.entries()) {
          const mine = requests.filter((r) => r.merchant === m);
          const toA = mine.filter((r) => r.kind === 'deposit' && r.member === 'crash-a').length;
          const fromA = mine.filter((r) => r.kind === 'withdrawal' && r.member === 'crash-a').length;
          const balances = (await c.balances.list({ onBehalfOf: 'crash-a' })) as any[];
          assert.equal(
            balances.find((b) => b.asset === 'USDT').available,
            (Number(funding) + toA * 1.25 - fromA * 3).toFixed(6),
            `merchant ${m}: crash-a's balance`,
          );
          for (const [i, r] of requests.entries()) {
            if (r.merchant !== m || r.kind !== 'member') continue;
            const member = await c.requestRaw({ method: 'GET', path: `/v1/members/${answers[i]}` });
            assert.equal(member.body.external_member_id, r.body.external_member_id, `member of request ${i}`);
          }
        }
        for (const c of clients) c.close();
        assert.equal(await svc.stop(), 0);
        svc = undefined;

        await inDatabase(async (db) => {
          for (const [m, { id }] of merchants.entries()) {
            const mine = requests.filter((r) => r.merchant === m);
            const { rows } = await sql<Record<string, string>>`
            SELECT count(*)::text AS deposits, count(DISTINCT tx_hash)::text AS hashes,
                   (SELECT count(*) FROM journal_entries j WHERE j.reference_type = 'deposit' AND j.reference_id IN
                     (SELECT id FROM deposits WHERE merchant_id = ${id}))::text AS entries,
                   (SELECT count(*) FROM members WHERE merchant_id = ${id})::text AS members,
                   (SELECT count(*) FROM withdrawals WHERE merchant_id = ${id})::text AS withdrawals,
                   (SELECT count(*) FROM journal_entries j WHERE j.reference_type = 'withdrawal' AND j.reference_id IN
                     (SELECT id FROM withdrawals WHERE merchant_id = ${id}))::text AS withdrawal_entries
            FROM deposits WHERE merchant_id = ${id}
          `.execute(db);
            // The funding: one deposit for each of the two members.
            const deposits = String(2 + mine.filter((r) => r.kind === 'deposit').length);
            const withdrawals = String(mine.filter((r) => r.kind === 'withdrawal').length);
            assert.deepEqual(
              rows[0],
              {
                deposits,
                hashes: deposits,
                entries: deposits,
                members: String(2 + mine.filter((r) => r.kind === 'member').length),
                withdrawals,
                withdrawal_entries: withdrawals,
              },
              `merchant ${m}`,
            );
          }
          const report = await verifyLedger(db);
          assert.deepEqual(report.problems, []);
          const ackMembers = [...acknowledged.keys()].filter((i) => requests[i]!.kind === 'member').length;
          console.log(
            `# group commit crash: ${merchantCount} merchants; killed after ${acknowledged.size} ` +
              `acknowledged (${ackMembers} members) of ${sentBeforeKill} sent; ${replays} of ${total} answered ` +
              `from their key after the restart`,
          );
        });
      } finally {
        svc?.child.kill('SIGKILL');
      }
    },
  );
});
