/** Pure rules of the card record (src/modules/cards/cards/rules.ts): the printed expiry. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expiryShape, expiryText } from '../src/modules/cards/cards/rules.js';

describe('card record rules', () => {
  it('the printed expiry', () => {
    assert.equal(expiryText(3, 2029), '03/29');
  });
  it('two digits each, the century dropped', () => {
    assert.equal(expiryText(12, 2030), '12/30');
    assert.equal(expiryText(1, 2100), '01/00');
    assert.equal(expiryText(10, 2009), '10/09');
  });
  it('what the member types matches the printed form only', () => {
    const shape = new RegExp(expiryShape);
    for (const ok of ['01/29', '12/30', expiryText(7, 2031)]) assert.ok(shape.test(ok), ok);
    for (const bad of ['1/29', '13/29', '00/29', '01/2029', '01-29', ' 01/29'])
      assert.equal(shape.test(bad), false, bad);
  });
});
