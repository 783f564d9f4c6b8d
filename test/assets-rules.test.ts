/**
 * The asset catalogue's pure rules (src/modules/assets/rules.ts), without a server: an operator's
 * address pattern, matching an address, the usable network, the public and operator views.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  addressMatches,
  addressPatternLengthMax,
  assetCodePattern,
  checkAddressPattern,
  networkCodePattern,
  operatorAssetView,
  publicAssetView,
  usableNetwork,
  type AssetNetwork,
} from '../src/modules/assets/rules.js';
import { catalogueUsdt } from './support/fixtures.js';
import { ApiError } from '../src/platform/errors.js';

const usdt = catalogueUsdt;
const [tron, eth] = usdt.networks as [AssetNetwork, AssetNetwork];

describe('address patterns', () => {
  it("an operator's pattern: 1 to 512 characters and a valid regular expression", () => {
    assert.equal(checkAddressPattern('^T.*$'), '^T.*$');
    assert.equal(checkAddressPattern('x'.repeat(addressPatternLengthMax)), 'x'.repeat(512));
    for (const bad of ['', 'x'.repeat(addressPatternLengthMax + 1), '([a-z]', '*x']) {
      assert.throws(
        () => checkAddressPattern(bad),
        (err: unknown) => err instanceof ApiError && err.code === 'invalid_request',
        JSON.stringify(bad.slice(0, 20)),
      );
    }
  });
  it("an address matches its network's pattern, the same pattern twice and many patterns alike", () => {
    assert.equal(addressMatches(tron, 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'), true);
    assert.equal(addressMatches(tron, 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6'), false);
    assert.equal(addressMatches(tron, 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'), true, 'kept compiled');
    assert.equal(addressMatches(tron, '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'), false);
    for (let i = 0; i < 300; i++) assert.equal(addressMatches({ addressPattern: `^a{${i}}$` }, 'a'.repeat(i)), true);
    assert.equal(
      addressMatches(tron, 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'),
      true,
      'still right once the cache was emptied',
    );
  });
  it("code patterns follow the tables' constraints", () => {
    assert.match('USDT', new RegExp(assetCodePattern));
    assert.doesNotMatch('usdt', new RegExp(assetCodePattern));
    assert.doesNotMatch('U', new RegExp(assetCodePattern));
    assert.match('BNB_SMART_CHAIN', new RegExp(networkCodePattern));
    assert.doesNotMatch('TRON-2', new RegExp(networkCodePattern));
  });
});

describe('usable network', () => {
  it('the enabled network of an enabled asset', () => {
    assert.equal(usableNetwork(usdt, 'TRON'), tron);
  });
  it('none for a disabled network, an unknown one, a disabled asset or no asset', () => {
    assert.equal(usableNetwork(usdt, 'ETHEREUM'), undefined);
    assert.equal(usableNetwork(usdt, 'SOLANA'), undefined);
    assert.equal(usableNetwork(usdt, 'tron'), undefined);
    assert.equal(usableNetwork({ ...usdt, enabled: false }, 'TRON'), undefined);
    assert.equal(usableNetwork(undefined, 'TRON'), undefined);
  });
});

describe('views', () => {
  it('public: enabled networks by name only', () => {
    assert.deepEqual(publicAssetView(usdt), { code: 'USDT', scale: 6, type: 'crypto', networks: ['TRON'] });
  });
  it("operator: every network, amounts as decimals at the asset's scale", () => {
    assert.deepEqual(operatorAssetView(usdt), {
      code: 'USDT',
      scale: 6,
      type: 'crypto',
      enabled: true,
      networks: [
        {
          network: 'TRON',
          enabled: true,
          withdrawal_fee: '1.000000',
          withdrawal_min: '10.000000',
          address_pattern: tron.addressPattern,
        },
        {
          network: 'ETHEREUM',
          enabled: false,
          withdrawal_fee: '5.000000',
          withdrawal_min: '20.000000',
          address_pattern: eth.addressPattern,
        },
      ],
    });
  });
});
