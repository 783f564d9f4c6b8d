/** The card lifecycle's pure rules (state.ts, rules.ts additions): replacement and closing verdicts, transitions,
 * expiry, fees, posting rules. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cardCanSpend } from '../src/modules/cards/cards/state.js';
import { cardExpiresAt, closeOutcomeTransition, closeVerdict, expiryDue } from '../src/modules/cards/closing/state.js';
import {
  isSecurityReason,
  replacementReasons,
  replacementRequestVerdict,
  replacementStartProblem,
  replacementTransition,
  truncateNote,
} from '../src/modules/cards/replacements/state.js';
import { replacementFeeAsset, replacementFees } from '../src/modules/cards/replacements/rules.js';
import { replacementRetryDelaySeconds } from '../src/modules/cards/replacements/executor.js';
import { assertEntry, balanceReturnLines, heldReleaseToAvailableLines } from '../src/money/index.js';
import type { CardStatus } from '../src/modules/cards/cards/tables.js';

const statuses: CardStatus[] = ['unactivated', 'active', 'closing', 'closed', 'expired', 'replaced'];
const cardId = 'crd_00000000-0000-4000-8000-000000000001';

describe('card lifecycle rules', () => {
  it("replacement request: the reference's preconditions, reasons outside the enumeration invalid_request", () => {
    assert.equal(replacementReasons.length, 10);
    const bored = replacementRequestVerdict({ status: 'active', inFlight: false }, 'bored');
    assert.equal(bored.kind === 'refuse' && bored.code, 'invalid_request');
    for (const status of statuses) {
      for (const reason of replacementReasons) {
        const v = replacementRequestVerdict({ status, inFlight: false }, reason);
        const open = status === 'unactivated' || status === 'active';
        const allowed = open && (isSecurityReason(reason) || status === 'unactivated');
        assert.equal(v.kind, allowed ? 'accept' : 'refuse', `${status} ${reason}`);
        if (v.kind === 'refuse') assert.equal(v.code, 'state_invalid');
        if (v.kind === 'accept') assert.equal(v.security, isSecurityReason(reason));
      }
      const inFlight = replacementRequestVerdict({ status, inFlight: true }, 'stolen');
      assert.equal(inFlight.kind, 'refuse');
    }
    assert.equal(isSecurityReason('expiring'), true);
    assert.equal(isSecurityReason('name_error'), false);
  });

  it('the note is kept to 200 characters, never cutting a surrogate pair', () => {
    assert.equal(truncateNote(undefined), null);
    assert.equal(truncateNote('abc'), 'abc');
    assert.equal(truncateNote('x'.repeat(201)), 'x'.repeat(200));
    const emoji = '😀'.repeat(201);
    assert.equal([...truncateNote(emoji)!].length, 200);
    assert.equal(truncateNote(emoji), '😀'.repeat(200));
  });

  it(
    'replacement transitions: start, complete, fail; ' + 'final states replay their own event and refuse the others',
    () => {
      assert.deepEqual(replacementTransition('requested', 'start'), { kind: 'move', to: 'processing' });
      assert.deepEqual(replacementTransition('processing', 'start'), { kind: 'replay', at: 'processing' });
      assert.deepEqual(replacementTransition('processing', 'complete'), { kind: 'move', to: 'completed' });
      assert.deepEqual(replacementTransition('requested', 'fail'), { kind: 'move', to: 'failed' });
      assert.deepEqual(replacementTransition('processing', 'fail'), { kind: 'move', to: 'failed' });
      assert.deepEqual(replacementTransition('completed', 'complete'), { kind: 'replay', at: 'completed' });
      assert.deepEqual(replacementTransition('failed', 'fail'), { kind: 'replay', at: 'failed' });
      assert.equal(replacementTransition('requested', 'complete').kind, 'refuse');
      assert.equal(replacementTransition('completed', 'fail').kind, 'refuse');
      assert.equal(replacementTransition('failed', 'start').kind, 'refuse');
      assert.equal(replacementTransition('completed', 'start').kind, 'refuse');
    },
  );

  it("the executor's first look at the card", () => {
    assert.equal(replacementStartProblem({ status: 'active' }, true), undefined);
    assert.equal(replacementStartProblem({ status: 'unactivated' }, false), undefined);
    assert.equal(replacementStartProblem({ status: 'active' }, false), 'card_activated');
    assert.equal(replacementStartProblem({ status: 'expired' }, true), 'card_expired');
    assert.equal(replacementStartProblem({ status: 'closing' }, true), 'card_closing');
  });

  it(
    'closing: open cards move to closing; closing and closed replay; expired, replaced, in-flight replacement ' +
      'refuse',
    () => {
      assert.deepEqual(closeVerdict({ status: 'active', inFlightReplacement: false }), { kind: 'move', to: 'closing' });
      assert.deepEqual(closeVerdict({ status: 'unactivated', inFlightReplacement: false }), {
        kind: 'move',
        to: 'closing',
      });
      assert.deepEqual(closeVerdict({ status: 'closing', inFlightReplacement: false }), {
        kind: 'replay',
        at: 'closing',
      });
      assert.deepEqual(closeVerdict({ status: 'closed', inFlightReplacement: false }), {
        kind: 'replay',
        at: 'closed',
      });
      assert.equal(closeVerdict({ status: 'expired', inFlightReplacement: false }).kind, 'refuse');
      assert.equal(closeVerdict({ status: 'replaced', inFlightReplacement: false }).kind, 'refuse');
      assert.equal(closeVerdict({ status: 'active', inFlightReplacement: true }).kind, 'refuse');
      assert.deepEqual(closeOutcomeTransition('closing', 'confirmed', 'active'), { kind: 'move', to: 'closed' });
      assert.deepEqual(closeOutcomeTransition('closing', 'refused', 'unactivated'), {
        kind: 'move',
        to: 'unactivated',
      });
      assert.deepEqual(closeOutcomeTransition('closed', 'confirmed', null), { kind: 'replay', at: 'closed' });
      assert.deepEqual(closeOutcomeTransition('active', 'refused', null), { kind: 'replay', at: 'active' });
    },
  );

  it('expiry: valid through the last day of the month (UTC); only unactivated and active cards expire', () => {
    assert.equal(cardExpiresAt(12, 2029).toISOString(), '2030-01-01T00:00:00.000Z');
    assert.equal(cardExpiresAt(2, 2028).toISOString(), '2028-03-01T00:00:00.000Z');
    const card = { status: 'active' as CardStatus, expMonth: 2, expYear: 2028 };
    assert.equal(expiryDue(card, new Date('2028-02-29T23:59:59.999Z')), false);
    assert.equal(expiryDue(card, new Date('2028-03-01T00:00:00.000Z')), true);
    for (const status of ['closing', 'closed', 'replaced', 'expired'] as CardStatus[])
      assert.equal(expiryDue({ ...card, status }, new Date('2031-01-01')), false);
  });

  it('only an active card that is not frozen spends', () => {
    for (const status of statuses) assert.equal(cardCanSpend({ status, frozenAt: null }), status === 'active');
    assert.equal(cardCanSpend({ status: 'active', frozenAt: new Date() }), false);
  });

  it(
    'fees: security reasons pay the replacement fee, physical cards also postage; non-security nothing; the ' +
      'asset that can pay',
    () => {
      const product = { replacementFee: 1000n, postageFee: 500n, formFactor: 'physical' as const };
      assert.deepEqual(replacementFees(product, true), { replacement: 1000n, postage: 500n });
      assert.deepEqual(replacementFees({ ...product, formFactor: 'virtual' }, true), {
        replacement: 1000n,
        postage: 0n,
      });
      assert.deepEqual(replacementFees(product, false), { replacement: 0n, postage: 0n });
      assert.equal(
        replacementFeeAsset('USDC', ['USDT', 'USDC'], () => true),
        'USDC',
      );
      assert.equal(
        replacementFeeAsset('USDC', ['USDT', 'USDC'], (a) => a === 'USDT'),
        'USDT',
      );
      assert.equal(
        replacementFeeAsset('USDT', ['USDT', 'USDC'], () => false),
        undefined,
      );
    },
  );

  it('posting rules balance: the return moves card → available, a late hold release card_held → available', () => {
    const m = 'mem_1';
    for (const lines of [
      balanceReturnLines({ memberId: m, cardId, amount: 250n }),
      heldReleaseToAvailableLines({ memberId: m, cardId, amount: 7n }),
    ]) {
      assertEntry({
        environment: 'sandbox',
        merchantId: 'mch_1',
        kind: 'k',
        referenceType: 't',
        referenceId: 'r',
        asset: 'USD',
        lines,
      });
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
