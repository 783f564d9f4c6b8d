import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { mapDomainError } from '../src/api-errors.js';
import { ApiError } from '../src/platform/errors.js';
import {
  DuplicatePostingError,
  InsufficientFundsError,
  accountBalance,
  depositLines,
  entryKinds,
  postEntries,
  withdrawalLockLines,
} from '../src/money/index.js';
import type { EventType } from '../src/events/index.js';
import { createDeposits, type DepositPlan } from '../src/modules/deposits/service.js';
import { claimStatus, reservation } from '../src/platform/writes/idempotency.js';
import { GroupCommitter } from '../src/platform/writes/group-commit.js';
import {
  runWriteBatch,
  type BatchEffect,
  type GroupedWrite,
  type WriteGroup,
  type WriteOutcome,
} from '../src/platform/writes/write-batch.js';
import { createWriteGroup } from '../src/platform/writes/write-group.js';
import { expectLedgerClean, newMerchantClient, useTestService } from './support/service.js';
import { freshNonce, groupedWrite } from './support/grouped-write.js';

/**
 * Issue 16, group commit's batch effect (docs/group-commit.md): the deposits of one batch are
 * written in a fixed number of statements (`createDeposits`, the one implementation of a deposit
 * since issue 37), each request keeping its own answer.
 */
describe('deposits written together', () => {
  let service: RunningService;
  useTestService({ config: { rateLimitScale: 1_000 } }, (setup) => ({ service } = setup));
  // Every test leaves the ledger verifying.
  afterEach(() => expectLedgerClean(service));

  const body = (member: string, txHash = `0x${randomUUID()}`, amount = '1.5', extra: object = {}) => ({
    member_id: member,
    asset: 'USDT',
    amount,
    tx_hash: txHash,
    ...extra,
  });

  /** The route's batch effect as route.ts builds it: 201 for a deposit, the edge's mapping for a refusal. */
  const depositBatch: BatchEffect = async (trx, items) =>
    (await createDeposits(trx, items as DepositPlan[])).map((a) =>
      a instanceof Error ? (mapDomainError(a) ?? a) : { status: 201, body: a },
    );

  /** A write's own effect as route.ts builds it for a `commitMany` command: its plan as a list of one (a write run
   * again alone). */
  const depositAlone =
    (plan: DepositPlan): GroupedWrite['effect'] =>
    async (trx) => {
      try {
        const [answer] = await createDeposits(trx, [plan]);
        if (answer instanceof Error) throw answer;
        return { status: 201, body: answer };
      } catch (err) {
        throw mapDomainError(err) ?? err;
      }
    };

  /** The merchant's events of `type` (their object and member), in the order they were written. */
  const eventsOfType = (merchantId: string, type: string) =>
    service.ctx.db
      .selectFrom('events')
      .select(['object_id', 'external_member_id'])
      .where('merchant_id', '=', merchantId)
      .where('type', '=', type)
      .orderBy('seq')
      .execute();
  /** The object ids of the merchant's events of `type`, in the order they were written. */
  const eventObjectIds = async (merchantId: string, type: string) =>
    (await eventsOfType(merchantId, type)).map((e) => e.object_id);
  /** How many journal entries the merchant has. */
  const entryCount = async (merchantId: string) =>
    (await service.ctx.db.selectFrom('journal_entries').select('id').where('merchant_id', '=', merchantId).execute())
      .length;

  /** A new merchant and its member `external` (the merchant's client closed: the writes go through the group). */
  async function merchantWithOneMember(external: string) {
    const { client, merchantId } = await newMerchantClient(service);
    const m = (await client.members.create({ external_member_id: external })) as { id: string };
    client.close();
    return { merchantId, m };
  }

  /** Submitted as executeGroupedWrite does with the default partitioning (`none`): one partition, the merchant as order
   * key. */
  const submit = (group: WriteGroup, w: GroupedWrite) =>
    group.submit('', `${w.req.auth!.merchantId}|${w.req.auth!.environment}`, w);

  function writeVia(
    merchantId: string,
    input: ReturnType<typeof body>,
    key: string = randomUUID(),
    effect?: GroupedWrite['effect'],
  ): GroupedWrite {
    const item: DepositPlan = { merchantId, environment: 'sandbox', input };
    return groupedWrite({
      merchantId,
      key,
      endpoint: 'POST /v1/deposits',
      requestHash: JSON.stringify(input),
      // Signed, as every deposit: its nonce is consumed by its batch.
      nonce: freshNonce(merchantId),
      effect: effect ?? depositAlone(item),
      batch: { effect: depositBatch, item },
    });
  }

  it(
    'answers each deposit of one batch on its own: good ones, duplicates, an unknown or suspended member, a ' +
      'bad amount or asset, one key twice, a lapsed claim',
    async () => {
      const write = (merchantId: string, input: ReturnType<typeof body>, key?: string) =>
        writeVia(merchantId, input, key);
      const { client, merchantId } = await newMerchantClient(service);
      const ann = (await client.members.create({ external_member_id: 'bt-ann' })) as { id: string };
      await client.members.create({ external_member_id: 'bt-bob' });
      const gone = (await client.members.create({ external_member_id: 'bt-gone' })) as { id: string };
      assert.equal(
        (
          await client.requestRaw({
            method: 'POST',
            path: `/v1/members/${gone.id}/suspend`,
            idempotencyKey: randomUUID(),
          })
        ).status,
        200,
      );
      const taken = `0x${randomUUID()}`;
      assert.equal(
        (
          await client.requestRaw({
            method: 'POST',
            path: '/v1/deposits',
            body: body('bt-ann', taken, '100'),
            idempotencyKey: randomUUID(),
          })
        ).status,
        201,
      );
      // A key finished before the batch: found by the batch's record read.
      const doneKey = randomUUID();
      const doneBody = body('bt-bob', `0x${randomUUID()}`, '2');
      const group = createWriteGroup(service.ctx.db, { maxBatch: 32, maxInFlight: 1 });
      const first = await submit(group, write(merchantId, doneBody, doneKey));
      assert.ok('status' in first && first.status === 201);

      const twice = `0x${randomUUID()}`;
      const sharedKey = randomUUID();
      const shared = body('bt-bob', `0x${randomUUID()}`, '3');
      // A claim on a key that lapsed (its holder stopped): the same request with the key runs anew.
      const lapsedKey = randomUUID();
      const lapsedTx = `0x${randomUUID()}`;
      const lapsed = body('bt-bob', lapsedTx, '6');
      await service.ctx.db
        .insertInto('idempotency_keys')
        .values({
          merchant_id: merchantId,
          environment: 'sandbox',
          key: lapsedKey,
          endpoint: 'POST /v1/deposits',
          request_hash: JSON.stringify(lapsed),
          status_code: claimStatus,
          response_body: reservation,
        })
        .execute();
      const cases: [string, GroupedWrite, number | string][] = [
        ['good, by external id', write(merchantId, body('bt-ann', undefined, '10')), 201],
        ['good, by internal id', write(merchantId, body(ann.id, undefined, '20', { network: 'tron' })), 201],
        ['tx_hash reported before', write(merchantId, body('bt-bob', taken)), 'duplicate_resource'],
        ['unknown member', write(merchantId, body('bt-nobody')), 'member_not_found'],
        ['suspended member', write(merchantId, body(gone.id)), 'member_not_found'],
        ['a new tx_hash, first', write(merchantId, body('bt-bob', twice, '4')), 201],
        ['the same tx_hash again in the batch', write(merchantId, body('bt-ann', twice, '5')), 'duplicate_resource'],
        ['bad amount', write(merchantId, body('bt-ann', undefined, '1.1234567')), 'invalid_request'],
        ['zero amount', write(merchantId, body('bt-ann', undefined, '0')), 'invalid_request'],
        ['unknown asset', write(merchantId, { ...body('bt-ann'), asset: 'NOPE' }), 'asset_not_allowed'],
        [
          'a network without a channel',
          write(merchantId, body('bt-ann', undefined, '1', { network: 'nowhere' })),
          'asset_not_allowed',
        ],
        ['a key with a result: replayed', write(merchantId, doneBody, doneKey), 'replay'],
        ['a key with a result, another body', write(merchantId, body('bt-bob'), doneKey), 'idempotency_key_reused'],
        ['one key twice: first', write(merchantId, shared, sharedKey), 201],
        ['one key twice: second', write(merchantId, shared, sharedKey), 'replay'],
        ['good, last', write(merchantId, body('bt-bob', undefined, '30')), 201],
        ['a lapsed claim of the key', write(merchantId, lapsed, lapsedKey), 201],
        // In the batch's order: the write of the lapsed claim came first.
        ["the lapsed claim's tx_hash again", write(merchantId, body('bt-bob', lapsedTx, '7')), 'duplicate_resource'],
      ];
      const outcomes = await Promise.all(cases.map(([, w]) => submit(group, w)));
      assert.equal(group.stats.batches, 2, 'the cases in one batch');
      assert.equal(group.stats.fallbacks, 0);
      // All but the two replays and the reused key ran through the batch effect (and the lone write
      // before), in the batch's order: the lapsed claim's deposit before its tx_hash's repeat.
      assert.equal(group.stats.together, 1 + 15);

      const answerOf = (o: (typeof outcomes)[number]): number | string => {
        if ('stored' in o) return 'replay';
        if ('refusal' in o) return (o.refusal as ApiError).code;
        if ('error' in o) return o.error instanceof ApiError ? o.error.code : String(o.error);
        if ('claimed' in o) return 'claimed';
        return o.status;
      };
      cases.forEach(([name, , expected], i) => assert.equal(answerOf(outcomes[i]!), expected, name));
      const bodyOf = (i: number) => JSON.parse((outcomes[i] as { body: string }).body);
      assert.equal(bodyOf(1).network, 'TRON');
      assert.equal(bodyOf(1).member_id, ann.id);
      assert.equal(bodyOf(0).amount, '10.000000');
      // The second of one key is answered from the first's result; the finished key from its record.
      assert.equal(
        (outcomes[14] as { stored: { response_body: string } }).stored.response_body,
        (outcomes[13] as { body: string }).body,
      );
      assert.equal(
        (outcomes[11] as { stored: { response_body: string } }).stored.response_body,
        (first as { body: string }).body,
      );

      // Every answer is its key's record: the refusals too.
      const stored = await service.ctx.db
        .selectFrom('idempotency_keys')
        .select(['key', 'status_code', 'request_hash'])
        .where('merchant_id', '=', merchantId)
        .execute();
      const statusOf = new Map(stored.map((r) => [r.key, r.status_code]));
      assert.equal(statusOf.get(cases[3]![1].req.idempotency!.key), 404);
      assert.equal(statusOf.get(cases[6]![1].req.idempotency!.key), 409);
      assert.equal(statusOf.get(cases[7]![1].req.idempotency!.key), 400);
      assert.equal(statusOf.get(cases[5]![1].req.idempotency!.key), 201);
      assert.equal(statusOf.get(lapsedKey), 201, 'the lapsed claim is replaced by the result');
      assert.equal(
        stored.find((r) => r.key === doneKey)!.request_hash,
        JSON.stringify(doneBody),
        'the reused key keeps its first record',
      );

      // One deposit, one entry and one event per 201 (the two earlier ones included), nothing for a refusal.
      const deposits = await service.ctx.db
        .selectFrom('deposits')
        .select(['id', 'amount'])
        .where('merchant_id', '=', merchantId)
        .execute();
      assert.equal(deposits.length, 2 + 6);
      const entries = await service.ctx.db
        .selectFrom('journal_entries')
        .select(['reference_id'])
        .where('merchant_id', '=', merchantId)
        .execute();
      assert.deepEqual(entries.map((e) => e.reference_id).sort(), deposits.map((d) => d.id).sort());
      const events = await eventsOfType(merchantId, 'deposit.credited');
      assert.deepEqual(events.map((e) => e.object_id).sort(), deposits.map((d) => d.id).sort());
      assert.equal(events.find((e) => e.object_id === bodyOf(1).id)!.external_member_id, 'bt-ann');

      const balance = (memberId: string) =>
        accountBalance(service.ctx.db, 'sandbox', { owner: 'member', memberId, bucket: 'available' }, 'USDT');
      // ann: 100 before, 10 and 20 now (scale 6).
      assert.equal(await balance(ann.id), 130_000_000n);
      assert.equal(
        await accountBalance(service.ctx.db, 'sandbox', { owner: 'merchant', merchantId, bucket: 'custody' }, 'USDT'),
        175_000_000n,
      );
      client.close();
    },
  );

  it('runs every write of the batch on its own when the batch effect fails', async () => {
    const { merchantId } = await merchantWithOneMember('bt-fail');
    const group = createWriteGroup(service.ctx.db, { maxBatch: 8, maxInFlight: 1 });
    const failing: BatchEffect = async () => {
      throw new Error('the batch statement failed');
    };
    const failed = (effect: GroupedWrite['effect']) => {
      const w = writeVia(merchantId, body('bt-fail'), randomUUID(), effect);
      return { ...w, batch: { ...w.batch!, effect: failing } };
    };
    const writes = [1, 2, 3].map((n) => failed(async () => ({ status: 201, body: { alone: n } })));
    const outcomes = await Promise.all(writes.map((w) => submit(group, w)));
    assert.deepEqual(
      outcomes,
      [1, 2, 3].map((n) => ({ status: 201, body: JSON.stringify({ alone: n }) })),
    );
    assert.equal(group.stats.fallbacks, 1);
    // A write alone in its batch is answered with the failure (a 500, no record), as a transaction of its own.
    await assert.rejects(
      submit(
        group,
        failed(async () => ({ status: 201, body: {} })),
      ),
      /the batch statement failed/,
    );
  });

  it(
    'answers any batch of deposits of several merchants as each deposit written alone: the same answers in the ' +
      'same order, the same money moved',
    async () => {
      // Two sets of three merchants with the same members: one set has its writes committed together
      // (one batch, whatever their merchant), the other each write alone, one after another.
      const setUp = async () => {
        const { client, merchantId } = await newMerchantClient(service);
        const ids: Record<string, string> = {};
        for (const m of ['pp-1', 'pp-2', 'pp-off'])
          ids[m] = ((await client.members.create({ external_member_id: m })) as { id: string }).id;
        assert.equal(
          (
            await client.requestRaw({
              method: 'POST',
              path: `/v1/members/${ids['pp-off']}/suspend`,
              idempotencyKey: randomUUID(),
            })
          ).status,
          200,
        );
        client.close();
        return { merchantId, ids };
      };
      type Merchant = Awaited<ReturnType<typeof setUp>>;
      const together: Merchant[] = [];
      const alone: Merchant[] = [];
      for (let i = 0; i < 3; i++) {
        together.push(await setUp());
        alone.push(await setUp());
      }
      const members = ['pp-1', 'pp-2', 'pp-off', 'pp-nobody', 'internal:pp-1'] as const;
      const write = fc.record({
        merchant: fc.integer({ min: 0, max: 2 }),
        member: fc.constantFrom(...members),
        tx: fc.integer({ min: 0, max: 3 }),
        amount: fc.constantFrom('1', '2.5', '0', '1.1234567', 'x'),
        asset: fc.constantFrom('USDT', 'USDT', 'USDT', 'NOPE'),
        // The key and the nonce of an earlier write of the batch (its index, modulo), or a new one:
        // the same merchant's, or another's (then another key, and another merchant's nonce).
        sameKeyAs: fc.option(fc.nat(), { freq: 4 }),
        sameNonceAs: fc.option(fc.nat(), { freq: 6 }),
      });
      let run = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 12 }), async (batch) => {
          run++;
          const keys: string[] = [];
          const nonces: string[] = [];
          const inputs: ReturnType<typeof body>[] = [];
          for (const [i, w] of batch.entries()) {
            const earlierKey = w.sameKeyAs !== null && i > 0 ? w.sameKeyAs % i : undefined;
            const earlierNonce = w.sameNonceAs !== null && i > 0 ? w.sameNonceAs % i : undefined;
            keys.push(earlierKey !== undefined ? keys[earlierKey]! : randomUUID());
            nonces.push(earlierNonce !== undefined ? nonces[earlierNonce]! : randomUUID());
            inputs.push({ ...body(w.member, `0xpp${run}-${w.tx}`, w.amount), asset: w.asset });
          }
          const answers = async (set: Merchant[], oneByOne: boolean) => {
            const group = createWriteGroup(service.ctx.db, { maxBatch: 32, maxInFlight: 1 });
            const writes = inputs.map((input, i) => {
              const m = set[batch[i]!.merchant]!;
              const member = input.member_id.startsWith('internal:')
                ? m.ids[input.member_id.slice('internal:'.length)]!
                : input.member_id;
              const w = writeVia(m.merchantId, { ...input, member_id: member }, keys[i]);
              // The request hash names the body as sent (the member as the request named it), the same for both sets.
              w.req.idempotency!.requestHash = JSON.stringify(input);
              w.req.idempotency!.nonce!.nonce = nonces[i]!;
              return w;
            });
            let outcomes: WriteOutcome[];
            if (oneByOne) {
              outcomes = [];
              for (const w of writes) outcomes.push(await submit(group, w));
              assert.equal(group.stats.batches, writes.length);
            } else {
              outcomes = await Promise.all(writes.map((w) => submit(group, w)));
              assert.equal(group.stats.batches, 1, 'every write in one batch, whatever its merchant');
            }
            assert.equal(group.stats.fallbacks, 0);
            return outcomes.map((o) => {
              if ('stored' in o) {
                const stored = JSON.parse(o.stored.response_body);
                return `replay ${o.stored.status_code} ${o.stored.status_code === 201 ? stored.amount : stored.code}`;
              }
              if ('refusal' in o) return `refused ${(o.refusal as ApiError).code}`;
              if ('error' in o) return `error ${o.error instanceof ApiError ? o.error.code : String(o.error)}`;
              if ('claimed' in o) return 'claimed';
              return `${o.status} ${JSON.parse(o.body).amount}`;
            });
          };
          const inBatch = await answers(together, false);
          const oneByOne = await answers(alone, true);
          assert.deepEqual(inBatch, oneByOne, JSON.stringify(batch));
        }),
        { numRuns: 60 },
      );

      const balances = async (set: Merchant[]) =>
        Promise.all(
          set.map(async (m) => [
            ...(await Promise.all(
              ['pp-1', 'pp-2'].map((x) =>
                accountBalance(
                  service.ctx.db,
                  'sandbox',
                  { owner: 'member', memberId: m.ids[x]!, bucket: 'available' },
                  'USDT',
                ),
              ),
            )),
            await accountBalance(
              service.ctx.db,
              'sandbox',
              { owner: 'merchant', merchantId: m.merchantId, bucket: 'custody' },
              'USDT',
            ),
          ]),
        );
      assert.deepEqual(await balances(together), await balances(alone));
    },
  );

  it(
    'answers each write of a batch that committed but whose answer was lost from its key, and writes nothing ' +
      'twice',
    async () => {
      const { merchantId } = await merchantWithOneMember('bt-lost');
      const other = await newMerchantClient(service);
      await other.client.members.create({ external_member_id: 'bt-lost' });
      other.client.close();
      // The committer of createWriteGroup, whose first transaction commits and then loses its answer.
      let cut = true;
      const group: WriteGroup = new GroupCommitter<GroupedWrite, WriteOutcome>(
        {
          async runBatch(writes, fallback) {
            const outcomes = await service.ctx.db
              .transaction()
              .execute((trx) => runWriteBatch(trx, writes, { stats: group.stats, fallback }));
            if (cut) {
              cut = false;
              throw new Error('the connection was lost after the commit');
            }
            return outcomes;
          },
        },
        { maxBatch: 8, maxInFlight: 1 },
      );
      // Deposits of two merchants in the batch.
      const writes = [1, 2, 3, 4].map((n) =>
        writeVia(n % 2 ? merchantId : other.merchantId, body('bt-lost', undefined, String(n))),
      );
      const outcomes = await Promise.all(writes.map((w) => submit(group, w)));
      assert.equal(group.stats.batches, 1);
      assert.equal(group.stats.fallbacks, 1);
      // Each write, run again alone, finds its nonce used by the batch and its key's result stored there.
      const replayed = outcomes.map((o) => (o as { stored: { status_code: number; response_body: string } }).stored);
      assert.deepEqual(
        replayed.map((r) => r.status_code),
        [201, 201, 201, 201],
      );
      assert.deepEqual(
        replayed.map((r) => JSON.parse(r.response_body).amount),
        ['1.000000', '2.000000', '3.000000', '4.000000'],
      );
      const deposits = await service.ctx.db
        .selectFrom('deposits')
        .select('id')
        .where('merchant_id', 'in', [merchantId, other.merchantId])
        .execute();
      assert.deepEqual(deposits.map((d) => d.id).sort(), replayed.map((r) => JSON.parse(r.response_body).id).sort());
    },
  );

  it('answers concurrent HTTP deposits mixing good ones and refusals, each with its own answer', async () => {
    const { client } = await newMerchantClient(service);
    await client.members.create({ external_member_id: 'bt-http' });
    const taken = `0x${randomUUID()}`;
    const post = (c: MerchantWalletClient, b: unknown, key = randomUUID()) =>
      c.requestRaw({ method: 'POST', path: '/v1/deposits', body: b, idempotencyKey: key });
    assert.equal((await post(client, body('bt-http', taken))).status, 201);
    await Promise.all(
      Array.from({ length: 24 }, () => client.requestRaw({ method: 'GET', path: '/v1/deposits', query: { limit: 1 } })),
    );
    const twice = `0x${randomUUID()}`;
    const requests = Array.from({ length: 24 }, (_, i) => {
      const b =
        i % 6 === 1
          ? body('bt-nobody')
          : i % 6 === 2
            ? body('bt-http', taken)
            : i % 6 === 3
              ? body('bt-http', undefined, 'x')
              : i === 4 || i === 10
                ? body('bt-http', twice)
                : body('bt-http');
      return { b, key: randomUUID() };
    });
    const before = { ...service.ctx.writeGroup.stats };
    const answers = await Promise.all(requests.map((r) => post(client, r.b, r.key)));
    assert.ok(
      service.ctx.writeGroup.stats.together - before.together >= 2,
      `some deposits were written together: ${JSON.stringify([before, service.ctx.writeGroup.stats])}`,
    );
    const answerOf = (i: number) => [answers[i]!.status, (answers[i]!.body.error ?? answers[i]!.body).code];
    answers.forEach((a, i) => {
      if (i === 4 || i === 10) return;
      const expected =
        i % 6 === 1
          ? [404, 'member_not_found']
          : i % 6 === 2
            ? [409, 'duplicate_resource']
            : i % 6 === 3
              ? [400, 'invalid_request']
              : [201, undefined];
      assert.deepEqual(answerOf(i), expected, `request ${i}`);
    });
    // One tx_hash twice at once: whichever came first is the deposit.
    assert.deepEqual(
      [answerOf(4), answerOf(10)].sort((a, b) => Number(a[0]) - Number(b[0])),
      [
        [201, undefined],
        [409, 'duplicate_resource'],
      ],
    );
    // The answer is the deposit as a later read shows it, byte for byte (the member named by its external id, the
    // time).
    const read = await client.requestRaw({ method: 'GET', path: `/v1/deposits/${answers[0]!.body.id}` });
    assert.equal(read.rawBody, answers[0]!.rawBody);
    assert.match(answers[0]!.body.member_id, /^mem_/);
    // Each answer is replayed as it was first given.
    for (const i of [0, 1, 10]) {
      const replay = await post(client, requests[i]!.b, requests[i]!.key);
      assert.equal(replay.headers['x-idempotent-replay'], 'true');
      assert.equal(replay.rawBody, answers[i]!.rawBody);
    }
    const balances = (await client.balances.list({ onBehalfOf: 'bt-http' })) as any[];
    // 1 before, 24 - 4 - 4 - 4 - 1 = 11 accepted now.
    assert.equal(balances.find((b) => b.asset === 'USDT').available, '18.000000');
    client.close();
  });

  it(
    "posts many entries in one call with each entry's own answer: a shortfall and a repeat refuse only their " +
      'entry',
    async () => {
      const { merchantId, m } = await merchantWithOneMember('bt-ledger');
      const entry = (kind: string, referenceId: string, lines: ReturnType<typeof depositLines>) => ({
        environment: 'sandbox' as const,
        merchantId,
        kind,
        referenceType: 'test',
        referenceId,
        asset: 'USDT',
        lines,
      });
      const dep = randomUUID();
      const outcomes = await service.ctx.db.transaction().execute((trx) =>
        postEntries(trx, [
          { entry: entry(entryKinds.deposit, dep, depositLines({ memberId: m.id, merchantId, amount: 100n })) },
          // 150 is more than the 100 the first entry left: refused, nothing written.
          {
            entry: entry(
              entryKinds.withdrawalLock,
              randomUUID(),
              withdrawalLockLines({ memberId: m.id, amount: 150n, fee: 0n }),
            ),
          },
          {
            entry: entry(
              entryKinds.withdrawalLock,
              randomUUID(),
              withdrawalLockLines({ memberId: m.id, amount: 60n, fee: 0n }),
            ),
          },
          // Sees the 40 the third left.
          {
            entry: entry(
              entryKinds.withdrawalLock,
              randomUUID(),
              withdrawalLockLines({ memberId: m.id, amount: 50n, fee: 0n }),
            ),
          },
          { entry: entry(entryKinds.deposit, dep, depositLines({ memberId: m.id, merchantId, amount: 7n })) },
          {
            entry: entry(entryKinds.deposit, randomUUID(), depositLines({ memberId: m.id, merchantId, amount: 5n })),
            event: {
              merchantId,
              environment: 'sandbox',
              type: 'test.posted' as EventType,
              object: 'test',
              objectId: 'x1',
              externalMemberId: 'bt-ledger',
              status: 'ok',
              statusVersion: 1,
            },
          },
          {
            entry: entry(
              entryKinds.withdrawalLock,
              randomUUID(),
              withdrawalLockLines({ memberId: m.id, amount: 1_000n, fee: 0n }),
            ),
            event: {
              merchantId,
              environment: 'sandbox',
              type: 'test.posted' as EventType,
              object: 'test',
              objectId: 'x2',
              externalMemberId: 'bt-ledger',
              status: 'ok',
              statusVersion: 1,
            },
          },
        ]),
      );
      assert.ok(!(outcomes[0] instanceof Error));
      assert.ok(outcomes[1] instanceof InsufficientFundsError);
      assert.deepEqual((outcomes[1] as InsufficientFundsError).account, {
        owner: 'member',
        memberId: m.id,
        bucket: 'available',
      });
      assert.ok(!(outcomes[2] instanceof Error));
      assert.ok(outcomes[3] instanceof InsufficientFundsError);
      assert.ok(outcomes[4] instanceof DuplicatePostingError);
      assert.ok(!(outcomes[5] instanceof Error) && outcomes[5]!.eventId);
      assert.ok(outcomes[6] instanceof InsufficientFundsError);
      const balance = (bucket: 'available' | 'withdrawing') =>
        accountBalance(service.ctx.db, 'sandbox', { owner: 'member', memberId: m.id, bucket }, 'USDT');
      assert.equal(await balance('available'), 45n);
      assert.equal(await balance('withdrawing'), 60n);
      assert.deepEqual(await eventObjectIds(merchantId, 'test.posted'), ['x1'], 'a refused entry records no event');
      assert.equal(await entryCount(merchantId), 3);
    },
  );

  it('an entry requiring an earlier one posts only if that one did, and answers its refusal otherwise', async () => {
    const { merchantId, m } = await merchantWithOneMember('bt-requires');
    const entry = (kind: string, lines: ReturnType<typeof depositLines>) => ({
      environment: 'sandbox' as const,
      merchantId,
      kind,
      referenceType: 'test',
      referenceId: randomUUID(),
      asset: 'USDT',
      lines,
    });
    const lock = (amount: bigint) =>
      entry(entryKinds.withdrawalLock, withdrawalLockLines({ memberId: m.id, amount, fee: 0n }));
    const credit = (amount: bigint) => entry(entryKinds.deposit, depositLines({ memberId: m.id, merchantId, amount }));
    const event = (objectId: string) => ({
      merchantId,
      environment: 'sandbox' as const,
      type: 'test.posted' as EventType,
      object: 'test',
      objectId,
      externalMemberId: 'bt-requires',
      status: 'ok',
      statusVersion: 1,
    });
    const outcomes = await service.ctx.db.transaction().execute((trx) =>
      postEntries(trx, [
        { entry: credit(100n) },
        { entry: lock(30n) },
        // More than the 70 left: refused, and so is the credit that requires it (and the one requiring that).
        { entry: lock(500n) },
        { entry: credit(1n), requires: 1, event: event('r1') },
        { entry: credit(2n), requires: 2, event: event('r2') },
        { entry: credit(4n), requires: 4, event: event('r3') },
      ]),
    );
    assert.deepEqual(
      outcomes.map((o) => (o instanceof InsufficientFundsError ? 'short' : o instanceof Error ? o.name : 'ok')),
      ['ok', 'ok', 'short', 'ok', 'short', 'short'],
    );
    assert.equal(outcomes[4], outcomes[2], 'the refusal of the entry it requires');
    const balance = (bucket: 'available' | 'withdrawing') =>
      accountBalance(service.ctx.db, 'sandbox', { owner: 'member', memberId: m.id, bucket }, 'USDT');
    assert.deepEqual([await balance('available'), await balance('withdrawing')], [71n, 30n]);
    assert.deepEqual(await eventObjectIds(merchantId, 'test.posted'), ['r1'], 'a skipped entry records no event');
    assert.equal(await entryCount(merchantId), 3);
    await assert.rejects(
      service.ctx.db.transaction().execute((trx) => postEntries(trx, [{ entry: credit(1n), requires: 0 }])),
      /not an earlier entry/,
    );
  });

  it(
    'posts entries that only add in one insert, with the same answers: a repeat of an earlier posting or of an ' +
      'earlier entry of the call is refused alone',
    async () => {
      const { merchantId, m } = await merchantWithOneMember('bt-add');
      const deposit = (referenceId: string, amount: bigint, objectId?: string) => ({
        entry: {
          environment: 'sandbox' as const,
          merchantId,
          kind: entryKinds.deposit,
          referenceType: 'test',
          referenceId,
          asset: 'USDT',
          lines: depositLines({ memberId: m.id, merchantId, amount }),
        },
        ...(objectId
          ? {
              event: {
                merchantId,
                environment: 'sandbox' as const,
                type: 'test.added' as EventType,
                object: 'test',
                objectId,
                externalMemberId: 'bt-add',
                status: 'ok',
                statusVersion: 1,
              },
            }
          : {}),
      });
      const earlier = randomUUID();
      const post = (items: Parameters<typeof postEntries>[1]) =>
        service.ctx.db.transaction().execute((trx) => postEntries(trx, items));
      assert.ok(!((await post([deposit(earlier, 1n)]))[0] instanceof Error));
      const twice = randomUUID();
      const outcomes = await post([
        deposit(randomUUID(), 10n, 'a1'),
        deposit(earlier, 20n, 'a2'),
        deposit(twice, 30n, 'a3'),
        deposit(twice, 40n, 'a4'),
        deposit(randomUUID(), 50n, 'a5'),
      ]);
      assert.deepEqual(
        outcomes.map((o) => (o instanceof DuplicatePostingError ? 'duplicate' : o instanceof Error ? o.name : 'ok')),
        ['ok', 'duplicate', 'ok', 'duplicate', 'ok'],
      );
      assert.equal(
        await accountBalance(
          service.ctx.db,
          'sandbox',
          { owner: 'member', memberId: m.id, bucket: 'available' },
          'USDT',
        ),
        91n,
      );
      assert.deepEqual(
        await eventObjectIds(merchantId, 'test.added'),
        ['a1', 'a3', 'a5'],
        'a refused entry records no event',
      );
      assert.equal(await entryCount(merchantId), 4);
    },
  );
});
