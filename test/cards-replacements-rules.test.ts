/** Pure rules of replacements (src/modules/cards/replacements/rules.ts): the fees and the asset they are taken in. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { replacementFeeAsset, replacementFees } from '../src/modules/cards/replacements/rules.js';

describe('card replacement rules', () => {
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
});
