/** The posting rules of a card's money (src/money/posting-rules/cards.ts): top-ups and transactions balance. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  topUpCreditLines,
  topUpFailLines,
  topUpFreezeLines,
  topUpSettleLines,
  authHoldLines,
  clearingLines,
  clearingSplit,
  refundLines,
  reversalLines,
} from '../src/money/index.js';
import { checkedEntry } from './support/fixtures.js';
import { cardStopped } from '../src/modules/cards/cards/state.js';

describe('posting rules balance', () => {
  const entry = (lines: ReturnType<typeof authHoldLines>) => checkedEntry('USD', lines);
  const cardId = 'crd_00000000-0000-4000-8000-000000000000';
  const money = { memberId: 'mem_1', merchantId: 'mch_1', cardId, amount: 5000n, fee: 50n, arrival: 497n };
  it('every top-up and transaction entry balances', () => {
    for (const lines of [
      topUpFreezeLines(money),
      topUpSettleLines(money),
      topUpSettleLines({ ...money, fee: 0n }),
      topUpCreditLines(money),
      topUpFailLines(money),
    ])
      entry(lines);
    const move = { memberId: 'mem_1', merchantId: 'mch_1', cardId, amount: 700n };
    for (const lines of [authHoldLines(move), reversalLines(move), refundLines(move)]) entry(lines);
    for (const cleared of [0n, 300n, 700n, 900n])
      entry(clearingLines({ memberId: 'mem_1', merchantId: 'mch_1', cardId, held: 700n, cleared }));
    for (const cleared of [0n, 300n, 700n, 900n])
      entry(clearingLines({ memberId: 'mem_1', merchantId: 'mch_1', cardId, held: 700n, cleared }, 'available'));
    for (const lines of [
      reversalLines(move, 'available'),
      refundLines(move, 'available'),
      topUpCreditLines(money, 'available'),
    ])
      entry(lines);
  });
  it(
    'once the card stopped, what comes back goes to available, never onto card:<id> (the card whose balance ' +
      'was returned)',
    () => {
      const move = { memberId: 'mem_1', merchantId: 'mch_1', cardId, amount: 700n };
      const credited = (lines: ReturnType<typeof authHoldLines>) =>
        lines.filter((l) => l.side === 'credit').map((l) => l.account.bucket);
      assert.deepEqual(credited(reversalLines(move, 'available')), ['available']);
      assert.deepEqual(reversalLines(move, 'available').find((l) => l.side === 'debit')!.account.bucket, 'card_held');
      assert.deepEqual(credited(refundLines(move, 'available')), ['available']);
      assert.deepEqual(credited(topUpCreditLines(money, 'available')), ['available']);
      assert.deepEqual(
        credited(
          clearingLines({ memberId: 'mem_1', merchantId: 'mch_1', cardId, held: 700n, cleared: 500n }, 'available'),
        ),
        ['settlement_clearing', 'available'],
      );
      assert.deepEqual(credited(reversalLines(move)), ['card']);
      for (const status of ['closing', 'closed', 'replaced', 'expired'] as const)
        assert.equal(cardStopped({ status, frozenAt: null }), true);
      for (const status of ['unactivated', 'active'] as const)
        assert.equal(cardStopped({ status, frozenAt: null }), false);
      assert.equal(cardStopped({ status: 'active', frozenAt: new Date(0) }), true);
    },
  );
  it('a clearing takes from the hold first, releases the rest, or takes the difference from the card', () => {
    assert.deepEqual(clearingSplit(700n, 700n), { fromHeld: 700n, released: 0n, extra: 0n });
    assert.deepEqual(clearingSplit(700n, 500n), { fromHeld: 500n, released: 200n, extra: 0n });
    assert.deepEqual(clearingSplit(700n, 900n), { fromHeld: 700n, released: 0n, extra: 200n });
  });
});
