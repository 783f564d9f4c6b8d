import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import Fastify from 'fastify';
import type { RunningService } from '../src/server.js';
import type { ServiceContext } from '../src/service-context.js';
import { loggerOptions } from '../src/platform/telemetry/request-log.js';
import { reconcileDueOrders, reconcileJobName } from '../src/modules/qrpay/reconcile.js';
import { qrpayOrders } from '../src/modules/qrpay/apply.js';
import { reconcilePass } from '../src/provider-orders/store.js';
import { newMerchantClient, useTestService, instantUpstreams } from './support/service.js';
import { rawRequest } from './support/raw-http.js';
import { payNow } from './support/emv.js';
import { fundedMember } from './support/fixtures.js';

interface LogLine {
  level: number;
  msg: string;
  job?: string;
  attempt?: number;
  err?: { message: string };
}

/** An order whose re-query fails is logged with its job, attempt and error, and counted; it stays open for a later
 * pass. */
describe('QR payment reconciliation failures', () => {
  let service: RunningService;
  const lines: LogLine[] = [];
  const log = Fastify({
    logger: { ...loggerOptions('debug'), stream: { write: (line: string) => void lines.push(JSON.parse(line)) } },
  }).log;

  useTestService(
    {
      log,
      config: instantUpstreams,
      merchant: false,
    },
    (s) => ({ service } = s),
  );

  async function failures(): Promise<number> {
    const res = await rawRequest(`${service.adminUrl}/metrics`);
    const line = res.text.split('\n').find((l) => l.startsWith(`background_failures_total{job="${reconcileJobName}"}`));
    return line ? Number(line.split(' ').pop()) : 0;
  }

  /**
   * A new merchant whose QR provider times out, and a member of it holding 50 SGD: `pay` sends a payment of
   * `amount`, answered 504 (the order left processing).
   */
  async function timingOutPayer(prefix: string) {
    const { client } = await newMerchantClient(service);
    const { external } = await fundedMember(client, '50.00', 'SGD', { prefix, txHashPrefix: 'bank-' });
    await client.sandbox.presetUpstreamBehavior({ upstream: 'qrpay', behavior: 'timeout' });
    const pay = async (amount: string) => {
      const res = await client.requestRaw({
        method: 'POST',
        path: '/v1/qrpay/payments',
        body: { qr_code: payNow({ amount }), asset: 'SGD' },
        onBehalfOf: external,
        idempotencyKey: randomUUID(),
      });
      assert.equal(res.status, 504);
    };
    return { external, pay };
  }

  it('logs and counts each order whose re-query throws, and leaves it open', async () => {
    const { external, pay } = await timingOutPayer('r');
    await pay('5.00');
    const order = await service.ctx.db
      .selectFrom('qrpay_orders')
      .select(['id', 'check_count'])
      .where('member_id', 'in', (eb) =>
        eb.selectFrom('members').select('id').where('external_member_id', '=', external),
      )
      .executeTakeFirstOrThrow();
    await service.ctx.db
      .updateTable('qrpay_orders')
      .set({ next_check_at: sql<Date>`now()` as unknown as Date })
      .where('id', '=', order.id)
      .execute();

    // The database refuses the transaction that would apply the provider's answer.
    const db = service.ctx.db;
    const failing = new Proxy(db, {
      get(target, prop) {
        if (prop === 'transaction')
          return () => {
            throw new Error('transaction refused');
          };
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const before = await failures();
    const checked = await reconcileDueOrders({ ...service.ctx, db: failing } as ServiceContext);
    assert.ok(checked >= 1);

    const logged = lines.filter((l) => l.job === reconcileJobName && l.msg.includes(order.id));
    assert.equal(logged.length, 1);
    assert.equal(logged[0]!.level, 50);
    assert.equal(logged[0]!.attempt, order.check_count + 1);
    assert.equal(logged[0]!.err?.message, 'transaction refused');
    assert.equal(await failures(), before + 1);

    const after = await db
      .selectFrom('qrpay_orders')
      .select(['status', 'next_check_at'])
      .where('id', '=', order.id)
      .executeTakeFirstOrThrow();
    assert.equal(after.status, 'processing');
    assert.ok(
      after.next_check_at !== null && new Date(after.next_check_at).getTime() > Date.now(),
      'leased: a later pass tries again',
    );
  });

  it(
    'never lets the lease of an order still waiting in a slow pass lapse: another process never re-queries it ' +
      'at the same time',
    async () => {
      const { external, pay } = await timingOutPayer('s');
      for (let i = 0; i < 2; i++) await pay('1.00');
      const db = service.ctx.db;
      const ids = (
        await db
          .selectFrom('qrpay_orders')
          .select('id')
          .where('member_id', 'in', (eb) =>
            eb.selectFrom('members').select('id').where('external_member_id', '=', external),
          )
          .execute()
      ).map((o) => o.id);
      assert.equal(ids.length, 2);
      // Every other open order is out of the way; these two are due.
      await db
        .updateTable('qrpay_orders')
        .set({ next_check_at: sql<Date>`now() + interval '1 hour'` as unknown as Date })
        .where('id', 'not in', ids)
        .execute();
      await db
        .updateTable('qrpay_orders')
        .set({ next_check_at: sql<Date>`now()` as unknown as Date })
        .where('id', 'in', ids)
        .execute();

      // Two processes' passes with 1-second leases; each query takes 0.8 s, then reschedules its order.
      const queried: string[] = [];
      const slowQuery = async (order: { id: string }) => {
        queried.push(order.id);
        await new Promise((r) => setTimeout(r, 800));
        await db
          .updateTable('qrpay_orders')
          .set({ next_check_at: sql<Date>`now() + interval '1 hour'` as unknown as Date })
          .where('id', '=', order.id)
          .execute();
      };
      const pass = { job: reconcileJobName, batchMax: 2, leaseSeconds: 1, failureMessage: () => 'failed' };
      const first = reconcilePass(service.ctx, qrpayOrders, pass, slowQuery);
      await new Promise((r) => setTimeout(r, 1_200));
      const second = reconcilePass(service.ctx, qrpayOrders, pass, slowQuery);
      await Promise.all([first, second]);
      assert.deepEqual([...queried].sort(), [...ids].sort(), 'each order queried once');
    },
  );
});
