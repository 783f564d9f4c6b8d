import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { RunningService } from '../src/server.js';
import {
  assertEntry,
  entryKinds,
  postEntry,
  verifyLedger,
  withdrawalConfirmLines,
  type EntryLine,
} from '../src/money/index.js';
import { up as migration010 } from '../src/db/migrations/010_merchant_fees_and_deposit_reads.js';
import { postAsBeforeSplit } from './support/legacy-ledger.js';
import { admin, newMerchantClient, useTestService } from './support/service.js';
import { adjustCustody, balanceOf, custodyOf, fundedMember, TRON, merchantWithMember } from './support/fixtures.js';

/**
 * Issue 9, point 5: a confirmation reduces custody by amount plus fee (the reference), the fee
 * is the merchant's income, and ledger:verify checks custody against what the members hold.
 */

const ETH_ADDR = '0x52908400098527886E0F7030069857D2E4169EE7';

const sumBy = (lines: EntryLine[], side: 'debit' | 'credit') =>
  lines.filter((l) => l.side === side).reduce((s, l) => s + l.amount, 0n);
const lineOf = (lines: EntryLine[], owner: string, bucket: string) =>
  lines.filter((l) => l.account.owner === owner && l.account.bucket === bucket).map((l) => [l.side, l.amount]);

test('rule: a confirmation credits custody with amount plus fee and recognises the fee per merchant', () => {
  const p = { memberId: 'mem_1', merchantId: 'mch_1', amount: 40_000_000n, fee: 5_000_000n };
  const lines = withdrawalConfirmLines(p);
  assert.deepEqual(lineOf(lines, 'member', 'withdrawing'), [['debit', 45_000_000n]]);
  assert.deepEqual(lineOf(lines, 'merchant', 'custody'), [['credit', 45_000_000n]]);
  assert.deepEqual(lineOf(lines, 'merchant', 'fee_income'), [['credit', 5_000_000n]]);
  assert.deepEqual(lineOf(lines, 'merchant', 'fee_retained'), [['debit', 5_000_000n]]);
  assert.equal(lines.length, 4);
  assert.equal(sumBy(lines, 'debit'), sumBy(lines, 'credit'));
  assert.ok(
    lines.every((l) => l.account.owner !== 'platform'),
    'no platform-wide row: no cross-merchant hotspot',
  );
  assert.ok(lines.every((l) => l.account.owner !== 'merchant' || l.account.merchantId === 'mch_1'));
  assertEntry({
    environment: 'sandbox',
    merchantId: 'mch_1',
    kind: entryKinds.withdrawalConfirm,
    referenceType: 'withdrawal',
    referenceId: 'wdr_1',
    asset: 'USDT',
    lines,
  });
});

test('rule: a zero fee posts no fee lines (a posting is never zero)', () => {
  const lines = withdrawalConfirmLines({ memberId: 'mem_1', merchantId: 'mch_1', amount: 7n, fee: 0n });
  assert.deepEqual(
    lines.map((l) => [l.account.owner, l.account.bucket, l.side, l.amount]),
    [
      ['member', 'withdrawing', 'debit', 7n],
      ['merchant', 'custody', 'credit', 7n],
    ],
  );
});

describe('custody over HTTP and in ledger:verify', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));

  const verify = () => admin(service, 'GET', '/admin/v1/ledger/verify');

  it('confirm drops custody (GET /v1/merchant/balances) by amount plus fee, to what the members hold', async () => {
    const { client, m } = await merchantWithMember(service);
    assert.equal((await custodyOf(client)).custody, '100.000000');
    // ETHEREUM carries a 5 USDT fee in the default catalogue.
    const w = await client.withdrawals.create(
      { asset: 'USDT', network: 'ETHEREUM', address: ETH_ADDR, amount: '40' },
      { onBehalfOf: m.external },
    );
    assert.equal(w.fee, '5.000000');
    assert.equal((await custodyOf(client)).custody, '100.000000', 'locking moves nothing out of custody');
    assert.deepEqual(await client.withdrawals.confirm(w.id), { id: w.id, status: 'settled', replayed: false });
    assert.equal((await custodyOf(client)).custody, '55.000000', '100 - (40 + 5)');
    const held = await balanceOf(client, m.external);
    assert.equal(held.total, '55.000000', 'custody equals what the member holds');
    assert.equal((await client.withdrawals.confirm(w.id)).replayed, true);
    assert.equal((await custodyOf(client)).custody, '55.000000', 'a replay posts nothing');
    const report = await verify();
    assert.equal(report.status, 200);
    assert.deepEqual(report.body.problems, []);
  });

  it('refuses a confirm that custody covers for the amount but not for amount plus fee', async () => {
    const { client, merchantId, m } = await merchantWithMember(service, '50');
    const w = await client.withdrawals.create(
      { asset: 'USDT', network: 'TRON', address: TRON, amount: '45' },
      { onBehalfOf: m.external },
    );
    // Custody 50 → 45.5: covers the amount (45), not amount plus fee (46).
    const adj = await adjustCustody(service, merchantId, 'decrease', '4.5', 'chain fee paid from custody');
    assert.equal(adj.status, 201);
    // The adjustment is kept with the operator's reason, and its journal entry names it.
    assert.match(adj.body.id, /^cad_/);
    const kept = await service.ctx.db
      .selectFrom('custody_adjustments')
      .select(['direction', 'amount', 'reason'])
      .where('id', '=', adj.body.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      [kept.direction, String(kept.amount), kept.reason],
      ['decrease', '4500000', 'chain fee paid from custody'],
    );
    const entry = await service.ctx.db
      .selectFrom('journal_entries')
      .select('kind')
      .where('reference_id', '=', adj.body.id)
      .executeTakeFirstOrThrow();
    assert.equal(entry.kind, 'custody.adjustment');
    await assert.rejects(
      client.withdrawals.confirm(w.id),
      (err: { code?: string }) => err.code === 'merchant_custody_shortfall',
    );
    assert.equal((await custodyOf(client)).custody, '45.500000');
    assert.equal((await client.withdrawals.get(w.id)).status, 'locked');
  });

  it('keeps the invariant through custody adjustments and prepaid credits (the settlement term)', async () => {
    const { client, merchantId } = await newMerchantClient(service);
    await fundedMember(client, '80');
    const adjust = (direction: 'increase' | 'decrease', amount: string) =>
      adjustCustody(service, merchantId, direction, amount, 'reconciliation');
    assert.equal((await adjust('decrease', '30')).status, 201);
    assert.equal((await adjust('increase', '5')).status, 201);
    assert.equal((await custodyOf(client)).custody, '55.000000');
    const credit = await admin(service, 'POST', `/admin/v1/merchants/${merchantId}/prepaid-credits`, {
      environment: 'sandbox',
      asset: 'USDT',
      amount: '9',
    });
    assert.equal(credit.status, 201);
    assert.deepEqual((await verify()).body.problems, []);
  });

  it(
    'ledger:verify reports custody that drifts from the members (the old confirmation rule), and migration 010 ' +
      'corrects it',
    async () => {
      const { client, merchantId, m } = await merchantWithMember(service);
      const w = await client.withdrawals.create(
        { asset: 'USDT', network: 'TRON', address: TRON, amount: '40' },
        { onBehalfOf: m.external },
      );
      // The confirmation as it was posted before: custody reduced by the amount only, the fee to the
      // platform (its shared row, as before migration 026). The entry balances, every account
      // matches its postings: only custody drifts.
      const db = service.ctx.db;
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('withdrawals')
          .set({ status: 'settled', status_version: 2 })
          .where('id', '=', w.id)
          .execute();
        await postAsBeforeSplit(trx, {
          environment: 'sandbox',
          merchantId,
          kind: entryKinds.withdrawalConfirm,
          referenceType: 'withdrawal',
          referenceId: w.id,
          asset: 'USDT',
          lines: [
            { account: { owner: 'member', memberId: m.id, bucket: 'withdrawing' }, side: 'debit', amount: 41_000_000n },
            { account: { owner: 'merchant', merchantId, bucket: 'custody' }, side: 'credit', amount: 40_000_000n },
            { account: { owner: 'platform', bucket: 'fee_income', merchantId }, side: 'credit', amount: 1_000_000n },
          ],
        });
      });
      assert.equal((await custodyOf(client)).custody, '60.000000');

      const drift = await verifyLedger(db);
      assert.equal(drift.ok, false);
      const mine = drift.problems.filter((p) => p.includes(merchantId));
      assert.deepEqual(mine, [
        `custody of merchant ${merchantId} (USDT, sandbox): 60000000, but its members hold 59000000 and its ` +
          `settlement position is 0`,
      ]);
      const viaOperator = await verify();
      assert.equal(viaOperator.body.ok, false);
      assert.ok(viaOperator.body.problems.includes(mine[0]), 'the operator endpoint runs the same check');

      await db.transaction().execute((trx) => migration010(trx as unknown as Kysely<unknown>));
      assert.equal((await custodyOf(client)).custody, '59.000000');
      const fees = await db
        .selectFrom('ledger_accounts')
        .select(['bucket', 'balance'])
        .where('owner_type', '=', 'merchant')
        .where('owner_id', '=', merchantId)
        .where('bucket', 'in', ['fee_income', 'fee_retained'])
        .orderBy('bucket')
        .execute();
      assert.deepEqual(
        fees.map((f) => [f.bucket, String(f.balance)]),
        [
          ['fee_income', '1000000'],
          ['fee_retained', '1000000'],
        ],
      );
      assert.deepEqual((await verifyLedger(db)).problems, []);
      // Run again, it finds nothing left to correct.
      await db.transaction().execute((trx) => migration010(trx as unknown as Kysely<unknown>));
      assert.equal((await custodyOf(client)).custody, '59.000000');
    },
  );

  it('ledger:verify reports a member account that belongs to no member', async () => {
    const { merchantId } = await newMerchantClient(service);
    const ghost = `mem_${randomUUID()}`;
    const db = service.ctx.db;
    await db.transaction().execute((trx) =>
      postEntry(trx, {
        environment: 'sandbox',
        merchantId,
        kind: 'deposit',
        referenceType: 'deposit',
        referenceId: `dep_${randomUUID()}`,
        asset: 'USDT',
        lines: [
          { account: { owner: 'merchant', merchantId, bucket: 'custody' }, side: 'debit', amount: 3n },
          { account: { owner: 'member', memberId: ghost, bucket: 'available' }, side: 'credit', amount: 3n },
        ],
      }),
    );
    const report = await verifyLedger(db);
    assert.ok(
      report.problems.some((p) => p.includes(`member ${ghost} available, USDT, sandbox): no such member in sandbox`)),
      report.problems.join('\n'),
    );
    assert.ok(
      report.problems.some((p) =>
        p.startsWith(`custody of merchant ${merchantId} (USDT, sandbox): 3, but its members hold 0`),
      ),
      report.problems.join('\n'),
    );
    // Once the member exists, its account is counted for its merchant and custody matches.
    await db
      .insertInto('members')
      .values({
        id: ghost,
        merchant_id: merchantId,
        environment: 'sandbox',
        external_member_id: ghost,
        profile: '{}',
        sessions_revoked_at: null,
        updated_at: new Date(),
      })
      .execute();
    assert.deepEqual(
      (await verifyLedger(db)).problems.filter((p) => p.includes(ghost) || p.includes(merchantId)),
      [],
    );
  });
});
