/** The card lifecycle's posting rules (src/money/posting-rules/cards.ts) and the executor's backoff; the state
 * machines and rules are tested in cards-replacements-*, cards-closing-state and cards-cards-state. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { replacementRetryDelaySeconds } from '../src/modules/cards/replacements/executor.js';
import { balanceReturnLines, heldReleaseToAvailableLines } from '../src/money/index.js';
import { checkedEntry } from './support/fixtures.js';

const cardId = 'crd_00000000-0000-4000-8000-000000000001';

describe('card lifecycle rules', () => {
  it('posting rules balance: the return moves card → available, a late hold release card_held → available', () => {
    const m = 'mem_1';
    for (const lines of [
      balanceReturnLines({ memberId: m, cardId, amount: 250n }),
      heldReleaseToAvailableLines({ memberId: m, cardId, amount: 7n }),
    ]) {
      checkedEntry('USD', lines);
      assert.equal(lines.length, 2);
    }
    assert.deepEqual(
      balanceReturnLines({ memberId: m, cardId, amount: 1n }).map((l) => [l.account.bucket, l.side]),
      [
        ['card', 'debit'],
        ['available', 'credit'],
      ],
    );
    assert.deepEqual(
      heldReleaseToAvailableLines({ memberId: m, cardId, amount: 1n }).map((l) => [l.account.bucket, l.side]),
      [
        ['card_held', 'debit'],
        ['available', 'credit'],
      ],
    );
  });

  it("the executor backs off on the merchant's clock: 30 s doubling, at most an hour", () => {
    assert.deepEqual([1, 2, 3, 4, 7, 8, 50].map(replacementRetryDelaySeconds), [30, 60, 120, 240, 1920, 3600, 3600]);
  });
});
