/**
 * The money core's own posting rules (src/money/rules.ts): deposits, withdrawals and the prepaid
 * account, as pure functions from amounts to an entry's lines. Each entry balances, touches the
 * accounts its flow names, leaves out zero fee lines and passes the posting's own checks
 * (`assertEntry`, which refuses what the database would never be asked to write).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  depositLines,
  entryKinds,
  memberFeeToMerchant,
  prepaidChargeLines,
  prepaidCreditLines,
  withdrawalConfirmLines,
  withdrawalFailLines,
  withdrawalLockLines,
} from '../src/money/rules.js';
import { assertEntry, type EntryLine } from '../src/money/posting.js';
import { accountKey } from '../src/money/accounts.js';

const merchantId = 'mch_1';
const memberId = 'mem_1';

const total = (lines: EntryLine[], side: 'debit' | 'credit') =>
  lines.filter((l) => l.side === side).reduce((sum, l) => sum + l.amount, 0n);

/** Each account's signed movement (debit positive), by account key. */
const movements = (lines: EntryLine[]) => {
  const by = new Map<string, bigint>();
  for (const l of lines) {
    const key = accountKey(l.account);
    by.set(key, (by.get(key) ?? 0n) + (l.side === 'debit' ? l.amount : -l.amount));
  }
  return by;
};

/** The lines as a posting checks them: balanced, at least two, positive amounts, the platform's rows the merchant's. */
const postable = (lines: EntryLine[]) =>
  assertEntry({
    environment: 'sandbox',
    merchantId,
    kind: 'test',
    referenceType: 'test',
    referenceId: 'ref_1',
    asset: 'USDT',
    lines,
  });

describe('money rules', () => {
  it('names each entry kind once', () => {
    const kinds = Object.values(entryKinds);
    assert.equal(new Set(kinds).size, kinds.length);
    assert.equal(entryKinds.deposit, 'deposit');
    assert.equal(entryKinds.withdrawalLock, 'withdrawal.lock');
  });

  it("a deposit grows custody and the member's available balance by the amount", () => {
    const lines = depositLines({ memberId, merchantId, amount: 1_500n });
    postable(lines);
    assert.equal(total(lines, 'debit'), 1_500n);
    assert.equal(total(lines, 'credit'), 1_500n);
    assert.deepEqual(lines[0], {
      account: { owner: 'merchant', merchantId, bucket: 'custody' },
      side: 'debit',
      amount: 1_500n,
    });
    assert.deepEqual(lines[1], {
      account: { owner: 'member', memberId, bucket: 'available' },
      side: 'credit',
      amount: 1_500n,
    });
  });

  it('a withdrawal locks amount plus fee, and a failed one gives exactly that back', () => {
    const lock = withdrawalLockLines({ memberId, amount: 1_000n, fee: 25n });
    const fail = withdrawalFailLines({ memberId, amount: 1_000n, fee: 25n });
    postable(lock);
    postable(fail);
    assert.equal(total(lock, 'debit'), 1_025n);
    const locked = movements(lock);
    const returned = movements(fail);
    for (const [key, delta] of locked) assert.equal(returned.get(key), -delta, key);
    assert.equal(locked.size, 2);
  });

  it("a confirmed withdrawal clears withdrawing against custody and recognises the fee as the merchant's", () => {
    const lines = withdrawalConfirmLines({ memberId, merchantId, amount: 1_000n, fee: 25n });
    postable(lines);
    assert.equal(lines.length, 4);
    const m = movements(lines);
    assert.equal(m.get(accountKey({ owner: 'member', memberId, bucket: 'withdrawing' })), 1_025n);
    assert.equal(m.get(accountKey({ owner: 'merchant', merchantId, bucket: 'custody' })), -1_025n);
    assert.equal(m.get(accountKey({ owner: 'merchant', merchantId, bucket: 'fee_retained' })), 25n);
    assert.equal(m.get(accountKey({ owner: 'merchant', merchantId, bucket: 'fee_income' })), -25n);
  });

  it('a confirmed withdrawal without a fee has no fee lines (a posting is never zero)', () => {
    const lines = withdrawalConfirmLines({ memberId, merchantId, amount: 1_000n, fee: 0n });
    postable(lines);
    assert.equal(lines.length, 2);
    assert.ok(lines.every((l) => l.amount > 0n));
  });

  it('a member fee to the merchant is two balanced lines, none for a zero or negative fee', () => {
    const lines = memberFeeToMerchant(merchantId, 7n);
    assert.equal(lines.length, 2);
    assert.equal(total(lines, 'debit'), total(lines, 'credit'));
    assert.deepEqual(
      lines.map((l) => [l.account.owner, l.account.bucket, l.side]),
      [
        ['merchant', 'fee_retained', 'debit'],
        ['merchant', 'fee_income', 'credit'],
      ],
    );
    assert.deepEqual(memberFeeToMerchant(merchantId, 0n), []);
    assert.deepEqual(memberFeeToMerchant(merchantId, -1n), []);
  });

  it('the prepaid account is credited against, and charged to, the platform rows kept for the merchant', () => {
    const credit = prepaidCreditLines({ merchantId, amount: 300n });
    const charge = prepaidChargeLines({ merchantId, amount: 120n });
    postable(credit);
    postable(charge);
    assert.deepEqual(credit[0]!.account, { owner: 'platform', bucket: 'prepaid_funding', merchantId });
    assert.deepEqual(charge[1]!.account, { owner: 'platform', bucket: 'fee_income', merchantId });
    assert.equal(movements(credit).get(accountKey({ owner: 'merchant', merchantId, bucket: 'prepaid' })), -300n);
    assert.equal(movements(charge).get(accountKey({ owner: 'merchant', merchantId, bucket: 'prepaid' })), 120n);
  });

  it("lines of another merchant's platform rows, or a zero amount, are refused before anything is written", () => {
    assert.throws(() => postable(prepaidCreditLines({ merchantId: 'mch_other', amount: 300n })), /platform/);
    assert.throws(() => postable(depositLines({ memberId, merchantId, amount: 0n })), /amounts must be bigint > 0n/);
  });
});
