import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { DatabaseHandle } from '../src/db/connection.js';
import {
  DuplicatePostingError,
  InsufficientFundsError,
  accountBalance,
  depositLines,
  entryKinds,
  postEntry,
  verifyLedger,
  withdrawalConfirmLines,
  withdrawalFailLines,
  withdrawalLockLines,
  type AccountRef,
  type EntryLine,
} from '../src/money/index.js';
import { openTestDatabase } from './support/database.js';

/**
 * Model-based: random sequences of deposit, withdrawal lock, confirm and fail run against the
 * ledger and against a few bigints; after every step the balances must equal the model and
 * verifyLedger must find nothing wrong.
 */

let handle: DatabaseHandle;
const env = 'sandbox' as const;
const asset = 'USDT';

before(async () => {
  handle = await openTestDatabase('mwa-ledger-prop-');
});
after(async () => handle.close());

type Op =
  | { t: 'deposit'; amount: bigint }
  | { t: 'lock'; amount: bigint; fee: bigint }
  | { t: 'confirm'; pick: number }
  | { t: 'fail'; pick: number };

interface Withdrawal {
  id: string;
  amount: bigint;
  fee: bigint;
  status: 'locked' | 'settled' | 'failed';
}

interface Model {
  available: bigint;
  withdrawing: bigint;
  custody: bigint;
  feeIncome: bigint;
  withdrawals: Withdrawal[];
}

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constant('deposit' as const), amount: fc.bigInt({ min: 1n, max: 1_000n }) }),
  fc.record({
    t: fc.constant('lock' as const),
    amount: fc.bigInt({ min: 1n, max: 600n }),
    fee: fc.bigInt({ min: 0n, max: 50n }),
  }),
  fc.record({ t: fc.constant('confirm' as const), pick: fc.nat(20) }),
  fc.record({ t: fc.constant('fail' as const), pick: fc.nat(20) }),
);

async function post(
  kind: string,
  referenceId: string,
  merchantId: string,
  lines: EntryLine[],
): Promise<'posted' | 'insufficient' | 'duplicate'> {
  try {
    await handle.db
      .transaction()
      .execute((trx) =>
        postEntry(trx, { environment: env, merchantId, kind, referenceType: 'withdrawal', referenceId, asset, lines }),
      );
    return 'posted';
  } catch (err) {
    if (err instanceof InsufficientFundsError) return 'insufficient';
    if (err instanceof DuplicatePostingError) return 'duplicate';
    throw err;
  }
}

/** Runs one step on the ledger and on the model; the outcome must be the one the model predicts. */
async function step(op: Op, m: Model, memberId: string, merchantId: string): Promise<void> {
  if (op.t === 'deposit') {
    const outcome = await post(
      entryKinds.deposit,
      `dep_${randomUUID()}`,
      merchantId,
      depositLines({ memberId, merchantId, amount: op.amount }),
    );
    assert.equal(outcome, 'posted');
    m.available += op.amount;
    m.custody += op.amount;
    return;
  }
  if (op.t === 'lock') {
    const w: Withdrawal = { id: `wdr_${randomUUID()}`, amount: op.amount, fee: op.fee, status: 'locked' };
    const outcome = await post(
      entryKinds.withdrawalLock,
      w.id,
      merchantId,
      withdrawalLockLines({ memberId, amount: w.amount, fee: w.fee }),
    );
    const total = op.amount + op.fee;
    assert.equal(outcome, m.available >= total ? 'posted' : 'insufficient');
    if (outcome === 'posted') {
      m.available -= total;
      m.withdrawing += total;
      m.withdrawals.push(w);
    }
    return;
  }
  const w = m.withdrawals[op.pick % Math.max(1, m.withdrawals.length)];
  if (!w) return;
  const target = op.t === 'confirm' ? 'settled' : 'failed';
  // The withdrawal module refuses the other transition by state; the ledger is not asked.
  if (w.status !== 'locked' && w.status !== target) return;
  const outcome =
    op.t === 'confirm'
      ? await post(
          entryKinds.withdrawalConfirm,
          w.id,
          merchantId,
          withdrawalConfirmLines({ memberId, merchantId, amount: w.amount, fee: w.fee }),
        )
      : await post(
          entryKinds.withdrawalFail,
          w.id,
          merchantId,
          withdrawalFailLines({ memberId, amount: w.amount, fee: w.fee }),
        );
  if (w.status === target) {
    assert.equal(outcome, 'duplicate');
    return;
  }
  assert.equal(outcome, 'posted');
  m.withdrawing -= w.amount + w.fee;
  if (op.t === 'confirm') {
    m.custody -= w.amount + w.fee;
    m.feeIncome += w.fee;
  } else {
    m.available += w.amount + w.fee;
  }
  w.status = target;
}

async function checkAgainstModel(m: Model, memberId: string, merchantId: string): Promise<void> {
  const balance = (ref: AccountRef) => accountBalance(handle.db, env, ref, asset);
  assert.equal(await balance({ owner: 'member', memberId, bucket: 'available' }), m.available);
  assert.equal(await balance({ owner: 'member', memberId, bucket: 'withdrawing' }), m.withdrawing);
  assert.equal(await balance({ owner: 'merchant', merchantId, bucket: 'custody' }), m.custody);
  assert.equal(await balance({ owner: 'merchant', merchantId, bucket: 'fee_income' }), m.feeIncome);
  assert.equal(await balance({ owner: 'merchant', merchantId, bucket: 'fee_retained' }), m.feeIncome);
  // Custody is exactly what the member holds (the reference); the fees are the merchant's own.
  assert.equal(m.custody, m.available + m.withdrawing);
  const report = await verifyLedger(handle.db);
  assert.deepEqual(report.problems, []);
  assert.equal(report.ok, true);
}

test('model-based: deposits, withdrawal locks, confirms and fails keep every invariant', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 15 }), async (ops) => {
      const memberId = `mem_${randomUUID()}`;
      const merchantId = `mch_${randomUUID()}`;
      await handle.db.insertInto('merchants').values({ id: merchantId, name: 'property test' }).execute();
      await handle.db
        .insertInto('members')
        .values({
          id: memberId,
          merchant_id: merchantId,
          environment: env,
          external_member_id: memberId,
          profile: '{}',
          sessions_revoked_at: null,
          updated_at: new Date(),
        })
        .execute();
      const model: Model = { available: 0n, withdrawing: 0n, custody: 0n, feeIncome: 0n, withdrawals: [] };
      for (const op of ops) {
        await step(op, model, memberId, merchantId);
        await checkAgainstModel(model, memberId, merchantId);
      }
    }),
    { numRuns: 30 },
  );
});
