/**
 * What a withdrawal's own fields decide (src/modules/withdrawals/rules.ts), without a server: the
 * asset and its network, the amount (positive, at its scale, at least the network's minimum), the
 * address's shape and checksum. Blacklisted and own addresses need the database (step-up and
 * withdrawals suites).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkWithdrawal } from '../src/modules/withdrawals/rules.js';
import type { Asset } from '../src/modules/assets/index.js';
import { ApiError } from '../src/platform/errors.js';
import { AmountError } from '../src/money/index.js';
import { catalogueUsdt } from './support/fixtures.js';

const usdt = catalogueUsdt;
const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const input = (fields: Partial<{ network: string; address: string; amount: string }> = {}) => ({
  asset: 'usdt',
  network: 'tron',
  address: TRON,
  amount: '25',
  ...fields,
});
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    if (err instanceof AmountError) return 'amount';
    throw err;
  }
  return 'passed';
};

describe('checkWithdrawal', () => {
  it('passes a withdrawal on an enabled network at or above its minimum, in minor units, network in any case', () => {
    const { asset, network, amount } = checkWithdrawal(input(), usdt);
    assert.equal(asset.code, 'USDT');
    assert.equal(network.network, 'TRON');
    assert.equal(amount, 25_000_000n);
    assert.equal(checkWithdrawal(input({ amount: '10' }), usdt).amount, 10_000_000n, 'the minimum itself passes');
  });

  it('refuses, in this order: asset or network, amount, minimum, address', () => {
    const cases: [string, Asset | undefined, ReturnType<typeof input>, string][] = [
      ['unknown asset', undefined, input(), 'asset_not_allowed'],
      ['disabled network', usdt, input({ network: 'ETHEREUM' }), 'asset_not_allowed'],
      ['unknown network', usdt, input({ network: 'BTC', address: 'x' }), 'asset_not_allowed'],
      ['disabled asset', { ...usdt, enabled: false }, input(), 'asset_not_allowed'],
      ['zero', usdt, input({ amount: '0' }), 'invalid_request'],
      ['too many places', usdt, input({ amount: '1.0000001' }), 'amount'],
      ['not a number', usdt, input({ amount: '1e3' }), 'amount'],
      ['below the minimum', usdt, input({ amount: '9.999999', address: 'bad' }), 'amount_out_of_range'],
      [
        'not the pattern',
        usdt,
        input({ address: '0x52908400098527886E0F7030069857D2E4169EE7' }),
        'address_not_allowed',
      ],
      ['a changed character (checksum)', usdt, input({ address: TRON.slice(0, -1) + 'u' }), 'address_not_allowed'],
    ];
    for (const [name, asset, body, code] of cases)
      assert.equal(
        refusal(() => checkWithdrawal(body, asset)),
        code,
        name,
      );
  });

  it('names the minimum in the refusal', () => {
    assert.throws(
      () => checkWithdrawal(input({ amount: '1' }), usdt),
      (err: ApiError) =>
        err.code === 'amount_out_of_range' && err.message === 'The minimum withdrawal is 10.000000 USDT.',
    );
  });
});
