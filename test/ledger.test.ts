import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../src/db/connection.js';
import {
  DuplicatePostingError,
  InsufficientFundsError,
  accountBalance,
  accountSpec,
  depositLines,
  describeAccount,
  entryKinds,
  platformAccount,
  platformTotal,
  postEntry,
  prepaidChargeLines,
  prepaidCreditLines,
  refFromRow,
  verifyLedger,
  withdrawalConfirmLines,
  withdrawalFailLines,
  withdrawalLockLines,
  type EntryInput,
  type EntryLine,
} from '../src/money/index.js';
import { recordEvent } from '../src/events/index.js';
import type { EventType } from '../src/events/index.js';
import { memberBalances, merchantBalances } from '../src/modules/balances/queries.js';
// The reference's code for a shortfall is the API edge's mapping of the ledger's error.
import { insufficientFundsCode } from '../src/api-errors.js';
import { openTestDatabase } from './support/database.js';
import { postAsBeforeSplit } from './support/legacy-ledger.js';
import { postgresOnly } from './support/service.js';
import { availableOnly } from './support/fixtures.js';

let handle: DatabaseHandle;
const env = 'sandbox' as const;

before(async () => {
  handle = await openTestDatabase('mwa-ledger-');
});
after(async () => handle.close());

/** Member accounts belong to a member row (verifyLedger attributes them to its merchant). */
async function newMember(merchantId: string, environment: 'sandbox' | 'production' = env): Promise<string> {
  const id = `mem_${randomUUID()}`;
  await handle.db
    .insertInto('members')
    .values({
      id,
      merchant_id: merchantId,
      environment,
      external_member_id: id,
      profile: '{}',
      sessions_revoked_at: null,
      updated_at: new Date(),
    })
    .execute();
  return id;
}

async function ids() {
  const merchantId = `mch_${randomUUID()}`;
  await handle.db.insertInto('merchants').values({ id: merchantId, name: 'ledger test' }).execute();
  return { merchantId, memberId: await newMember(merchantId) };
}

function entry(kind: string, referenceId: string, merchantId: string, lines: EntryLine[], asset = 'USDT'): EntryInput {
  return { environment: env, merchantId, kind, referenceType: kind.split('.')[0]!, referenceId, asset, lines };
}

const post = (e: EntryInput) => handle.db.transaction().execute((trx) => postEntry(trx, e));

async function deposit(memberId: string, merchantId: string, amount: bigint, asset = 'USDT') {
  return post(
    entry(entryKinds.deposit, `dep_${randomUUID()}`, merchantId, depositLines({ memberId, merchantId, amount }), asset),
  );
}

const available = (memberId: string, asset = 'USDT') =>
  accountBalance(handle.db, env, { owner: 'member', memberId, bucket: 'available' }, asset);
const withdrawing = (memberId: string) =>
  accountBalance(handle.db, env, { owner: 'member', memberId, bucket: 'withdrawing' }, 'USDT');
const custody = (merchantId: string) =>
  accountBalance(handle.db, env, { owner: 'merchant', merchantId, bucket: 'custody' }, 'USDT');

async function entriesOf(referenceId: string) {
  return handle.db.selectFrom('journal_entries').selectAll().where('reference_id', '=', referenceId).execute();
}

test('a balanced entry posts: accounts created, balances moved, postings signed debit positive', async () => {
  const { memberId, merchantId } = await ids();
  const { entryId } = await deposit(memberId, merchantId, 12_500_000n);
  assert.match(entryId, /^jrn_[0-9a-f-]{36}$/);
  assert.equal(await available(memberId), 12_500_000n);
  assert.equal(await custody(merchantId), 12_500_000n);
  const postings = await handle.db
    .selectFrom('postings')
    .select(['amount', 'asset'])
    .where('entry_id', '=', entryId)
    .orderBy('id')
    .execute();
  assert.deepEqual(
    postings.map((p) => [String(p.amount), p.asset]),
    [
      ['12500000', 'USDT'],
      ['-12500000', 'USDT'],
    ],
  );
  const row = await handle.db
    .selectFrom('journal_entries')
    .selectAll()
    .where('id', '=', entryId)
    .executeTakeFirstOrThrow();
  assert.equal(row.kind, 'deposit');
  assert.equal(row.merchant_id, merchantId);
  assert.equal(row.asset, 'USDT');
  assert.deepEqual(await memberBalances(handle.db, env, memberId), [availableOnly('USDT', '12.500000')]);
  assert.deepEqual(await merchantBalances(handle.db, env, merchantId), [
    { asset: 'USDT', custody: '12.500000', prepaid_available: '0.000000' },
  ]);
  assert.equal((await verifyLedger(handle.db)).ok, true);
});

test('withdrawal lock, confirm and fail move amount and fee between buckets', async () => {
  const { memberId, merchantId } = await ids();
  await deposit(memberId, merchantId, 100_000_000n);
  const feeBefore = await platformTotal(handle.db, env, 'fee_income', 'USDT');
  const w1 = `wdr_${randomUUID()}`;
  const w2 = `wdr_${randomUUID()}`;
  const first = { memberId, merchantId, amount: 10_000_000n, fee: 1_000_000n };
  const second = { memberId, merchantId, amount: 20_000_000n, fee: 1_000_000n };
  const step = (kind: string, withdrawalId: string, lines: EntryLine[]) =>
    post(entry(kind, withdrawalId, merchantId, lines));
  await step(entryKinds.withdrawalLock, w1, withdrawalLockLines(first));
  await step(entryKinds.withdrawalLock, w2, withdrawalLockLines(second));
  assert.equal(await available(memberId), 68_000_000n);
  assert.equal(await withdrawing(memberId), 32_000_000n);
  await step(entryKinds.withdrawalConfirm, w1, withdrawalConfirmLines(first));
  await step(entryKinds.withdrawalFail, w2, withdrawalFailLines(second));
  assert.equal(await available(memberId), 89_000_000n);
  assert.equal(await withdrawing(memberId), 0n);
  // Custody drops by amount plus fee; the fee is the merchant's income, not the platform's.
  assert.equal(await custody(merchantId), 89_000_000n);
  assert.equal(
    await accountBalance(handle.db, env, { owner: 'merchant', merchantId, bucket: 'fee_income' }, 'USDT'),
    1_000_000n,
  );
  assert.equal(
    await accountBalance(handle.db, env, { owner: 'merchant', merchantId, bucket: 'fee_retained' }, 'USDT'),
    1_000_000n,
  );
  assert.equal((await platformTotal(handle.db, env, 'fee_income', 'USDT')) - feeBefore, 0n);
  const [balance] = await memberBalances(handle.db, env, memberId);
  assert.equal(balance!.total, '89.000000');
  assert.equal((await verifyLedger(handle.db)).ok, true);
});

test('programmer errors throw before anything is written', async () => {
  const { memberId, merchantId } = await ids();
  const m = { owner: 'member', memberId, bucket: 'available' } as const;
  const c = { owner: 'merchant', merchantId, bucket: 'custody' } as const;
  const cases: EntryLine[][] = [
    [
      { account: m, side: 'credit', amount: 5n },
      { account: c, side: 'debit', amount: 4n },
    ],
    [{ account: m, side: 'credit', amount: 5n }],
    [],
    [
      { account: m, side: 'credit', amount: 0n },
      { account: c, side: 'debit', amount: 0n },
    ],
    [
      { account: m, side: 'credit', amount: -5n },
      { account: c, side: 'debit', amount: -5n },
    ],
    [
      { account: m, side: 'credit', amount: 5 as unknown as bigint },
      { account: c, side: 'debit', amount: 5 as unknown as bigint },
    ],
    [
      { account: { owner: 'member', memberId, bucket: 'custody' } as unknown as typeof m, side: 'credit', amount: 5n },
      { account: c, side: 'debit', amount: 5n },
    ],
  ];
  for (const lines of cases) {
    const reference = `bad_${randomUUID()}`;
    await assert.rejects(
      post(entry('deposit', reference, merchantId, lines)),
      (err: unknown) =>
        err instanceof Error &&
        !(err instanceof InsufficientFundsError) &&
        !(err instanceof DuplicatePostingError) &&
        /^ledger: /.test(err.message),
    );
    assert.equal((await entriesOf(reference)).length, 0);
  }
  const accounts = await handle.db
    .selectFrom('ledger_accounts')
    .select('id')
    .where('owner_id', 'in', [memberId, merchantId])
    .execute();
  assert.equal(accounts.length, 0);
});

test(
  'insufficient funds: refused with the account named, nothing written, ' + 'and mapped to the reference codes',
  async () => {
    const { memberId, merchantId } = await ids();
    await deposit(memberId, merchantId, 5_000_000n);
    const reference = `wdr_${randomUUID()}`;
    await assert.rejects(
      post(
        entry(
          entryKinds.withdrawalLock,
          reference,
          merchantId,
          withdrawalLockLines({ memberId, amount: 4_500_000n, fee: 1_000_000n }),
        ),
      ),
      (err: unknown) => {
        assert.ok(err instanceof InsufficientFundsError);
        assert.deepEqual(err.account, { owner: 'member', memberId, bucket: 'available' });
        assert.equal(insufficientFundsCode(err), 'insufficient_balance');
        return true;
      },
    );
    assert.equal((await entriesOf(reference)).length, 0);
    assert.equal(await available(memberId), 5_000_000n);
    // Exactly the balance is fine.
    await post(
      entry(
        entryKinds.withdrawalLock,
        reference,
        merchantId,
        withdrawalLockLines({ memberId, amount: 4_000_000n, fee: 1_000_000n }),
      ),
    );
    assert.equal(await available(memberId), 0n);

    // Custody of another merchant that never received the deposit: a shortfall.
    const other = `mch_${randomUUID()}`;
    await assert.rejects(
      post(
        entry(
          entryKinds.withdrawalConfirm,
          reference,
          other,
          withdrawalConfirmLines({ memberId, merchantId: other, amount: 4_000_000n, fee: 1_000_000n }),
        ),
      ),
      (err: unknown) =>
        err instanceof InsufficientFundsError && insufficientFundsCode(err) === 'merchant_custody_shortfall',
    );
    // Merchant prepaid.
    await assert.rejects(
      post(
        entry(
          entryKinds.prepaidCharge,
          `chg_${randomUUID()}`,
          merchantId,
          prepaidChargeLines({ merchantId, amount: 1n }),
        ),
      ),
      (err: unknown) =>
        err instanceof InsufficientFundsError && insufficientFundsCode(err) === 'merchant_insufficient_funds',
    );
    assert.equal((await verifyLedger(handle.db)).ok, true);
  },
);

test('platform accounts may go negative; member and merchant accounts are refused by the database itself', async () => {
  const { memberId, merchantId } = await ids();
  const reference = `promo_${randomUUID()}`;
  // A promotional prepaid credit paid from fee income takes the platform account below zero if it is empty.
  await post(
    entry(
      'promotion',
      reference,
      merchantId,
      [
        { account: platformAccount('fee_income', merchantId), side: 'debit', amount: 10n ** 30n },
        { account: { owner: 'merchant', merchantId, bucket: 'prepaid' }, side: 'credit', amount: 10n ** 30n },
      ],
      'EUR',
    ),
  );
  assert.equal((await accountBalance(handle.db, env, platformAccount('fee_income', merchantId), 'EUR')) < 0n, true);
  await post(
    entry(
      entryKinds.prepaidCredit,
      `pre_${randomUUID()}`,
      merchantId,
      prepaidCreditLines({ merchantId, amount: 500n }),
      'EUR',
    ),
  );
  await deposit(memberId, merchantId, 700n, 'EUR');
  assert.deepEqual(await merchantBalances(handle.db, env, merchantId), [
    { asset: 'EUR', custody: '7.00', prepaid_available: '10000000000000000000000000005.00' },
  ]);
  await assert.rejects(
    sql`UPDATE ledger_accounts SET balance = -1 WHERE owner_id = ${memberId}`.execute(handle.db),
    (err: unknown) => (err as { code?: string }).code === '23514',
  );
  assert.equal(await available(memberId, 'EUR'), 700n);
  assert.equal((await verifyLedger(handle.db)).ok, true);
});

test('a movement posts once: the same kind and reference is a DuplicatePostingError, nothing written', async () => {
  const { memberId, merchantId } = await ids();
  const reference = `dep_${randomUUID()}`;
  const e = entry(entryKinds.deposit, reference, merchantId, depositLines({ memberId, merchantId, amount: 7n }));
  await post(e);
  await assert.rejects(
    post(e),
    (err: unknown) => err instanceof DuplicatePostingError && err.referenceId === reference && err.kind === 'deposit',
  );
  assert.equal(await available(memberId), 7n);
  // Even when the repeat would also overdraw, it is reported as a duplicate.
  const w = `wdr_${randomUUID()}`;
  await post(entry(entryKinds.withdrawalLock, w, merchantId, withdrawalLockLines({ memberId, amount: 7n, fee: 0n })));
  await assert.rejects(
    post(entry(entryKinds.withdrawalLock, w, merchantId, withdrawalLockLines({ memberId, amount: 7n, fee: 0n }))),
    DuplicatePostingError,
  );
  // Another kind of the same reference, or another environment, is another movement.
  await post(entry(entryKinds.withdrawalFail, w, merchantId, withdrawalFailLines({ memberId, amount: 7n, fee: 0n })));
  const liveMember = await newMember(merchantId, 'production');
  await post({
    ...e,
    environment: 'production',
    lines: depositLines({ memberId: liveMember, merchantId, amount: 7n }),
  });
  assert.equal(
    await accountBalance(
      handle.db,
      'production',
      { owner: 'member', memberId: liveMember, bucket: 'available' },
      'USDT',
    ),
    7n,
  );
  // A duplicate inside a longer transaction leaves that transaction usable.
  await handle.db.transaction().execute(async (trx) => {
    await assert.rejects(postEntry(trx, e), DuplicatePostingError);
    await postEntry(
      trx,
      entry(entryKinds.deposit, `dep_${randomUUID()}`, merchantId, depositLines({ memberId, merchantId, amount: 1n })),
    );
  });
  assert.equal(await available(memberId), 8n);
  assert.equal((await verifyLedger(handle.db)).ok, true);
});

test(
  'concurrency: 50 parallel spends of one balance never overdraw it; ' + 'exactly the accepted ones are posted',
  async () => {
    const { memberId, merchantId } = await ids();
    await deposit(memberId, merchantId, 100_000_000n);
    const spend = 3_000_000n;
    const references = Array.from({ length: 50 }, () => `wdr_${randomUUID()}`);
    const results = await Promise.allSettled(
      references.map((reference) =>
        post(
          entry(
            entryKinds.withdrawalLock,
            reference,
            merchantId,
            withdrawalLockLines({ memberId, amount: spend, fee: 0n }),
          ),
        ),
      ),
    );
    const accepted = results.filter((r) => r.status === 'fulfilled').length;
    for (const r of results)
      if (r.status === 'rejected') assert.ok(r.reason instanceof InsufficientFundsError, String(r.reason));
    assert.equal(accepted, 33);
    assert.equal(await available(memberId), 100_000_000n - 33n * spend);
    assert.equal(await withdrawing(memberId), 33n * spend);
    const posted = await handle.db
      .selectFrom('journal_entries')
      .select('reference_id')
      .where('kind', '=', entryKinds.withdrawalLock)
      .where('reference_id', 'in', references)
      .execute();
    assert.equal(posted.length, 33);
    const acceptedRefs = references.filter((_, i) => results[i]!.status === 'fulfilled').sort();
    assert.deepEqual(posted.map((p) => p.reference_id).sort(), acceptedRefs);
    assert.equal((await verifyLedger(handle.db)).ok, true);
  },
);

// The embedded database has one connection, so its transactions never overlap and cannot deadlock.
test(
  'concurrency (PostgreSQL only): crosswise transfers and parallel deposits to one custody row do not deadlock',
  {
    skip: postgresOnly('the embedded database runs one transaction at a time'),
  },
  async () => {
    const a = await ids();
    const b = { memberId: await newMember(a.merchantId) };
    const newcomers = await Promise.all(Array.from({ length: 20 }, () => newMember(a.merchantId)));
    const merchantId = a.merchantId;
    await deposit(a.memberId, merchantId, 1_000n);
    await deposit(b.memberId, merchantId, 1_000n);
    const transfer = (from: string, to: string) =>
      post(
        entry('transfer', `trf_${randomUUID()}`, merchantId, [
          { account: { owner: 'member', memberId: from, bucket: 'available' }, side: 'debit', amount: 10n },
          { account: { owner: 'member', memberId: to, bucket: 'available' }, side: 'credit', amount: 10n },
        ]),
      );
    const jobs: Array<Promise<unknown>> = [];
    for (let i = 0; i < 20; i += 1) {
      jobs.push(transfer(a.memberId, b.memberId), transfer(b.memberId, a.memberId));
      jobs.push(deposit(newcomers[i]!, merchantId, 1n));
    }
    await Promise.all(jobs);
    assert.equal(await available(a.memberId), 1_000n);
    assert.equal(await available(b.memberId), 1_000n);
    assert.equal(await custody(merchantId), 2_020n);
    assert.equal((await verifyLedger(handle.db)).ok, true);
  },
);

test('verifyLedger reports a tampered balance and an unbalanced entry', async () => {
  const { memberId, merchantId } = await ids();
  await deposit(memberId, merchantId, 50n);
  const before = await verifyLedger(handle.db);
  assert.equal(before.ok, true);
  assert.ok(before.checked.entries >= 1 && before.checked.postings >= 2 && before.checked.accounts >= 2);

  await sql`UPDATE ledger_accounts SET balance = balance + 1 WHERE owner_id = ${memberId}`.execute(handle.db);
  try {
    const report = await verifyLedger(handle.db);
    assert.equal(report.ok, false);
    assert.equal(report.problems.length, 2, report.problems.join('\n'));
    assert.match(
      report.problems[0]!,
      new RegExp(`member ${memberId} available, USDT, sandbox\\): stored balance 51, postings give 50`),
    );
    assert.equal(
      report.problems[1],
      `custody of merchant ${merchantId} (USDT, sandbox): 50, but its members hold 51 and its settlement position is 0`,
    );
  } finally {
    await sql`UPDATE ledger_accounts SET balance = balance - 1 WHERE owner_id = ${memberId}`.execute(handle.db);
  }

  const account = await handle.db
    .selectFrom('ledger_accounts')
    .select('id')
    .where('owner_id', '=', memberId)
    .executeTakeFirstOrThrow();
  const bogus = `jrn_${randomUUID()}`;
  await handle.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('journal_entries')
      .values({
        id: bogus,
        environment: env,
        kind: 'bogus',
        reference_type: 'test',
        reference_id: bogus,
        merchant_id: merchantId,
        asset: 'USDT',
      })
      .execute();
    await trx
      .insertInto('postings')
      .values({ entry_id: bogus, account_id: account.id, asset: 'USDT', amount: '-3' })
      .execute();
    await sql`UPDATE ledger_accounts SET balance = balance + 3 WHERE id = ${account.id}`.execute(trx);
  });
  try {
    const report = await verifyLedger(handle.db);
    assert.equal(report.ok, false);
    assert.ok(
      report.problems.some((p) => p.startsWith(`entry ${bogus}: 1 postings summing to -3`)),
      report.problems.join('\n'),
    );
    assert.ok(
      report.problems.some((p) => /^asset USDT in sandbox: postings sum to -3/.test(p)),
      report.problems.join('\n'),
    );
  } finally {
    await handle.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('postings').where('entry_id', '=', bogus).execute();
      await trx.deleteFrom('journal_entries').where('id', '=', bogus).execute();
      await sql`UPDATE ledger_accounts SET balance = balance - 3 WHERE id = ${account.id}`.execute(trx);
    });
  }
  assert.equal((await verifyLedger(handle.db)).ok, true);
});

test('recordEvent writes an outbox row with livemode from the environment', async () => {
  const { merchantId } = await ids();
  const objectId = `wdr_${randomUUID()}`;
  const [sandboxId, liveId] = await handle.db.transaction().execute(async (trx) => [
    await recordEvent(trx, {
      merchantId,
      environment: 'sandbox',
      type: 'withdrawal.settled',
      object: 'withdrawal',
      objectId,
      externalMemberId: 'ext-1',
      status: 'settled',
      statusVersion: 2,
    }),
    await recordEvent(trx, {
      merchantId,
      environment: 'production',
      type: 'withdrawal.settled',
      object: 'withdrawal',
      objectId,
      externalMemberId: null,
      status: 'settled',
      statusVersion: 2,
    }),
  ]);
  assert.match(sandboxId!, /^evt_[0-9a-f-]{36}$/);
  const rows = await handle.db
    .selectFrom('events')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('seq')
    .execute();
  assert.deepEqual(
    rows.map((r) => [r.id, r.environment, r.livemode, r.external_member_id, r.status_version, r.object_id]),
    [
      [sandboxId, 'sandbox', false, 'ext-1', 2, objectId],
      [liveId, 'production', true, '', 2, objectId],
    ],
  );
  await assert.rejects(
    recordEvent(handle.db, {
      merchantId,
      environment: 'sandbox',
      type: 't' as EventType,
      object: 'o',
      objectId,
      externalMemberId: '',
      status: 's',
      statusVersion: -1,
    }),
  );
});

test('balances list only enabled assets the owner has an account in, by code', async () => {
  const { memberId, merchantId } = await ids();
  await deposit(memberId, merchantId, 123n, 'USD');
  await deposit(memberId, merchantId, 1n, 'BTC');
  const list = await memberBalances(handle.db, env, memberId);
  assert.deepEqual(
    list.map((b) => [b.asset, b.available, b.total]),
    [
      ['BTC', '0.00000001', '0.00000001'],
      ['USD', '1.23', '1.23'],
    ],
  );
  assert.deepEqual(await memberBalances(handle.db, 'production', memberId), []);
  assert.equal(
    await accountBalance(handle.db, env, { owner: 'member', memberId, bucket: 'card', cardId: cardA }, 'USD'),
    0n,
  );
});

const cardA = 'crd_00000000-0000-4000-8000-00000000000a';
const cardB = 'crd_00000000-0000-4000-8000-00000000000b';

test("a card's money is its own pair of accounts; the member's card bucket is their sum", async () => {
  const { memberId, merchantId } = await ids();
  await deposit(memberId, merchantId, 1000n, 'USD');
  const available = { owner: 'member', memberId, bucket: 'available' } as const;
  await handle.db.transaction().execute((trx) =>
    postEntry(trx, {
      environment: env,
      merchantId,
      asset: 'USD',
      kind: 'test.card',
      referenceType: 'test',
      referenceId: `card-${memberId}`,
      lines: [
        { account: available, side: 'debit', amount: 700n },
        { account: { owner: 'member', memberId, bucket: 'card', cardId: cardA }, side: 'credit', amount: 300n },
        { account: { owner: 'member', memberId, bucket: 'card_held', cardId: cardA }, side: 'credit', amount: 100n },
        { account: { owner: 'member', memberId, bucket: 'card', cardId: cardB }, side: 'credit', amount: 300n },
      ],
    }),
  );
  assert.equal(
    await accountBalance(handle.db, env, { owner: 'member', memberId, bucket: 'card', cardId: cardA }, 'USD'),
    300n,
  );
  assert.equal(
    await accountBalance(handle.db, env, { owner: 'member', memberId, bucket: 'card_held', cardId: cardA }, 'USD'),
    100n,
  );
  const [usd] = await memberBalances(handle.db, env, memberId);
  assert.deepEqual([usd!.available, usd!.card, usd!.total], ['3.00', '7.00', '10.00']);
  // A card account cannot go below zero, and one without a card id is a programmer error.
  await assert.rejects(
    handle.db.transaction().execute((trx) =>
      postEntry(trx, {
        environment: env,
        merchantId,
        asset: 'USD',
        kind: 'test.card',
        referenceType: 'test',
        referenceId: `card-over-${memberId}`,
        lines: [
          { account: { owner: 'member', memberId, bucket: 'card', cardId: cardB }, side: 'debit', amount: 301n },
          { account: available, side: 'credit', amount: 301n },
        ],
      }),
    ),
    InsufficientFundsError,
  );
  assert.throws(() => accountSpec({ owner: 'member', memberId, bucket: 'card' } as never), /card id/);
  assert.deepEqual((await verifyLedger(handle.db)).problems, []);
});

test(
  'platform accounts are kept per merchant: a platform line without a merchant, or kept for another merchant ' +
    "than the entry's, is a programmer error",
  async () => {
    const { memberId, merchantId } = await ids();
    await deposit(memberId, merchantId, 100n);
    const frozen = { owner: 'member', memberId, bucket: 'available' } as const;
    const cases: Array<EntryLine['account']> = [
      { owner: 'platform', bucket: 'settlement_clearing' } as never,
      { owner: 'platform', bucket: 'settlement_clearing', merchantId: '' },
      { owner: 'platform', bucket: 'settlement_clearing', merchantId: null } as never,
      platformAccount('settlement_clearing', `mch_${randomUUID()}`),
    ];
    for (const clearing of cases) {
      const reference = `qrp_${randomUUID()}`;
      await assert.rejects(
        post(
          entry('qrpay.complete', reference, merchantId, [
            { account: frozen, side: 'debit', amount: 5n },
            { account: clearing, side: 'credit', amount: 5n },
          ]),
        ),
        new RegExp(
          '^Error: ledger: (platform account without merchantId|' +
            'entry qrpay\\.complete .* touches the platform settlement_clearing kept for mch_)',
        ),
      );
      assert.equal((await entriesOf(reference)).length, 0);
    }
    // An entry names its merchant.
    await assert.rejects(
      post(entry(entryKinds.prepaidCredit, `pre_${randomUUID()}`, '', prepaidCreditLines({ merchantId, amount: 1n }))),
      /merchantId must be a non-empty string/,
    );
    const platformRows = await handle.db
      .selectFrom('ledger_accounts')
      .select('id')
      .where('owner_type', '=', 'platform')
      .where('owner_id', '=', merchantId)
      .execute();
    assert.equal(platformRows.length, 0);
    // The database keeps an owner on member and merchant rows (platform rows may have '' from before migration 026).
    await assert.rejects(
      sql`INSERT INTO ledger_accounts (environment, owner_type, owner_id, asset, bucket, normal_side, non_negative)
      VALUES ('sandbox', 'merchant', '', 'USDT', 'custody', 'debit', true)`.execute(handle.db),
      (err: unknown) => (err as { code?: string }).code === '23514',
    );
  },
);

test(
  "two merchants' platform postings land on two rows, each with its merchant as owner id; prepaid charges " +
    'included',
  async () => {
    const a = await ids();
    const b = await ids();
    for (const { merchantId } of [a, b]) {
      await post(
        entry(
          entryKinds.prepaidCredit,
          `pre_${randomUUID()}`,
          merchantId,
          prepaidCreditLines({ merchantId, amount: 900n }),
          'GBP',
        ),
      );
      await post(
        entry(
          entryKinds.prepaidCharge,
          `chg_${randomUUID()}`,
          merchantId,
          prepaidChargeLines({ merchantId, amount: 40n }),
          'GBP',
        ),
      );
    }
    const rows = await handle.db
      .selectFrom('ledger_accounts')
      .select(['id', 'owner_id', 'bucket', 'balance'])
      .where('owner_type', '=', 'platform')
      .where('asset', '=', 'GBP')
      .where('owner_id', 'in', [a.merchantId, b.merchantId])
      .orderBy('id')
      .execute();
    assert.equal(rows.length, 4);
    assert.equal(new Set(rows.map((r) => String(r.id))).size, 4);
    for (const { merchantId } of [a, b]) {
      assert.equal(await accountBalance(handle.db, env, platformAccount('fee_income', merchantId), 'GBP'), 40n);
      assert.equal(await accountBalance(handle.db, env, platformAccount('prepaid_funding', merchantId), 'GBP'), 900n);
    }
    assert.ok((await platformTotal(handle.db, env, 'fee_income', 'GBP')) >= 80n);
    assert.deepEqual((await verifyLedger(handle.db)).problems, []);
  },
);

test(
  "a database from before migration 026 (platform rows shared, owner_id '') still reads and verifies beside " +
    'the per-merchant rows',
  async () => {
    const { memberId, merchantId } = await ids();
    const other = await ids();
    const asset = 'HKD';
    const freeze = (who: { memberId: string; merchantId: string }, reference: string, amount: bigint) =>
      post(
        entry(
          'qrpay.freeze',
          reference,
          who.merchantId,
          [
            { account: { owner: 'member', memberId: who.memberId, bucket: 'available' }, side: 'debit', amount },
            { account: { owner: 'member', memberId: who.memberId, bucket: 'frozen' }, side: 'credit', amount },
          ],
          asset,
        ),
      );
    const complete = (who: { memberId: string; merchantId: string }, reference: string, amount: bigint): EntryInput =>
      entry(
        'qrpay.complete',
        reference,
        who.merchantId,
        [
          { account: { owner: 'member', memberId: who.memberId, bucket: 'frozen' }, side: 'debit', amount },
          { account: platformAccount('settlement_clearing', who.merchantId), side: 'credit', amount },
        ],
        asset,
      );
    const refund = (who: { memberId: string; merchantId: string }, reference: string, amount: bigint): EntryInput =>
      entry(
        'qrpay.refund',
        reference,
        who.merchantId,
        [
          { account: platformAccount('settlement_clearing', who.merchantId), side: 'debit', amount },
          { account: { owner: 'member', memberId: who.memberId, bucket: 'available' }, side: 'credit', amount },
        ],
        asset,
      );
    await deposit(memberId, merchantId, 1000n, asset);
    await deposit(other.memberId, other.merchantId, 1000n, asset);
    // Before the split: both merchants' payments completed on the one shared clearing row.
    const [old1, old2] = [`qrp_${randomUUID()}`, `qrp_${randomUUID()}`];
    await freeze({ memberId, merchantId }, old1, 300n);
    await freeze(other, old2, 200n);
    await handle.db
      .transaction()
      .execute((trx) => postAsBeforeSplit(trx, complete({ memberId, merchantId }, old1, 300n)));
    await handle.db.transaction().execute((trx) => postAsBeforeSplit(trx, complete(other, old2, 200n)));
    // After it: a refund of the old payment and a new payment, on the merchant's own row.
    await post(refund({ memberId, merchantId }, old1, 100n));
    const fresh = `qrp_${randomUUID()}`;
    await freeze({ memberId, merchantId }, fresh, 50n);
    await post(complete({ memberId, merchantId }, fresh, 50n));

    const rows = await handle.db
      .selectFrom('ledger_accounts')
      .select(['id', 'owner_type', 'owner_id', 'bucket', 'balance'])
      .where('environment', '=', env)
      .where('owner_type', '=', 'platform')
      .where('asset', '=', asset)
      .where('bucket', '=', 'settlement_clearing')
      .orderBy('id')
      .execute();
    const shared = rows.find((r) => r.owner_id === '')!;
    const own = rows.find((r) => r.owner_id === merchantId)!;
    assert.equal(String(shared.balance), '-500', 'the shared row keeps its history');
    assert.equal(String(own.balance), '50', 'debited 100 by the refund, credited 50 by the new payment');
    assert.equal(
      rows.some((r) => r.owner_id === other.merchantId),
      false,
    );
    // Reading: the shared row is named as before, a merchant's row with its merchant; the platform's total sums both.
    assert.deepEqual(refFromRow(shared), { owner: 'platform', bucket: 'settlement_clearing', merchantId: null });
    assert.deepEqual(refFromRow(own), { owner: 'platform', bucket: 'settlement_clearing', merchantId });
    assert.equal(describeAccount(refFromRow(shared)), 'platform settlement_clearing');
    assert.equal(describeAccount(refFromRow(own)), `platform settlement_clearing for merchant ${merchantId}`);
    assert.equal(await platformTotal(handle.db, env, 'settlement_clearing', asset), -450n);
    assert.equal(await accountBalance(handle.db, env, platformAccount('settlement_clearing', merchantId), asset), 50n);
    // The custody check attributes the shared row's postings by the entry's merchant: settlement 300 - 100 + 50 for
    // one,
    // 200 for the other.
    const report = await verifyLedger(handle.db);
    assert.deepEqual(report.problems, []);
    const [held] = await memberBalances(handle.db, env, memberId);
    assert.equal(held!.total, '7.50', '1000 - 300 + 100 - 50 minor units');

    // A merchant's platform row moved by another merchant's entry is reported.
    const refundEntry = await handle.db
      .selectFrom('journal_entries')
      .select('id')
      .where('reference_id', '=', old1)
      .where('kind', '=', 'qrpay.refund')
      .executeTakeFirstOrThrow();
    await handle.db
      .updateTable('journal_entries')
      .set({ merchant_id: other.merchantId })
      .where('id', '=', refundEntry.id)
      .execute();
    try {
      const tampered = await verifyLedger(handle.db);
      assert.ok(
        tampered.problems.some((p) =>
          p.includes(
            `of entry ${refundEntry.id} (merchant ${other.merchantId}): moves platform settlement_clearing for ` +
              `merchant ${merchantId} (${asset}, sandbox)`,
          ),
        ),
        tampered.problems.join('\n'),
      );
    } finally {
      await handle.db
        .updateTable('journal_entries')
        .set({ merchant_id: merchantId })
        .where('id', '=', refundEntry.id)
        .execute();
    }
    assert.deepEqual((await verifyLedger(handle.db)).problems, []);
  },
);
