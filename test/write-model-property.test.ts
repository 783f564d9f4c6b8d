import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { verifyLedger } from '../src/money/index.js';
import type { GroupedWrite } from '../src/platform/writes/write-batch.js';
import { admin, newMerchantClient, useTestService } from './support/service.js';
import { payNow } from './support/emv.js';
import { sepaPayee, TRON } from './support/fixtures.js';

/**
 * Issue 37, point 5: one property over every group-committed route (a command, src/platform/routes/route.ts),
 * through the HTTP API and the SDK. Any mix of merchants, members, idempotency keys (new, repeated
 * with the same body, repeated with another body, the same key named by another merchant), nonces
 * (reused too), bad items (unknown member, bad amount, unknown asset, insufficient balance, unknown
 * withdrawal or position) and refusals, sent at once so that they are batched together across
 * merchants, gives the same answers (status, error code, body with its generated ids and times
 * set aside, replay header) and moves the same money (GET /v1/balances for each member, GET
 * /v1/merchant/balances) as the same writes sent one at a time, to a second set of fresh merchants,
 * in the order the committer received them (each merchant's order: what group commit keeps).
 *
 * Routes covered: those that are commands today (`plan` + `commit`/`commitMany`): POST /v1/deposits,
 * POST /v1/members, POST /v1/withdrawals and its confirm and fail, POST /v1/earn/orders and
 * POST /v1/earn/positions/{id}/redeem.
 *
 * `WRITE_MODEL_RUNS=200` runs more cases; `WRITE_MODEL_SEED=<seed>` replays a reported one.
 */

const merchantCount = 3;
/** A nonexistent object id, the same for both sets. */
const missing = (prefix: string) => `${prefix}_00000000-0000-4000-8000-000000000000`;

type Op =
  | { kind: 'deposit'; member: string; amount: string; tx: number; asset: string }
  | { kind: 'member'; ext: string }
  | { kind: 'withdrawal'; member: string; amount: string }
  | { kind: 'confirm' | 'fail'; ref: number }
  | { kind: 'earn'; member: string; amount: string; product: 'flexible' | 'nope' }
  | { kind: 'redeem'; member: string; ref: number }
  | { kind: 'exchange'; member: string; amount: string }
  | { kind: 'qr'; member: string; amount: string }
  | { kind: 'remit'; amount: string }
  | { kind: 'topup'; amount: string }
  | { kind: 'invalid' };

interface Item {
  merchant: number;
  op: Op;
  sameKeyAs: number | null;
  sameBody: boolean;
  sameNonceAs: number | null;
}

/** What one request is, resolved against a set's merchants: the same in both sets but for the ids. */
interface Spec {
  merchant: number;
  method: 'POST';
  path: string;
  body: unknown;
  onBehalfOf?: string;
  key: ReturnType<typeof randomUUID>;
  nonce: ReturnType<typeof randomUUID>;
  /**
   * Refused by the pipeline before the committer (input the schema refuses, an unknown member on
   * behalf of whom): given a key and a nonce of its own, so its answer does not depend on its order.
   */
  isolated: boolean;
  /**
   * A command with `prepare` (an exchange market order, priced first): its nonce is consumed and its
   * key's result looked up by the pipeline when it arrives, before the batch, and its prepare may
   * refuse it before the committer. Given a key and a nonce of its own too.
   */
  prepared: boolean;
}

interface Merchant {
  merchantId: string;
  client: MerchantWalletClient;
  /** Member ids by external id. */
  ids: Map<string, string>;
  /** Withdrawals and earn positions created, in the order of the requests that created them. */
  withdrawals: string[];
  positions: string[];
  /** pa's SEPA payee and active virtual card. */
  payee: string;
  card: string;
}

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('deposit' as const),
      member: fc.constantFrom('pa', 'pb', 'pb', 'new0', 'new0', 'new1', 'nobody', 'internal:pa', 'pa-off'),
      amount: fc.constantFrom('5', '5', '2.5', '2.5', '0', '1.1234567', 'x'),
      tx: fc.integer({ min: 0, max: 2 }),
      asset: fc.constantFrom('USDT', 'USDT', 'USDT', 'USDT', 'USDT', 'NOPE'),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('member' as const), ext: fc.constantFrom('new0', 'new1', 'pa') }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('withdrawal' as const),
      member: fc.constantFrom('pa', 'pb', 'pb', 'nobody'),
      amount: fc.constantFrom('1', '4', '15', '500', '0', 'x'),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constantFrom('confirm' as const, 'fail' as const),
      ref: fc.integer({ min: 0, max: 6 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('earn' as const),
      member: fc.constantFrom('pa', 'pb'),
      amount: fc.constantFrom('1', '3', '5000'),
      product: fc.constantFrom('flexible' as const, 'flexible' as const, 'nope' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('redeem' as const),
      member: fc.constantFrom('pa', 'pb'),
      ref: fc.integer({ min: 0, max: 4 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('exchange' as const),
      // pb has no KYC: kyc_required.
      member: fc.constantFrom('pa', 'pa', 'pb'),
      amount: fc.constantFrom('2', '3', '500', '0.01', 'x'),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('qr' as const),
      member: fc.constantFrom('pa', 'pb'),
      amount: fc.constantFrom('5', '2.5', '500', '0', 'x'),
    }),
  },
  // On behalf of pa, its payee and its card.
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('remit' as const), amount: fc.constantFrom('10', '20', '5000', 'x') }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('topup' as const), amount: fc.constantFrom('10', '12', '500', '2') }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'invalid' as const }) },
);

const itemArb: fc.Arbitrary<Item> = fc.record({
  // Mostly the first merchant: a merchant's own writes are what depend on their order.
  merchant: fc.constantFrom(0, 0, 0, 1, 2),
  op: opArb,
  // About one request in four names an earlier one's key, one in eight its nonce.
  sameKeyAs: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.nat() }),
  sameBody: fc.boolean(),
  sameNonceAs: fc.oneof({ weight: 7, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.nat() }),
});

describe('one write model: any mix of batched writes answers as each write alone', () => {
  let service: RunningService;
  // The QR network simulator confirms at once: a payment's answer does not depend on timing.
  useTestService({ config: { rateLimitScale: 1_000, simulatorConfirmDelayMs: 0 } }, (setup) => {
    ({ service } = setup);
    setup.client.close();
  });

  it(
    'gives the same answers, in the same order per key and merchant, and moves the same money, as each write ' +
      'sent alone',
    { timeout: 120_000 },
    async () => {
      const setUp = async (): Promise<Merchant> => {
        const { client, merchantId } = await newMerchantClient(service);
        const ids = new Map<string, string>();
        for (const ext of ['pa', 'pb', 'pa-off'])
          ids.set(ext, ((await client.members.create({ external_member_id: ext })) as { id: string }).id);
        assert.equal(
          (
            await client.requestRaw({
              method: 'POST',
              path: `/v1/members/${ids.get('pa-off')}/suspend`,
              idempotencyKey: randomUUID(),
            })
          ).status,
          200,
        );
        // pa may exchange (KYC level 1); pb may not.
        assert.equal(
          (
            await admin(service, 'POST', `/admin/v1/members/${ids.get('pa')}/kyc-review`, {
              decision: 'approved',
              level: 1,
            })
          ).status,
          200,
        );
        for (const ext of ['pa', 'pb']) {
          for (const [asset, amount] of [
            ['USDT', ext === 'pa' ? '30' : '12'],
            ['SGD', '20'],
          ]) {
            const res = await client.requestRaw({
              method: 'POST',
              path: '/v1/deposits',
              body: { member_id: ext, asset, amount, tx_hash: `0xseed-${ext}-${asset}` },
              idempotencyKey: randomUUID(),
            });
            assert.equal(res.status, 201);
          }
        }
        const payee = await client.remittance.createPayee(sepaPayee('Anna', 'Muller'), { onBehalfOf: 'pa' });
        // A virtual card (its opening fee, 5 USDT, leaves pa 25).
        const virtual = (await client.cards.products()).find((p) => p.form_factor === 'virtual')!;
        const application = await client.cards.apply(
          { product_id: virtual.id, source_asset: 'USDT' },
          { onBehalfOf: 'pa' },
        );
        const card = (await client.cards.sandboxAdvanceApplication(application.id, 'approved')).card_id!;
        return { merchantId, client, ids, withdrawals: [], positions: [], payee: payee.id, card };
      };
      const together: Merchant[] = [];
      const alone: Merchant[] = [];
      for (let i = 0; i < merchantCount; i++) {
        together.push(await setUp());
        alone.push(await setUp());
      }
      const flexible = (await together[0]!.client.earn.products()).find((p) => p.type === 'flexible')!.id;

      const group = service.ctx.writeGroup;
      // What reaches the committer, in its order: the order each merchant's writes keep.
      let received: number[] | undefined;
      const submit = group.submit.bind(group);
      group.submit = (partition, order, write) => {
        const seq = (write as GroupedWrite).req.headers['x-test-seq'];
        if (received && typeof seq === 'string') received.push(Number(seq));
        return submit(partition, order, write);
      };
      // What each batch held: some hold several merchants.
      const runner = (
        group as unknown as {
          runner: { runBatch: (items: readonly GroupedWrite[], fallback?: boolean) => Promise<unknown[]> };
        }
      ).runner;
      const runBatch = runner.runBatch.bind(runner);
      let mixedBatches = 0;
      let largest = 0;
      runner.runBatch = (items, fallback) => {
        if (received && !fallback) {
          if (new Set(items.map((w) => w.req.auth!.merchantId)).size > 1) mixedBatches++;
          largest = Math.max(largest, items.length);
        }
        return runBatch(items, fallback);
      };

      let run = 0;
      /** How often each route answered each status and code: the mix the runs covered. */
      const tally = new Map<string, number>();
      let sent = 0;
      let committed = 0;
      try {
        await fc.assert(
          fc.asyncProperty(fc.array(itemArb, { minLength: 2, maxLength: 14 }), async (items) => {
            run++;
            const name = (ext: string) => (ext.startsWith('new') ? `n${run}-${ext}` : ext);
            // The keys and nonces: new, or an earlier request's (not an isolated one's).
            const keys: ReturnType<typeof randomUUID>[] = [];
            const nonces: ReturnType<typeof randomUUID>[] = [];
            const isolatedOp = (op: Op) =>
              op.kind === 'invalid' || (op.kind === 'withdrawal' && op.member === 'nobody');
            const preparedOp = (op: Op) => ['exchange', 'qr', 'remit', 'topup'].includes(op.kind);
            const ownKeyAndNonce = (op: Op) => isolatedOp(op) || preparedOp(op);
            const source: Item[] = [];
            for (const [i, item] of items.entries()) {
              const earlierKey = item.sameKeyAs !== null && i > 0 ? item.sameKeyAs % i : undefined;
              const earlierNonce = item.sameNonceAs !== null && i > 0 ? item.sameNonceAs % i : undefined;
              let it = item;
              let key = randomUUID();
              let nonce = randomUUID();
              if (earlierKey !== undefined && !ownKeyAndNonce(source[earlierKey]!.op)) {
                key = keys[earlierKey]!;
                // The same request again (its merchant, route and body), or another body under the key.
                if (item.sameBody) it = { ...item, merchant: source[earlierKey]!.merchant, op: source[earlierKey]!.op };
              }
              if (ownKeyAndNonce(it.op)) key = randomUUID();
              else if (earlierNonce !== undefined && !ownKeyAndNonce(source[earlierNonce]!.op))
                nonce = nonces[earlierNonce]!;
              source.push(it);
              keys.push(key);
              nonces.push(nonce);
            }

            const specOf = (set: Merchant[], i: number): Spec => {
              const { merchant, op } = source[i]!;
              const m = set[merchant]!;
              const base = {
                merchant,
                method: 'POST' as const,
                key: keys[i]!,
                nonce: nonces[i]!,
                isolated: isolatedOp(op),
                prepared: preparedOp(op),
              };
              switch (op.kind) {
                case 'deposit': {
                  const member = op.member.startsWith('internal:')
                    ? m.ids.get(op.member.slice('internal:'.length))!
                    : name(op.member);
                  return {
                    ...base,
                    path: '/v1/deposits',
                    body: { member_id: member, asset: op.asset, amount: op.amount, tx_hash: `0xw${run}-${op.tx}` },
                  };
                }
                case 'member':
                  return { ...base, path: '/v1/members', body: { external_member_id: name(op.ext) } };
                case 'withdrawal':
                  return {
                    ...base,
                    path: '/v1/withdrawals',
                    onBehalfOf: op.member,
                    body: { asset: 'USDT', network: 'TRON', address: TRON, amount: op.amount },
                  };
                case 'confirm':
                case 'fail':
                  return {
                    ...base,
                    path: `/v1/withdrawals/${m.withdrawals[op.ref] ?? missing('wdr')}/${op.kind}`,
                    body: undefined,
                  };
                case 'earn':
                  return {
                    ...base,
                    path: '/v1/earn/orders',
                    onBehalfOf: op.member,
                    body: { product_id: op.product === 'flexible' ? flexible : 'epr_nope', amount: op.amount },
                  };
                case 'redeem':
                  return {
                    ...base,
                    path: `/v1/earn/positions/${m.positions[op.ref] ?? missing('epo')}/redeem`,
                    onBehalfOf: op.member,
                    body: undefined,
                  };
                case 'exchange':
                  return {
                    ...base,
                    path: '/v1/exchange/orders',
                    onBehalfOf: op.member,
                    body: { from_asset: 'USDT', to_asset: 'EUR', from_amount: op.amount },
                  };
                case 'qr':
                  return {
                    ...base,
                    path: '/v1/qrpay/payments',
                    onBehalfOf: op.member,
                    body: { qr_code: payNow(), amount: op.amount, asset: 'SGD' },
                  };
                case 'remit':
                  return {
                    ...base,
                    path: '/v1/remittances',
                    onBehalfOf: 'pa',
                    body: { payee_id: m.payee, source_asset: 'USDT', source_amount: op.amount },
                  };
                case 'topup':
                  return {
                    ...base,
                    path: `/v1/cards/${m.card}/topups`,
                    onBehalfOf: 'pa',
                    body: { amount: op.amount, source_asset: 'USDT' },
                  };
                case 'invalid':
                  return {
                    ...base,
                    path: '/v1/deposits',
                    body: { member_id: 'pa', asset: 'USDT', tx_hash: `0xw${run}-invalid` },
                  };
              }
            };
            const send = (set: Merchant[], spec: Spec, i: number) =>
              set[spec.merchant]!.client.requestRaw({
                method: spec.method,
                path: spec.path,
                body: spec.body,
                idempotencyKey: spec.key,
                nonce: spec.nonce,
                ...(spec.onBehalfOf ? { onBehalfOf: spec.onBehalfOf } : {}),
                headers: { 'x-test-seq': String(i) },
              });
            type Raw = Awaited<ReturnType<typeof send>>;

            // Together: every request at once, on connections opened before (requests on open
            // connections arrive in one turn and share batches).
            const specsT = items.map((_, i) => specOf(together, i));
            await Promise.all(
              together.map((m, k) =>
                Promise.all(
                  specsT
                    .filter((s) => s.merchant === k)
                    .map(() => m.client.requestRaw({ method: 'GET', path: '/v1/deposits', query: { limit: 1 } })),
                ),
              ),
            );
            received = [];
            const before = { ...group.stats };
            const answersT: Raw[] = await Promise.all(specsT.map((s, i) => send(together, s, i)));
            const order = received;
            received = undefined;
            sent += group.stats.items - before.items;
            committed += group.stats.batches - before.batches;

            // Every write the pipeline let through reached the committer once (a prepared one unless its
            // prepare refused it).
            const reached = new Set(order);
            assert.equal(reached.size, order.length, 'each write reached the committer once at most');
            specsT.forEach((s, i) => {
              if (s.isolated) assert.ok(!reached.has(i), `request ${i} was to be refused before the committer`);
              else if (!s.prepared) assert.ok(reached.has(i), `request ${i} reached the committer`);
            });

            // Alone: the requests that never reached the committer, then each write in the order the
            // committer received them, one at a time.
            const answersS: Raw[] = [];
            for (const i of [...specsT.flatMap((_, j) => (reached.has(j) ? [] : [j])), ...order])
              answersS[i] = await send(alone, specOf(alone, i), i);

            const view = (answers: Raw[], set: Merchant[]) => {
              // A request id is named by the request that carried it (a replay names the first one);
              // other generated ids (`dep_<uuid>`, `pye_<digits>`: a prefix, then letters and digits) by
              // their first appearance in request order, per kind; times set aside.
              const requestOf = new Map(answers.map((a, i) => [String(a.headers['x-request-id']), `req@${i}`]));
              const names = new Map<string, string>();
              const counts = new Map<string, number>();
              return answers.map((a, i) => {
                const text = a.rawBody
                  .replace(/\b([a-z]{2,4})_(?=[0-9A-Za-z-]*\d)[0-9A-Za-z-]{8,}\b/g, (id, prefix: string) => {
                    if (requestOf.has(id)) return requestOf.get(id)!;
                    if (!names.has(id)) {
                      const n = counts.get(prefix) ?? 0;
                      counts.set(prefix, n + 1);
                      names.set(id, `${prefix}#${n}`);
                    }
                    return names.get(id)!;
                  })
                  .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<time>');
                const { merchant } = specOf(set, i);
                return (
                  `#${i} m${merchant} ${source[i]!.op.kind} ${a.status}` +
                  `${a.headers['x-idempotent-replay'] === 'true' ? ' replay' : ''} ${text}`
                );
              });
            };
            answersT.forEach((a, i) => {
              const what =
                `${source[i]!.op.kind} ${a.status}${a.status >= 400 ? ` ${(a.body.error ?? a.body).code}` : ''}` +
                `${a.headers['x-idempotent-replay'] === 'true' ? ' replay' : ''}`;
              tally.set(what, (tally.get(what) ?? 0) + 1);
            });
            const shownT = view(answersT, together);
            const shownS = view(answersS, alone);
            assert.deepEqual(
              shownT,
              shownS,
              `run ${run}, received in the order ${JSON.stringify(order)}: ${JSON.stringify(source)}`,
            );

            // The objects created, in request order, for later requests to name.
            for (const [set, answers] of [
              [together, answersT],
              [alone, answersS],
            ] as const) {
              for (const [i, a] of answers.entries()) {
                if (a.status !== 201 || a.headers['x-idempotent-replay'] === 'true') continue;
                const m = set[specOf(set, i).merchant]!;
                const op = source[i]!.op;
                if (op.kind === 'withdrawal') m.withdrawals.push(a.body.id);
                if (op.kind === 'earn') m.positions.push(a.body.position_id);
                if (op.kind === 'member') m.ids.set(a.body.external_member_id, a.body.id);
              }
            }

            // The same money: each merchant's balances, and each member's (this run's new ones too).
            const money = async (set: Merchant[]) =>
              Promise.all(
                set.map(async (m) => {
                  const merchant = (await m.client.requestRaw({ method: 'GET', path: '/v1/merchant/balances' }))
                    .rawBody;
                  const members = await Promise.all(
                    ['pa', 'pb', name('new0'), name('new1')].map(async (ext) => {
                      const res = await m.client.requestRaw({ method: 'GET', path: '/v1/balances', onBehalfOf: ext });
                      return (
                        `${ext} ${res.status} ` +
                        `${res.status === 200 ? res.rawBody : (res.body.error ?? res.body).code}`
                      );
                    }),
                  );
                  return [merchant.replace(/\d{4}-\d{2}-\d{2}T[\d:.]+Z/g, '<time>'), ...members];
                }),
              );
            const [moneyT, moneyS] = [await money(together), await money(alone)];
            assert.deepEqual(moneyT, moneyS, `run ${run}: the same money moved`);
          }),
          {
            numRuns: Number(process.env.WRITE_MODEL_RUNS ?? 22),
            // No shrinking: the runs share their merchants, so after a failed run the two sets differ
            // and every later run would fail too; the first failure is the one to read.
            endOnFailure: true,
            ...(process.env.WRITE_MODEL_SEED
              ? { seed: Number(process.env.WRITE_MODEL_SEED), path: process.env.WRITE_MODEL_PATH }
              : {}),
            examples: [
              [
                [
                  // One merchant's writes of two routes in one batch: a deposit, a member's creation, a deposit
                  // to that member (sent alone, the third finds the member; it must in a batch too).
                  {
                    merchant: 0,
                    op: { kind: 'deposit', member: 'pa', amount: '5', tx: 0, asset: 'USDT' },
                    sameKeyAs: null,
                    sameBody: false,
                    sameNonceAs: null,
                  },
                  {
                    merchant: 0,
                    op: { kind: 'member', ext: 'new0' },
                    sameKeyAs: null,
                    sameBody: false,
                    sameNonceAs: null,
                  },
                  {
                    merchant: 0,
                    op: { kind: 'deposit', member: 'new0', amount: '5', tx: 1, asset: 'USDT' },
                    sameKeyAs: null,
                    sameBody: false,
                    sameNonceAs: null,
                  },
                ],
              ],
              [
                [
                  // A withdrawal of 15 (and its fee) from pb's 12, then a deposit of 5 to pb: sent alone, the
                  // withdrawal is refused; in a batch too (the deposit came after it).
                  {
                    merchant: 0,
                    op: { kind: 'withdrawal', member: 'pb', amount: '15' },
                    sameKeyAs: null,
                    sameBody: false,
                    sameNonceAs: null,
                  },
                  {
                    merchant: 0,
                    op: { kind: 'deposit', member: 'pb', amount: '5', tx: 0, asset: 'USDT' },
                    sameKeyAs: null,
                    sameBody: false,
                    sameNonceAs: null,
                  },
                ],
              ],
            ],
            interruptAfterTimeLimit: 60_000,
            markInterruptAsFailure: true,
          },
        );
      } finally {
        group.submit = submit;
        runner.runBatch = runBatch;
        for (const m of [...together, ...alone]) m.client.close();
      }
      console.log(
        `# write model property: ${run} runs; ${sent} writes batched together in ${committed} ` +
          `batches, ${mixedBatches} of several merchants, largest ${largest}`,
      );
      console.log(
        `# answers: ${[...tally]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([k, n]) => `${k} ×${n}`)
          .join(', ')}`,
      );
      assert.ok(committed < sent, 'writes shared batches');
      assert.ok(mixedBatches > 0, 'some batches held several merchants');
      assert.deepEqual((await verifyLedger(service.ctx.db)).problems, []);
    },
  );
});
