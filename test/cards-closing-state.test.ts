/** Closing and expiry (src/modules/cards/closing/state.ts): the close verdict, the issuer's answer, expiry. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cardExpiresAt, closeOutcomeTransition, closeVerdict, expiryDue } from '../src/modules/cards/closing/state.js';
import type { CardStatus } from '../src/modules/cards/cards/tables.js';

describe('card closing state machine', () => {
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
});
