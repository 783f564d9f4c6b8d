/**
 * Issue 16, "no platform-wide hot row": the platform's accounts (settlement clearing, prepaid
 * funding, fee income, earn interest) are kept per merchant. Two merchants' QR payments, member
 * exchanges, prepaid credits and merchant conversions (fee from prepaid to the platform's fee
 * income), all through the HTTP API, land on platform rows of their own merchant, never on one
 * shared row; the ledger verifies. On PostgreSQL: one merchant's platform row held locked does not
 * stop another merchant's QR payment.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { platformTotal, verifyLedger } from '../src/money/index.js';
import { admin, newMerchantClient, useTestService, postgresOnly, instantUpstreams } from './support/service.js';
import { payNow } from './support/emv.js';

describe('platform accounts per merchant', () => {
  let service: RunningService;
  useTestService({ config: instantUpstreams, merchant: false }, (s) => ({ service } = s));

  /** A member at KYC level 1 holding 1000 USDT and 100 SGD. */
  async function member(client: MerchantWalletClient) {
    const external = `pa-${randomUUID().slice(0, 8)}`;
    const created = await client.members.create({ external_member_id: external });
    await admin(service, 'POST', `/admin/v1/members/${created.id}/kyc-review`, { decision: 'approved', level: 1 });
    await client.deposits.create({ member_id: external, asset: 'USDT', amount: '1000', tx_hash: `t-${randomUUID()}` });
    await client.deposits.create({ member_id: external, asset: 'SGD', amount: '100', tx_hash: `bank-${randomUUID()}` });
    return external;
  }
  const qrPay = (client: MerchantWalletClient, m: string, amount: string) =>
    client.requestRaw({
      method: 'POST',
      path: '/v1/qrpay/payments',
      body: { qr_code: payNow(), amount, asset: 'SGD' },
      onBehalfOf: m,
      idempotencyKey: randomUUID(),
    });

  /** Every flow of the issue that touches a platform account, for one merchant. */
  async function moveMoney(
    client: MerchantWalletClient,
    merchantId: string,
    amounts: { qr: string; exchange: string; credit: string; convert: string },
  ) {
    const m = await member(client);
    const paid = await qrPay(client, m, amounts.qr);
    assert.equal(paid.status, 201, JSON.stringify(paid.body));
    assert.equal(paid.body.status, 'completed');
    const q = await client.exchange.quote(
      { from_asset: 'USDT', to_asset: 'EUR', from_amount: amounts.exchange, lock: true },
      { onBehalfOf: m },
    );
    assert.equal((await client.exchange.execute({ quote_id: q.quote_id! }, { onBehalfOf: m })).status, 'completed');
    const credit = await admin(service, 'POST', `/admin/v1/merchants/${merchantId}/prepaid-credits`, {
      environment: 'sandbox',
      asset: 'USDT',
      amount: amounts.credit,
    });
    assert.equal(credit.status, 201, JSON.stringify(credit.body));
    const cnv = await client.exchange.convert({ from_asset: 'USDT', to_asset: 'EUR', from_amount: amounts.convert });
    assert.equal(cnv.status, 'completed');
    assert.notEqual(cnv.fee_amount, '0.000000', 'the conversion charges a fee from prepaid to the platform');
  }

  /** The platform rows as (bucket, asset) → (owner id, account id, balance). */
  async function platformRows(environment: 'sandbox' | 'production' = 'sandbox') {
    return service.ctx.db
      .selectFrom('ledger_accounts')
      .select(['id', 'owner_id', 'bucket', 'asset', 'balance'])
      .where('environment', '=', environment)
      .where('owner_type', '=', 'platform')
      .orderBy('owner_id')
      .orderBy('bucket')
      .orderBy('asset')
      .execute();
  }

  it(
    "two merchants' QR payments, exchanges, prepaid credits and conversions land on platform rows of their own " +
      'merchant; the ledger verifies',
    async () => {
      const a = await newMerchantClient(service);
      const b = await newMerchantClient(service);
      await moveMoney(a.client, a.merchantId, { qr: '12.5', exchange: '100', credit: '500', convert: '100' });
      await moveMoney(b.client, b.merchantId, { qr: '7', exchange: '50', credit: '300', convert: '40' });

      const rows = await platformRows();
      assert.deepEqual(
        rows.filter((r) => r.owner_id === ''),
        [],
        'no platform row shared by every merchant',
      );
      const of = (merchantId: string) => rows.filter((r) => r.owner_id === merchantId);
      const shape = (merchantId: string) => of(merchantId).map((r) => `${r.bucket} ${r.asset}`);
      const expected = [
        'fee_income USDT',
        'prepaid_funding EUR',
        'prepaid_funding USDT',
        'settlement_clearing EUR',
        'settlement_clearing SGD',
        'settlement_clearing USDT',
      ];
      assert.deepEqual(shape(a.merchantId), expected);
      assert.deepEqual(shape(b.merchantId), expected);
      const idsA = new Set(of(a.merchantId).map((r) => String(r.id)));
      assert.ok(
        of(b.merchantId).every((r) => !idsA.has(String(r.id))),
        'distinct rows',
      );

      // Each row holds its own merchant's money: the QR payment's amount sits on its merchant's clearing row.
      const sgdClearing = (merchantId: string) =>
        of(merchantId).find((r) => r.bucket === 'settlement_clearing' && r.asset === 'SGD')!.balance;
      assert.equal(String(sgdClearing(a.merchantId)), '-1250', 'debit-normal clearing credited with 12.50 SGD');
      assert.equal(String(sgdClearing(b.merchantId)), '-700');
      // The platform's whole balance of a bucket is the sum over its merchants' rows.
      const total = await platformTotal(service.ctx.db, 'sandbox', 'settlement_clearing', 'SGD');
      const rest = rows
        .filter(
          (r) =>
            r.bucket === 'settlement_clearing' &&
            r.asset === 'SGD' &&
            r.owner_id !== a.merchantId &&
            r.owner_id !== b.merchantId,
        )
        .reduce((s, r) => s + BigInt(r.balance), 0n);
      assert.equal(total, -1950n + rest);

      // Every posting on a merchant's platform row comes from an entry of that merchant.
      const crossed = await service.ctx.db
        .selectFrom('postings as p')
        .innerJoin('ledger_accounts as l', 'l.id', 'p.account_id')
        .innerJoin('journal_entries as e', 'e.id', 'p.entry_id')
        .select(['p.id'])
        .where('l.owner_type', '=', 'platform')
        .where((eb) => eb('e.merchant_id', 'in', [a.merchantId, b.merchantId]))
        .whereRef('l.owner_id', '!=', 'e.merchant_id')
        .execute();
      assert.deepEqual(crossed, []);
      assert.deepEqual((await verifyLedger(service.ctx.db)).problems, []);
    },
  );

  it(
    "PostgreSQL: a merchant's platform row held locked does not hold up another merchant's QR payment",
    {
      skip: postgresOnly('the embedded database runs one transaction at a time'),
    },
    async () => {
      const a = await newMerchantClient(service);
      const b = await newMerchantClient(service);
      const ma = await member(a.client);
      const mb = await member(b.client);
      assert.equal((await qrPay(a.client, ma, '1')).status, 201, 'A has its clearing row');
      assert.equal((await qrPay(b.client, mb, '1')).status, 201);
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holder = service.ctx.db.transaction().execute(async (trx) => {
        const { rows } = await sql<{
          id: string;
        }>`SELECT id FROM ledger_accounts WHERE environment = 'sandbox' AND owner_type = 'platform'
        AND owner_id = ${a.merchantId} AND bucket = 'settlement_clearing' AND asset = 'SGD' FOR UPDATE`.execute(trx);
        assert.equal(rows.length, 1);
        locked();
        await released;
      });
      await isLocked;
      let timer: NodeJS.Timeout | undefined;
      try {
        const bound = new Promise<'waited'>((resolve) => {
          timer = setTimeout(() => resolve('waited'), 20_000);
        });
        const paid = await Promise.race([qrPay(b.client, mb, '2'), bound]);
        assert.notEqual(paid, 'waited', "B's payment waited on A's platform row");
        assert.equal(paid !== 'waited' && paid.body.status, 'completed');
      } finally {
        clearTimeout(timer);
        release();
        await holder;
      }
      assert.deepEqual((await verifyLedger(service.ctx.db)).problems, []);
    },
  );
});
