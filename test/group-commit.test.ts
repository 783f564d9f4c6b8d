import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { depositLines, entryKinds, postEntry, verifyLedger, withdrawalLockLines } from '../src/money/index.js';
import { GroupCommitter } from '../src/platform/writes/group-commit.js';
import { runWriteBatch, writeAlone, type BatchEffect, type GroupedWrite } from '../src/platform/writes/write-batch.js';
import { createWriteGroup } from '../src/platform/writes/write-group.js';
import { createDeposits, type DepositPlan } from '../src/modules/deposits/service.js';
import { mapDomainError } from '../src/api-errors.js';
import { ApiError } from '../src/platform/errors.js';
import { admin, newMerchantClient, startTestService } from './support/service.js';
import { rawRequest } from './support/raw-http.js';
import { freshNonce, groupedWrite } from './support/grouped-write.js';
import { balanceOf, earnSetup, TRON } from './support/fixtures.js';
import { payNow } from './support/emv.js';

/**
 * Issue 16, group commit (docs/group-commit.md): concurrent deposits are written in shared
 * transactions, each request keeping its own idempotency result, a refusal or a failure of one
 * never failing its neighbours.
 */
describe('group commit', () => {
  let service: RunningService;
  before(async () => {
    service = await startTestService({ config: { rateLimitScale: 1_000 } });
  });
  after(async () => {
    await service.close();
  });

  const depositBody = (member: string, txHash = `0x${randomUUID()}`) => ({
    member_id: member,
    asset: 'USDT',
    amount: '1.5',
    tx_hash: txHash,
  });
  const post = (client: MerchantWalletClient, body: unknown, key = randomUUID()) =>
    client.requestRaw({ method: 'POST', path: '/v1/deposits', body, idempotencyKey: key });
  /**
   * Opens `n` kept-alive connections first, as a busy merchant's client has: requests on open
   * connections arrive together (new connections are accepted one per turn of the event loop,
   * which the embedded database's statements hold).
   */
  const warm = (client: MerchantWalletClient, n: number) =>
    Promise.all(
      Array.from({ length: n }, () => client.requestRaw({ method: 'GET', path: '/v1/deposits', query: { limit: 1 } })),
    );

  it(
    'writes concurrent deposits of one merchant in shared transactions, ' + 'each answered with its own deposit',
    async () => {
      const { client } = await newMerchantClient(service);
      await client.members.create({ external_member_id: 'gc-1' });
      await warm(client, 60);
      const before = { ...service.ctx.writeGroup.stats };
      const answers = await Promise.all(Array.from({ length: 60 }, () => post(client, depositBody('gc-1'))));
      assert.deepEqual(
        answers.map((a) => a.status),
        answers.map(() => 201),
      );
      assert.equal(new Set(answers.map((a) => a.body.id)).size, 60, 'sixty distinct deposits');
      const stats = service.ctx.writeGroup.stats;
      const batches = stats.batches - before.batches;
      assert.equal(stats.items - before.items, 60);
      assert.ok(batches < 60 && stats.largest > 1, `60 deposits in ${batches} transactions (largest ${stats.largest})`);
      const metrics = (await rawRequest(`${service.adminUrl}/metrics`)).text;
      assert.match(metrics, new RegExp(`^group_commit_writes_total ${stats.items}$`, 'm'));
      assert.match(metrics, new RegExp(`^group_commit_batches_total ${stats.batches}$`, 'm'));
      const balances = (await client.balances.list({ onBehalfOf: 'gc-1' })) as any[];
      assert.equal(balances.find((b) => b.asset === 'USDT').available, '90.000000');
      client.close();
    },
  );

  it("stores each refusal as its request's result without failing the neighbours in its batch", async () => {
    const { client } = await newMerchantClient(service);
    await client.members.create({ external_member_id: 'gc-2' });
    const taken = `0x${randomUUID()}`;
    assert.equal((await post(client, depositBody('gc-2', taken))).status, 201);
    await warm(client, 40);
    const requests = Array.from({ length: 40 }, (_, i) => {
      const body =
        i % 8 === 3 ? depositBody('no-such-member') : i % 8 === 5 ? depositBody('gc-2', taken) : depositBody('gc-2');
      return { body, key: randomUUID() };
    });
    const before = { ...service.ctx.writeGroup.stats };
    const answers = await Promise.all(requests.map((r) => post(client, r.body, r.key)));
    assert.ok(service.ctx.writeGroup.stats.batches - before.batches < 40, 'the requests shared transactions');
    answers.forEach((a, i) => {
      const expected =
        i % 8 === 3 ? [404, 'member_not_found'] : i % 8 === 5 ? [409, 'duplicate_resource'] : [201, undefined];
      assert.deepEqual([a.status, (a.body.error ?? a.body).code], expected, `request ${i}`);
    });
    // Each answer is its key's result: refusals too are replayed as they were first answered.
    for (const i of [3, 5, 0]) {
      const replay = await post(client, requests[i]!.body, requests[i]!.key);
      assert.equal(replay.status, answers[i]!.status);
      assert.equal(replay.headers['x-idempotent-replay'], 'true');
      assert.equal(replay.rawBody, answers[i]!.rawBody);
    }
    const balances = (await client.balances.list({ onBehalfOf: 'gc-2' })) as any[];
    // 1 before, 30 accepted of the 40.
    assert.equal(balances.find((b) => b.asset === 'USDT').available, '46.500000');
    client.close();
  });

  it('answers one key sent many times at once with one deposit', async () => {
    const { client } = await newMerchantClient(service);
    await client.members.create({ external_member_id: 'gc-3' });
    await warm(client, 12);
    const key = randomUUID();
    const body = depositBody('gc-3');
    const answers = await Promise.all(Array.from({ length: 12 }, () => post(client, body, key)));
    const created = answers.filter((a) => a.status === 201);
    assert.ok(created.length >= 1);
    assert.equal(new Set(created.map((a) => a.body.id)).size, 1, 'every 201 names the same deposit');
    for (const a of answers) {
      if (a.status !== 201)
        assert.deepEqual([a.status, (a.body.error ?? a.body).code], [409, 'idempotency_in_progress']);
    }
    const list = await client.requestRaw({ method: 'GET', path: '/v1/deposits', query: { member_id: 'gc-3' } });
    assert.equal(list.body.data.length, 1);
    client.close();
  });

  it(
    "consumes each deposit's nonce in its batch: one sent twice at once, or used before, is nonce_reused and " +
      "not the key's result",
    async () => {
      const { client } = await newMerchantClient(service);
      await client.members.create({ external_member_id: 'gc-n' });
      const used = randomUUID();
      assert.equal(
        (
          await client.requestRaw({
            method: 'POST',
            path: '/v1/deposits',
            body: depositBody('gc-n'),
            idempotencyKey: randomUUID(),
            nonce: used,
          })
        ).status,
        201,
      );
      await warm(client, 8);
      const twice = randomUUID();
      const requests = Array.from({ length: 8 }, (_, i) => ({
        key: randomUUID(),
        body: depositBody('gc-n'),
        nonce: i === 2 || i === 5 ? twice : i === 6 ? used : randomUUID(),
      }));
      const before = { ...service.ctx.writeGroup.stats };
      const answers = await Promise.all(
        requests.map((r) =>
          client.requestRaw({
            method: 'POST',
            path: '/v1/deposits',
            body: r.body,
            idempotencyKey: r.key,
            nonce: r.nonce,
          }),
        ),
      );
      assert.ok(service.ctx.writeGroup.stats.batches - before.batches < 8, 'the requests shared transactions');
      const codes = answers.map((a) => (a.status === 201 ? 201 : `${a.status} ${(a.body.error ?? a.body).code}`));
      assert.deepEqual(
        codes.filter((_, i) => ![2, 5].includes(i)),
        [201, 201, 201, 201, '401 nonce_reused', 201],
      );
      assert.deepEqual(
        [codes[2], codes[5]].sort(),
        [201, '401 nonce_reused'].sort() as unknown[],
        'the nonce sent twice is fresh for one of them',
      );
      // A refused nonce is not the key's result: the key goes on with a fresh nonce.
      for (const [i, a] of answers.entries()) {
        if (a.status === 201) continue;
        const retry = await post(client, requests[i]!.body, requests[i]!.key);
        assert.equal(retry.status, 201);
        assert.equal(retry.headers['x-idempotent-replay'], undefined);
      }
      // The nonces are the merchant's, whichever route consumed them.
      const member = await client.requestRaw({
        method: 'POST',
        path: '/v1/members',
        body: { external_member_id: 'gc-n-2' },
        idempotencyKey: randomUUID(),
        nonce: twice,
      });
      assert.deepEqual([member.status, (member.body.error ?? member.body).code], [401, 'nonce_reused']);
      const balances = (await client.balances.list({ onBehalfOf: 'gc-n' })) as any[];
      assert.equal(balances.find((b) => b.asset === 'USDT').available, '13.500000', 'nine deposits, one each');
      client.close();
    },
  );

  it("refuses a deposit's invalid input after its nonce and its key's result, as before grouping", async () => {
    const { client } = await newMerchantClient(service);
    await client.members.create({ external_member_id: 'gc-v' });
    const key = randomUUID();
    const nonce = randomUUID();
    const invalid = { member_id: 'gc-v', asset: 'USDT', tx_hash: `0x${randomUUID()}` };
    const send = (body: unknown, k: string, n?: string) =>
      client.requestRaw({ method: 'POST', path: '/v1/deposits', body, idempotencyKey: k, ...(n ? { nonce: n } : {}) });
    const first = await send(invalid, key, nonce);
    assert.deepEqual([first.status, (first.body.error ?? first.body).code], [400, 'invalid_request']);
    // The same key and body again: the first answer, replayed.
    const again = await send(invalid, key);
    assert.equal(again.status, 400);
    assert.equal(again.headers['x-idempotent-replay'], 'true');
    assert.equal(again.rawBody, first.rawBody);
    // Its nonce was consumed: reused, invalid input or not, it is refused as such.
    for (const body of [invalid, depositBody('gc-v')]) {
      const reused = await send(body, randomUUID(), nonce);
      assert.deepEqual([reused.status, (reused.body.error ?? reused.body).code], [401, 'nonce_reused']);
    }
    client.close();
  });

  it(
    'lets a write run again alone after its batch failed find its result, though its nonce is used, and ' +
      'nothing else',
    async () => {
      const merchantId = (await newMerchantClient(service)).merchantId;
      const key = randomUUID();
      const nonce = freshNonce(merchantId);
      const write = () =>
        groupedWrite({ merchantId, key, nonce, effect: async () => ({ status: 201, body: { key } }) });
      const run = (fallback: boolean) =>
        service.ctx.db.transaction().execute((trx) => runWriteBatch(trx, [write()], { fallback }));
      assert.deepEqual(await run(false), [{ status: 201, body: JSON.stringify({ key }) }]);
      // The same request again, as after a commit whose outcome was unknown: in a batch its nonce
      // is used; run alone as a fallback, its key answers.
      const [again] = await run(false);
      assert.ok(again && 'error' in again && (again.error as { code?: string }).code === 'nonce_reused');
      const [alone] = await run(true);
      assert.ok(alone && 'stored' in alone, 'replayed from its key');
      // Another key with that nonce (a replay of the signed bytes under a new key) finds nothing.
      const other = write();
      other.req.idempotency = { ...other.req.idempotency!, key: randomUUID() };
      const [refused] = await service.ctx.db
        .transaction()
        .execute((trx) => runWriteBatch(trx, [other], { fallback: true }));
      assert.ok(refused && 'error' in refused && (refused.error as { code?: string }).code === 'nonce_reused');
    },
  );

  it('undoes a write that fails inside a batch and commits its neighbours', async () => {
    const merchantId = (await newMerchantClient(service)).merchantId;
    const group = createWriteGroup(service.ctx.db, { maxBatch: 10, maxInFlight: 1 });
    const keys = [randomUUID(), randomUUID(), randomUUID()];
    const write = (key: string, fail: boolean) =>
      groupedWrite({
        merchantId,
        key,
        effect: async (trx) => {
          if (fail) await sql`SELECT * FROM no_such_table`.execute(trx);
          return { status: 201, body: { key } };
        },
      });
    const outcomes = await Promise.all(
      keys.map((k, i) => group.submit('', `${merchantId}|sandbox`, write(k, i === 1))),
    );
    assert.equal(group.stats.batches, 1, 'the three together');
    assert.deepEqual(outcomes[0], { status: 201, body: JSON.stringify({ key: keys[0] }) });
    assert.ok('error' in outcomes[1]!);
    assert.deepEqual(outcomes[2], { status: 201, body: JSON.stringify({ key: keys[2] }) });
    const stored = await service.ctx.db
      .selectFrom('idempotency_keys')
      .select(['key', 'status_code'])
      .where('merchant_id', '=', merchantId)
      .execute();
    assert.deepEqual(stored.map((r) => r.key).sort(), [keys[0], keys[2]].sort(), 'the failed write left no record');
  });

  it('runs a lone write without a savepoint; a refused one is undone, then run behind one and stored', async () => {
    const merchantId = (await newMerchantClient(service)).merchantId;
    await sql`CREATE TABLE IF NOT EXISTS gc_lone_probe (key text)`.execute(service.ctx.db);
    // The statements the group's transactions send, as text (Kysely hands raw SQL to plugins as fragments).
    const sent: string[] = [];
    const db = service.ctx.db.withPlugin({
      transformQuery: ({ node }) => {
        if (node.kind === 'RawNode') sent.push((node as unknown as { sqlFragments: string[] }).sqlFragments.join('?'));
        return node;
      },
      transformResult: async ({ result }) => result,
    });
    const group = createWriteGroup(db, { maxBatch: 10, maxInFlight: 1 });
    let runs = 0;
    const write = (key: string, refuse: boolean) =>
      groupedWrite({
        merchantId,
        key,
        effect: async (trx) => {
          runs++;
          await sql`INSERT INTO gc_lone_probe (key) VALUES (${key})`.execute(trx);
          if (refuse) throw new ApiError('insufficient_balance');
          return { status: 201, body: { key } };
        },
      });
    const savepoints = () => sent.filter((s) => /^\s*(SAVEPOINT|ROLLBACK TO SAVEPOINT)/.test(s)).length;

    const accepted = randomUUID();
    assert.deepEqual(await group.submit('', `${merchantId}|sandbox`, write(accepted, false)), {
      status: 201,
      body: JSON.stringify({ key: accepted }),
    });
    assert.equal(runs, 1);
    assert.equal(savepoints(), 0, 'no savepoint for a lone write that succeeds');

    const refused = randomUUID();
    const outcome = await group.submit('', `${merchantId}|sandbox`, write(refused, true));
    assert.ok('refusal' in outcome! && outcome.refusal.code === 'insufficient_balance');
    assert.equal(runs, 3, 'run bare, then again behind a savepoint');
    assert.equal(savepoints(), 2, 'the second run: its savepoint and the rollback to it');
    const probe = await sql<{
      key: string;
    }>`SELECT key FROM gc_lone_probe WHERE key IN (${accepted}, ${refused})`.execute(service.ctx.db);
    assert.deepEqual(
      probe.rows.map((r) => r.key),
      [accepted],
      'neither run of the refused write left its row',
    );
    const stored = await service.ctx.db
      .selectFrom('idempotency_keys')
      .select(['key', 'status_code'])
      .where('merchant_id', '=', merchantId)
      .orderBy('status_code')
      .execute();
    assert.deepEqual(
      stored.map((r) => [r.key, r.status_code]),
      [
        [accepted, 201],
        [refused, 400],
      ],
      "the refusal is its key's result",
    );
    await sql`DROP TABLE gc_lone_probe`.execute(service.ctx.db);
  });

  it(
    'writes an item its batch effect answers writeAlone behind its own savepoint, in its place, then gives the ' +
      'batch effect the items after it',
    async () => {
      const merchantId = (await newMerchantClient(service)).merchantId;
      const other = (await newMerchantClient(service)).merchantId;
      await sql`CREATE TABLE IF NOT EXISTS gc_alone_probe (item text)`.execute(service.ctx.db);
      // Each call of the batch effect and of a write alone, in the order they ran.
      const calls: string[] = [];
      const aloneItems = new Set(['b', 'd']);
      const batchEffect: BatchEffect = async (trx, items) => {
        calls.push(`batch ${items.join('')}`);
        const answers: Awaited<ReturnType<BatchEffect>> = [];
        for (const item of items as string[]) {
          if (aloneItems.has(item)) return [...answers, writeAlone];
          await sql`INSERT INTO gc_alone_probe (item) VALUES (${item})`.execute(trx);
          answers.push({ status: 201, body: { item } });
        }
        return answers;
      };
      const write = (item: string, merchant: string) =>
        groupedWrite({
          merchantId: merchant,
          key: randomUUID(),
          batch: { effect: batchEffect, item },
          effect: async (trx) => {
            calls.push(`alone ${item}`);
            // Written, then refused: only its savepoint can undo it.
            await sql`INSERT INTO gc_alone_probe (item) VALUES (${item})`.execute(trx);
            if (item === 'd') throw new ApiError('insufficient_balance');
            return { status: 201, body: { item } };
          },
        });
      const outcomes = await service.ctx.db
        .transaction()
        .execute((trx) =>
          runWriteBatch(trx, [
            write('a', merchantId),
            write('b', other),
            write('c', merchantId),
            write('d', merchantId),
            write('e', other),
          ]),
        );
      assert.deepEqual(calls, ['batch abcde', 'alone b', 'batch cde', 'alone d', 'batch e']);
      assert.deepEqual(
        outcomes.map((o) => ('status' in o ? JSON.parse(o.body).item : 'refusal' in o ? o.refusal.code : o)),
        ['a', 'b', 'c', 'insufficient_balance', 'e'],
      );
      const probe = await sql<{ item: string }>`SELECT item FROM gc_alone_probe ORDER BY item`.execute(service.ctx.db);
      assert.deepEqual(
        probe.rows.map((r) => r.item),
        ['a', 'b', 'c', 'e'],
        'the refused write alone was undone, nothing else',
      );
      await sql`DROP TABLE gc_alone_probe`.execute(service.ctx.db);
    },
  );

  it(
    "does not deadlock with another transaction of the merchant that holds a member's account " + '(PostgreSQL)',
    async (t) => {
      if (service.ctx.databaseKind !== 'postgres') return t.skip('one connection: transactions take turns');
      const { client, merchantId } = await newMerchantClient(service);
      const a = (await client.members.create({ external_member_id: 'gc-dl-a' })) as { id: string };
      const b = (await client.members.create({ external_member_id: 'gc-dl-b' })) as { id: string };
      assert.equal((await post(client, depositBody('gc-dl-b'))).status, 201);
      client.close();
      let held: () => void = () => {};
      const isHeld = new Promise<void>((r) => (held = r));
      let release: () => void = () => {};
      const gate = new Promise<void>((r) => (release = r));
      const base = { environment: 'sandbox' as const, merchantId, asset: 'USDT' };
      const deposit = (trx: Parameters<typeof postEntry>[0], memberId: string) =>
        postEntry(trx, {
          ...base,
          kind: entryKinds.deposit,
          referenceType: 'test',
          referenceId: randomUUID(),
          lines: depositLines({ memberId, merchantId, amount: 100n }),
        });
      // Another transaction of the merchant: it locks member b's accounts, then (later) custody.
      const other = service.ctx.db.transaction().execute(async (trx) => {
        await postEntry(trx, {
          ...base,
          kind: entryKinds.withdrawalLock,
          referenceType: 'test',
          referenceId: randomUUID(),
          lines: withdrawalLockLines({ memberId: b.id, amount: 100n, fee: 0n }),
        });
        held();
        await gate;
        await deposit(trx, b.id);
      });
      await isHeld;
      // One batch: a's deposit locks custody, b's then needs b's account.
      const group = createWriteGroup(service.ctx.db, { maxBatch: 10, maxInFlight: 1 });
      const write = (memberId: string) =>
        groupedWrite({
          merchantId,
          key: randomUUID(),
          requestId: `req_${memberId}`,
          effect: async (trx) => {
            await deposit(trx, memberId);
            return { status: 201, body: { memberId } };
          },
        });
      const batch = Promise.all([
        group.submit('', `${merchantId}|sandbox`, write(a.id)),
        group.submit('', `${merchantId}|sandbox`, write(b.id)),
      ]);
      await new Promise((r) => setTimeout(r, 300));
      release();
      // Without the merchant's write lock first (migration 031) the two wait for each other until
      // PostgreSQL's deadlock_timeout (1 s) picks one to fail.
      await other;
      const outcomes = await batch;
      assert.deepEqual(
        outcomes.map((o) => ('status' in o ? o.status : o)),
        [201, 201],
      );
      assert.deepEqual(group.stats, { batches: 1, items: 2, fallbacks: 0, largest: 2, together: 0 });
    },
  );

  it(
    'writes the deposits of several merchants in one transaction, each with its own answer, key and nonce; one ' +
      'merchant a batch with a partition per merchant',
    async () => {
      const merchants = await Promise.all(
        [0, 1, 2].map(async () => {
          const { client, merchantId } = await newMerchantClient(service);
          await client.members.create({ external_member_id: 'gc-across' });
          client.close();
          return merchantId;
        }),
      );
      const depositBatch: BatchEffect = async (trx, items) =>
        (await createDeposits(trx, items as DepositPlan[])).map((a) =>
          a instanceof Error ? (mapDomainError(a) ?? a) : { status: 201, body: a },
        );
      // The same key and the same nonce for every merchant: keys and nonces are each merchant's own.
      const write = (
        merchantId: string,
        member: string,
        key: string,
        nonce: string,
        txHash = `0x${randomUUID()}`,
      ): GroupedWrite => {
        const input = { ...depositBody(member, txHash), amount: '2' };
        return groupedWrite({
          merchantId,
          key,
          endpoint: 'POST /v1/deposits',
          requestHash: JSON.stringify(input),
          nonce: freshNonce(merchantId, nonce),
          effect: async () => {
            throw new Error('run through the batch effect');
          },
          batch: { effect: depositBatch, item: { merchantId, environment: 'sandbox', input } satisfies DepositPlan },
        });
      };
      const answerOf = (o: Awaited<ReturnType<ReturnType<typeof createWriteGroup>['submit']>>) =>
        'stored' in o
          ? 'replay'
          : 'refusal' in o
            ? (o.refusal as ApiError).code
            : 'error' in o
              ? String((o.error as ApiError).code ?? o.error)
              : 'claimed' in o
                ? 'claimed'
                : o.status;
      for (const partitioning of ['none', 'merchant'] as const) {
        const group = createWriteGroup(service.ctx.db, { maxBatch: 32, maxInFlight: 4 });
        const key = randomUUID();
        const nonce = randomUUID();
        const tx = `0x${randomUUID()}`;
        const writes = [
          ...merchants.map((m) => write(m, 'gc-across', key, nonce, tx)),
          write(merchants[1]!, 'gc-nobody', randomUUID(), randomUUID()),
          // The tx_hash of merchant 0's deposit is merchant 0's: again there, a duplicate; elsewhere new.
          write(merchants[0]!, 'gc-across', randomUUID(), randomUUID(), tx),
          write(merchants[2]!, 'gc-across', randomUUID(), nonce),
          write(merchants[2]!, 'gc-across', randomUUID(), randomUUID()),
        ];
        const outcomes = await Promise.all(
          writes.map((w) => {
            const order = `${w.req.auth!.merchantId}|sandbox`;
            return group.submit(partitioning === 'merchant' ? order : '', order, w);
          }),
        );
        assert.deepEqual(
          outcomes.map(answerOf),
          [201, 201, 201, 'member_not_found', 'duplicate_resource', 'nonce_reused', 201],
          partitioning,
        );
        assert.equal(
          group.stats.batches,
          partitioning === 'none' ? 1 : 3,
          `${partitioning}: ${JSON.stringify(group.stats)}`,
        );
        assert.equal(group.stats.fallbacks, 0);
        assert.equal(group.stats.together, 6);
        // Each merchant's key holds its own deposit.
        const stored = await service.ctx.db
          .selectFrom('idempotency_keys')
          .select(['merchant_id', 'response_body'])
          .where('key', '=', key)
          .execute();
        assert.deepEqual(stored.map((r) => r.merchant_id).sort(), [...merchants].sort());
        for (const [i, m] of merchants.entries()) {
          assert.equal(stored.find((r) => r.merchant_id === m)!.response_body, (outcomes[i] as { body: string }).body);
        }
      }
      const deposits = await Promise.all(
        merchants.map(
          async (m) =>
            (await service.ctx.db.selectFrom('deposits').select('id').where('merchant_id', '=', m).execute()).length,
        ),
      );
      assert.deepEqual(deposits, [2, 2, 4], "each merchant's deposits, from both runs");
    },
  );

  it(
    "commits withdrawals' confirms and fails of several merchants together; one withdrawal confirmed twice at once " +
      'posts once',
    async () => {
      const merchants = await Promise.all(
        [0, 1, 2].map(async (k) => {
          const { client } = await newMerchantClient(service);
          const member = `gc-w${k}`;
          await client.members.create({ external_member_id: member });
          assert.equal((await post(client, { ...depositBody(member), amount: '100' })).status, 201);
          const ids: string[] = [];
          for (const amount of ['10', '20']) {
            const w = await client.requestRaw({
              method: 'POST',
              path: '/v1/withdrawals',
              body: { asset: 'USDT', network: 'TRON', address: TRON, amount },
              idempotencyKey: randomUUID(),
              onBehalfOf: member,
            });
            assert.equal(w.status, 201);
            ids.push(w.body.id);
          }
          await warm(client, 3);
          return { client, member, ids };
        }),
      );
      const before = { ...service.ctx.writeGroup.stats };
      const move = (m: (typeof merchants)[number], id: string, action: string) =>
        m.client.requestRaw({ method: 'POST', path: `/v1/withdrawals/${id}/${action}`, idempotencyKey: randomUUID() });
      const answers = await Promise.all(
        merchants.flatMap((m) => [
          move(m, m.ids[0]!, 'confirm'),
          move(m, m.ids[0]!, 'confirm'),
          move(m, m.ids[1]!, 'fail'),
        ]),
      );
      const stats = service.ctx.writeGroup.stats;
      assert.ok(
        stats.batches - before.batches < answers.length,
        `${answers.length} moves in ${stats.batches - before.batches} transactions`,
      );
      assert.ok(stats.together - before.together > 1, 'moves were written together by their batch effects');
      for (const [k, m] of merchants.entries()) {
        const [first, second, fail] = answers.slice(3 * k, 3 * k + 3);
        assert.deepEqual([first!.status, second!.status, fail!.status], [200, 200, 200]);
        assert.deepEqual(
          [first!.body.replayed, second!.body.replayed].sort(),
          [false, true],
          'the second confirm finds the withdrawal settled',
        );
        assert.equal(fail!.body.status, 'failed');
        assert.equal(fail!.body.status_version, 2);
        const balances = (await m.client.balances.list({ onBehalfOf: m.member })) as any[];
        const usdt = balances.find((b) => b.asset === 'USDT');
        const fee = (await m.client.requestRaw({ method: 'GET', path: `/v1/withdrawals/${m.ids[0]}` })).body.fee;
        assert.equal(usdt.withdrawing, '0.000000');
        assert.equal(
          Number(usdt.available),
          100 - 10 - Number(fee),
          'the confirmed one left, the failed one came back',
        );
        const events = await service.ctx.db
          .selectFrom('events')
          .select(['type', 'status_version'])
          .where('object_id', 'in', m.ids)
          .where('type', 'in', ['withdrawal.settled', 'withdrawal.failed'])
          .execute();
        assert.deepEqual(events.map((e) => `${e.type} ${e.status_version}`).sort(), [
          'withdrawal.failed 2',
          'withdrawal.settled 2',
        ]);
      }
    },
  );

  it(
    'commits earn subscriptions and redemptions of several merchants together; a shortfall refuses only its own, ' +
      'a position redeemed twice at once is redeemed once',
    async () => {
      const setups = await Promise.all([0, 1, 2].map((k) => earnSetup(service, '100', `gc-e${k}`)));
      for (const s of setups) await warm(s.client, 4);
      const subscribe = (s: (typeof setups)[number], amount: string) =>
        s.client.requestRaw({
          method: 'POST',
          path: '/v1/earn/orders',
          body: { product_id: s.flexible.id, amount },
          idempotencyKey: randomUUID(),
          onBehalfOf: s.m,
        });
      let before = { ...service.ctx.writeGroup.stats };
      // Each member has 100: 60 and 30 fit, the 20 after them does not.
      const subscribed = await Promise.all(
        setups.flatMap((s) => [subscribe(s, '60'), subscribe(s, '30'), subscribe(s, '20')]),
      );
      let stats = service.ctx.writeGroup.stats;
      assert.ok(stats.batches - before.batches < subscribed.length, 'the subscriptions shared transactions');
      assert.ok(stats.together - before.together > 1, 'written together by their batch effect');
      const codes = subscribed.map((a) => (a.status === 201 ? 201 : `${a.status} ${(a.body.error ?? a.body).code}`));
      for (const k of [0, 1, 2])
        assert.deepEqual(
          codes.slice(3 * k, 3 * k + 3).sort(),
          [201, 201, '400 insufficient_balance'].sort() as unknown[],
          'two of three fit, whichever came first',
        );

      const redeem = (s: (typeof setups)[number], position: string) =>
        s.client.requestRaw({
          method: 'POST',
          path: `/v1/earn/positions/${position}/redeem`,
          idempotencyKey: randomUUID(),
          onBehalfOf: s.m,
        });
      before = { ...service.ctx.writeGroup.stats };
      const positions = subscribed.filter((a) => a.status === 201).map((a) => a.body.position_id as string);
      const redeemed = await Promise.all(
        setups.flatMap((s, k) => [redeem(s, positions[2 * k]!), redeem(s, positions[2 * k]!)]),
      );
      stats = service.ctx.writeGroup.stats;
      assert.ok(stats.batches - before.batches < redeemed.length, 'the redemptions shared transactions');
      for (const [k, s] of setups.entries()) {
        const pair = redeemed
          .slice(2 * k, 2 * k + 2)
          .map((a) => (a.status === 200 ? 200 : (a.body.error ?? a.body).code));
        assert.deepEqual(pair.sort(), [200, 'state_invalid'].sort() as unknown[]);
        const orders = subscribed.slice(3 * k, 3 * k + 3).filter((a) => a.status === 201);
        const [gone, kept] = orders.map((a) => Number(a.body.amount));
        assert.equal(orders[0]!.body.position_id, positions[2 * k]);
        const usdt = await balanceOf(s.client, s.m);
        assert.deepEqual([Number(usdt.earn), Number(usdt.available)], [kept, 100 - kept!], `${gone} came back once`);
      }
    },
  );

  it(
    "commits merchants' conversions together, each behind its own savepoint: a refused one after its row was " +
      'written leaves nothing, its neighbours stay',
    async () => {
      const merchants = await Promise.all(
        [0, 1, 2].map(async () => {
          const { client, merchantId } = await newMerchantClient(service);
          const credit = await admin(service, 'POST', `/admin/v1/merchants/${merchantId}/prepaid-credits`, {
            environment: 'sandbox',
            asset: 'USDT',
            amount: '100',
          });
          assert.equal(credit.status, 201);
          await warm(client, 3);
          return { client, merchantId };
        }),
      );
      const convert = (client: MerchantWalletClient, amount: string) =>
        client.requestRaw({
          method: 'POST',
          path: '/v1/merchant/conversions',
          body: { from_asset: 'USDT', to_asset: 'EUR', from_amount: amount },
          idempotencyKey: randomUUID(),
        });
      const before = { ...service.ctx.writeGroup.stats };
      // 60 and 30 fit in 100; the third (20) is refused whichever order they came in.
      const answers = await Promise.all(
        merchants.flatMap(({ client: c }) => [convert(c, '60'), convert(c, '30'), convert(c, '20')]),
      );
      const stats = service.ctx.writeGroup.stats;
      assert.ok(
        stats.batches - before.batches < answers.length,
        `${answers.length} conversions in ${stats.batches - before.batches} transactions`,
      );
      for (const [k, { client, merchantId }] of merchants.entries()) {
        const three = answers.slice(3 * k, 3 * k + 3);
        const codes = three.map((a) => (a.status === 201 ? 201 : (a.body.error ?? a.body).code));
        assert.equal(codes.filter((c) => c === 201).length, 2, JSON.stringify(codes));
        assert.ok(codes.includes('merchant_insufficient_funds'));
        const spent = three.filter((a) => a.status === 201).reduce((n, a) => n + Number(a.body.from_amount), 0);
        const balances = await client.merchant.balances();
        assert.equal(Number(balances.find((b) => b.asset === 'USDT')?.prepaid_available), 100 - spent);
        const rows = await service.ctx.db
          .selectFrom('merchant_conversions')
          .select('id')
          .where('merchant_id', '=', merchantId)
          .execute();
        assert.deepEqual(
          rows.map((r) => r.id).sort(),
          three
            .filter((a) => a.status === 201)
            .map((a) => a.body.id)
            .sort(),
          'no row of the refused one',
        );
      }
    },
  );

  it('commits QR payments of several merchants together; a shortfall refuses its own', async () => {
    const merchants = await Promise.all(
      [0, 1, 2].map(async (k) => {
        const { client } = await newMerchantClient(service);
        const member = `gc-q${k}`;
        await client.members.create({ external_member_id: member });
        const deposit = await post(client, { ...depositBody(member), asset: 'SGD', amount: '100' });
        assert.equal(deposit.status, 201, JSON.stringify(deposit.body));
        await warm(client, 3);
        return { client, member };
      }),
    );
    const pay = (m: (typeof merchants)[number], amount: string) =>
      m.client.requestRaw({
        method: 'POST',
        path: '/v1/qrpay/payments',
        body: { qr_code: payNow(), amount, asset: 'SGD' },
        idempotencyKey: randomUUID(),
        onBehalfOf: m.member,
      });
    const before = { ...service.ctx.writeGroup.stats };
    // 60 and 30 fit in 100; the third (20) is refused whichever order they came in.
    const answers = await Promise.all(merchants.flatMap((m) => [pay(m, '60'), pay(m, '30'), pay(m, '20')]));
    const stats = service.ctx.writeGroup.stats;
    assert.ok(
      stats.batches - before.batches < answers.length,
      `${answers.length} payments in ${stats.batches - before.batches} transactions`,
    );
    for (const [k, m] of merchants.entries()) {
      const three = answers.slice(3 * k, 3 * k + 3);
      const codes = three.map((a) => (a.status === 201 ? 201 : (a.body.error ?? a.body).code));
      assert.deepEqual(
        codes.filter((c) => c !== 201),
        ['insufficient_balance'],
        JSON.stringify(codes),
      );
      const spent = three.filter((a) => a.status === 201).reduce((n, a) => n + Number(a.body.amount), 0);
      const sgd = await balanceOf(m.client, m.member, 'SGD');
      assert.equal(Number(sgd.available), 100 - spent, 'two payments took their money, the third nothing');
    }
  });

  it('keeps the ledger balanced', async () => {
    const report = await verifyLedger(service.ctx.db);
    assert.deepEqual(report.problems, []);
  });
});

describe('the group committer', () => {
  /** A committer whose batches wait to be released, recording what each held. */
  function heldCommitter(options: { maxBatch: number; maxInFlight: number }) {
    type Item = { p: string; o: string; n: number };
    const running = new Set<string>();
    const batches: string[][] = [];
    const releases: Array<() => void> = [];
    const group = new GroupCommitter<Item, number>(
      {
        async runBatch(items) {
          const orders = new Set(items.map((i) => i.o));
          for (const o of orders) {
            assert.ok(!running.has(o), `order key ${o} already in a running batch`);
            running.add(o);
          }
          batches.push(items.map((i) => `${i.o}${i.n}`));
          await new Promise<void>((r) => releases.push(r));
          for (const o of orders) running.delete(o);
          return items.map((i) => i.n * 10);
        },
      },
      options,
    );
    const settle = async () => {
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    };
    /** Lets the `count` oldest running batches finish, and the committer take up what waits. */
    const release = async (count = 1) => {
      for (let i = 0; i < count; i++) releases.shift()!();
      await settle();
    };
    return {
      group,
      batches,
      release,
      settle,
      submit: (p: string, o: string, n: number) => group.submit(p, o, { p, o, n }),
    };
  }

  it(
    'takes the waiting writes of several merchants into one batch, a merchant in one running batch at most, in ' +
      'arrival order',
    async () => {
      const { group, batches, release, settle, submit } = heldCommitter({ maxBatch: 3, maxInFlight: 2 });
      // One partition (GROUP_COMMIT_PARTITION=none); the order key is the merchant.
      const answers = [
        submit('', 'a', 1),
        submit('', 'a', 2),
        submit('', 'b', 3),
        submit('', 'a', 4),
        submit('', 'c', 5),
        submit('', 'a', 6),
        submit('', 'b', 7),
      ];
      await settle();
      // What arrived in one turn is gathered whatever its merchant, three at most: a1 a2 b3; then
      // the next batch takes only merchants not running: c5 (a4, a6 and b7 wait for theirs).
      assert.deepEqual(batches, [['a1', 'a2', 'b3'], ['c5']]);
      await release();
      // a and b are free again: their writes, in the order they arrived.
      assert.deepEqual(batches.slice(2), [['a4', 'a6', 'b7']]);
      await release(2);
      assert.deepEqual(await Promise.all(answers), [10, 20, 30, 40, 50, 60, 70]);
      assert.deepEqual(group.stats, { batches: 3, items: 7, fallbacks: 0, largest: 3, together: 0 });
    },
  );

  it(
    'with a partition per merchant (GROUP_COMMIT_PARTITION=merchant) a batch holds one merchant, and gathers ' +
      'what waits',
    async () => {
      const { group, batches, release, settle, submit } = heldCommitter({ maxBatch: 3, maxInFlight: 2 });
      const own = (o: string, n: number) => submit(o, o, n);
      const answers = [own('a', 1), own('a', 2), own('b', 3), own('a', 4), own('c', 5), own('a', 6), own('a', 7)];
      await settle();
      // One merchant a batch, three at most: a1 a2 a4, then b3; c5, a6 and a7 wait (two batches run at most).
      assert.deepEqual(batches, [['a1', 'a2', 'a4'], ['b3']]);
      await release();
      // a is done, but a6 waited behind c5, which is free: c goes first.
      assert.deepEqual(batches.slice(2), [['c5']]);
      await release();
      assert.deepEqual(batches.slice(3), [['a6', 'a7']]);
      await release(2);
      assert.deepEqual(await Promise.all(answers), [10, 20, 30, 40, 50, 60, 70]);
      assert.deepEqual(group.stats, { batches: 4, items: 7, fallbacks: 0, largest: 3, together: 0 });
    },
  );

  it(
    'runs solo writes of different merchants side by side up to maxTransactions, beside the batches, ' +
      "a merchant's writes in arrival order",
    async () => {
      type Item = { o: string; n: number; solo: boolean };
      const batches: string[][] = [];
      const releases = new Map<string, () => void>();
      const group = new GroupCommitter<Item, number>(
        {
          async runBatch(items) {
            const name = items.map((i) => `${i.o}${i.n}`).join(',');
            batches.push(items.map((i) => `${i.o}${i.n}`));
            await new Promise<void>((r) => releases.set(name, r));
            return items.map((i) => i.n);
          },
        },
        { maxBatch: 5, maxInFlight: 1, maxTransactions: 3 },
      );
      const settle = async () => {
        for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      };
      const submit = (o: string, n: number, solo: boolean) => group.submit('', o, { o, n, solo }, solo);
      const answers = [
        submit('a', 1, false),
        submit('b', 2, true),
        submit('a', 3, true),
        submit('c', 4, true),
        submit('d', 5, true),
        submit('e', 6, false),
        submit('b', 7, false),
      ];
      await settle();
      // a1 and e6 are the one batch in flight (b7 waits behind b2); b2 and c4 run alone beside it
      // (three transactions in all); a3 waits for a1, d5 for a free transaction.
      assert.deepEqual(batches, [['a1', 'e6'], ['b2'], ['c4']]);
      releases.get('c4')!();
      await settle();
      // A transaction is free but no batch: d5, alone, goes before e6.
      assert.deepEqual(batches.slice(3), [['d5']]);
      releases.get('a1,e6')!();
      await settle();
      // a is free: a3 runs; b7 still waits behind b2 though no batch runs.
      assert.deepEqual(batches.slice(4), [['a3']]);
      releases.get('b2')!();
      await settle();
      assert.deepEqual(batches.slice(5), [['b7']]);
      for (const name of ['a3', 'd5', 'b7']) releases.get(name)!();
      assert.deepEqual(await Promise.all(answers), [1, 2, 3, 4, 5, 6, 7]);
    },
  );

  for (const partitioning of ['none', 'merchant'] as const)
    it(
      `keeps each merchant's writes in arrival order and in one running batch at most, whatever arrives when, ` +
        `solo writes among them (random schedules, partition ${partitioning})`,
      async () => {
        const rounds = 60;
        let mixed = 0;
        for (let round = 0; round < rounds; round++) {
          // A small random generator per round, so a failure names its seed.
          let seed = round * 7919 + (partitioning === 'none' ? 1 : 2);
          const rand = (n: number) => {
            seed = (seed * 1103515245 + 12345) % 2 ** 31;
            return seed % n;
          };
          const maxBatch = 1 + rand(5);
          const maxInFlight = 1 + rand(3);
          const maxTransactions = maxInFlight + rand(3);
          const running = new Set<string>();
          const committed = new Map<string, number[]>();
          let inFlight = 0;
          let transactions = 0;
          const group = new GroupCommitter<{ o: string; n: number; fail: boolean; solo: boolean }, string>(
            {
              async runBatch(items, fallback) {
                const orders = new Set(items.map((i) => i.o));
                assert.ok(items.length <= maxBatch, `round ${round}: a batch of ${items.length} over ${maxBatch}`);
                if (partitioning === 'merchant') assert.equal(orders.size, 1, `round ${round}: one merchant a batch`);
                if (orders.size > 1) mixed++;
                const solo = items.some((i) => i.solo);
                if (solo) assert.equal(items.length, 1, `round ${round}: a solo write in a batch of ${items.length}`);
                if (!fallback) {
                  if (!solo) assert.ok(++inFlight <= maxInFlight, `round ${round}: ${inFlight} batches at once`);
                  assert.ok(++transactions <= maxTransactions, `round ${round}: ${transactions} transactions at once`);
                  for (const o of orders) {
                    assert.ok(!running.has(o), `round ${round}: merchant ${o} in two running batches`);
                    running.add(o);
                  }
                }
                try {
                  for (let t = rand(3); t > 0; t--) await new Promise((r) => setImmediate(r));
                  if (items.length > 1 && items.some((i) => i.fail)) throw new Error('deadlock detected');
                  for (const i of items) committed.set(i.o, [...(committed.get(i.o) ?? []), i.n]);
                  return items.map((i) => `${i.o}${i.n}`);
                } finally {
                  if (!fallback) {
                    if (!solo) inFlight--;
                    transactions--;
                    for (const o of orders) running.delete(o);
                  }
                }
              },
            },
            { maxBatch, maxInFlight, maxTransactions },
          );
          const sent = new Map<string, number[]>();
          const answers: Promise<void>[] = [];
          for (let n = 0; n < 40; n++) {
            const o = `m${rand(4)}`;
            sent.set(o, [...(sent.get(o) ?? []), n]);
            const solo = rand(3) === 0;
            answers.push(
              group
                .submit(partitioning === 'merchant' ? o : '', o, { o, n, fail: rand(20) === 0, solo }, solo)
                .then((a) => assert.equal(a, `${o}${n}`)),
            );
            // Writes arrive in bursts, some in the same turn, some while batches run.
            if (rand(3) === 0) for (let t = rand(3); t >= 0; t--) await new Promise((r) => setImmediate(r));
          }
          await Promise.all(answers);
          assert.deepEqual(committed, sent, `round ${round}: every write once, each merchant's in arrival order`);
        }
        if (partitioning === 'none') assert.ok(mixed > 0, 'some batches held several merchants');
        else assert.equal(mixed, 0);
      },
    );

  it("starts a partition's next batch before it answers the writes of the batch that just committed", async () => {
    const log: string[] = [];
    const releases: Array<() => void> = [];
    const group = new GroupCommitter<number, number>(
      {
        async runBatch(items) {
          log.push(`start ${items.join(',')}`);
          await new Promise<void>((r) => releases.push(r));
          return [...items];
        },
      },
      { maxBatch: 2, maxInFlight: 1, answerAfterNextStart: true },
    );
    const answered = [1, 2, 3, 4].map((n) =>
      group.submit('', 'x', n).then((v) => {
        log.push(`answer ${v}`);
      }),
    );
    await new Promise((r) => setImmediate(r));
    releases.shift()!();
    await new Promise((r) => setImmediate(r));
    releases.shift()!();
    await Promise.all(answered);
    assert.deepEqual(log, ['start 1,2', 'start 3,4', 'answer 1', 'answer 2', 'answer 3', 'answer 4']);
  });

  it('runs the items of a batch that failed one by one', async () => {
    const seen: number[][] = [];
    const group = new GroupCommitter<number, number>(
      {
        async runBatch(items) {
          seen.push([...items]);
          if (items.length > 1) throw new Error('deadlock detected');
          if (items[0] === 2) throw new Error('this one fails alone too');
          return items.map((n) => n * 10);
        },
      },
      { maxBatch: 5, maxInFlight: 1 },
    );
    const answers = [0, 1, 2, 3].map((n) =>
      group.submit('', 'x', n).then(
        (v) => v,
        (e: Error) => e.message,
      ),
    );
    assert.deepEqual(await Promise.all(answers), [0, 10, 'this one fails alone too', 30]);
    assert.deepEqual(seen, [[0, 1, 2, 3], [0], [1], [2], [3]]);
    assert.equal(group.stats.fallbacks, 1);
  });
});
