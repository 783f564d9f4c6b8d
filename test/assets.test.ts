import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { admin, newMerchantClient, useTestService } from './support/service.js';
import type { RunningService } from '../src/server.js';
import { getAsset } from '../src/modules/assets/queries.js';
import { addressMatches, usableNetwork } from '../src/modules/assets/rules.js';

let service: RunningService;

useTestService({ merchant: false }, (s) => ({ service } = s));

interface PublicAsset {
  code: string;
  scale: number;
  type: string;
  networks: string[];
}
interface ListOf<T> {
  data: T[];
  next_cursor: null;
  has_more: boolean;
}

/** A code no earlier run used (the PostgreSQL test database outlives a run). */
const freshCode = () => `T${randomBytes(4).toString('hex').toUpperCase()}`;

const seeded: PublicAsset[] = [
  { code: 'BTC', scale: 8, type: 'crypto', networks: ['BITCOIN'] },
  { code: 'ETH', scale: 18, type: 'crypto', networks: ['ETHEREUM'] },
  { code: 'EUR', scale: 2, type: 'fiat', networks: [] },
  { code: 'GBP', scale: 2, type: 'fiat', networks: [] },
  { code: 'HKD', scale: 2, type: 'fiat', networks: [] },
  { code: 'SGD', scale: 2, type: 'fiat', networks: [] },
  { code: 'USD', scale: 2, type: 'fiat', networks: [] },
  { code: 'USDC', scale: 6, type: 'crypto', networks: ['ETHEREUM'] },
  { code: 'USDT', scale: 6, type: 'crypto', networks: ['ETHEREUM', 'TRON'] },
];

async function publicList(): Promise<ListOf<PublicAsset>> {
  const { client } = await newMerchantClient(service);
  return client.request<ListOf<PublicAsset>>({ method: 'GET', path: '/v1/assets' });
}

test('GET /v1/assets lists the default catalogue by code in a list envelope', async () => {
  const list = await publicList();
  assert.equal(list.next_cursor, null);
  assert.equal(list.has_more, false);
  const codes = list.data.map((a) => a.code);
  assert.deepEqual(codes, [...codes].sort());
  const seededCodes = new Set(seeded.map((a) => a.code));
  assert.deepEqual(
    list.data.filter((a) => seededCodes.has(a.code)),
    seeded,
  );
  for (const item of list.data) assert.deepEqual(Object.keys(item).sort(), ['code', 'networks', 'scale', 'type']);
});

test('GET /v1/assets needs a token but no scope, and accepts either principal', async () => {
  const { client } = await newMerchantClient(service, { scopes: [] });
  const anonymous = await client.requestRaw({ method: 'GET', path: '/v1/assets', auth: false });
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.body.code, 'invalid_token');
  const noScopes = await client.requestRaw({ method: 'GET', path: '/v1/assets' });
  assert.equal(noScopes.status, 200);
  const unknownMember = await client.requestRaw({ method: 'GET', path: '/v1/assets', onBehalfOf: 'no-such-member' });
  assert.equal(unknownMember.status, 404);
  assert.equal(unknownMember.body.code, 'member_not_found');
});

test('operator lists every asset with fees and minimums as decimal strings', async () => {
  const res = await admin<ListOf<any>>(service, 'GET', '/admin/v1/assets');
  assert.equal(res.status, 200);
  const usdt = res.body.data.find((a) => a.code === 'USDT');
  assert.deepEqual(usdt, {
    code: 'USDT',
    scale: 6,
    type: 'crypto',
    enabled: true,
    networks: [
      {
        network: 'ETHEREUM',
        enabled: true,
        withdrawal_fee: '5.000000',
        withdrawal_min: '10.000000',
        address_pattern: '^0x[0-9a-fA-F]{40}$',
      },
      {
        network: 'TRON',
        enabled: true,
        withdrawal_fee: '1.000000',
        withdrawal_min: '1.000000',
        address_pattern: '^T[1-9A-HJ-NP-Za-km-z]{33}$',
      },
    ],
  });
  const eth = res.body.data.find((a) => a.code === 'ETH');
  assert.equal(eth.networks[0].withdrawal_fee, '0.002000000000000000');
  const btc = (await admin(service, 'GET', '/admin/v1/assets/BTC')).body;
  assert.equal(btc.networks[0].withdrawal_fee, '0.00010000');
  assert.equal((await admin(service, 'GET', '/admin/v1/assets/NOPE')).status, 404);
  const noToken = await fetch(`${service.adminUrl}/admin/v1/assets`);
  assert.equal(noToken.status, 401);
});

test('operator creates an asset, sets a network, disables both; the public list follows', async () => {
  const code = freshCode();
  const created = await admin(service, 'POST', '/admin/v1/assets', { code, scale: 8, type: 'crypto' });
  assert.equal(created.status, 201);
  assert.deepEqual(created.body, { code, scale: 8, type: 'crypto', enabled: true, networks: [] });
  const again = await admin(service, 'POST', '/admin/v1/assets', { code, scale: 8, type: 'crypto' });
  assert.equal(again.status, 409);
  assert.equal(again.body.code, 'duplicate_resource');

  /** PUT of the asset's DOGECOIN network (its whole settings), answered 200. */
  const putDogecoin = async (network: Record<string, unknown>) => {
    const res = await admin(service, 'PUT', `/admin/v1/assets/${code}/networks/DOGECOIN`, network);
    assert.equal(res.status, 200);
    return res;
  };
  const put = await putDogecoin({
    enabled: true,
    withdrawal_fee: '1.5',
    withdrawal_min: '10',
    address_pattern: '^D[1-9A-HJ-NP-Za-km-z]{33}$',
  });
  assert.deepEqual(put.body.networks, [
    {
      network: 'DOGECOIN',
      enabled: true,
      withdrawal_fee: '1.50000000',
      withdrawal_min: '10.00000000',
      address_pattern: '^D[1-9A-HJ-NP-Za-km-z]{33}$',
    },
  ]);
  assert.deepEqual(
    (await publicList()).data.find((a) => a.code === code),
    { code, scale: 8, type: 'crypto', networks: ['DOGECOIN'] },
  );

  // The helper the withdrawal module uses: amounts as bigint minor units.
  const asset = await getAsset(service.ctx.db, code);
  assert.deepEqual(asset, {
    code,
    scale: 8,
    type: 'crypto',
    enabled: true,
    networks: [
      {
        network: 'DOGECOIN',
        enabled: true,
        withdrawalFee: 150_000_000n,
        withdrawalMin: 1_000_000_000n,
        addressPattern: '^D[1-9A-HJ-NP-Za-km-z]{33}$',
      },
    ],
  });
  assert.ok(usableNetwork(asset, 'DOGECOIN'));
  assert.equal(usableNetwork(asset, 'TRON'), undefined);
  assert.equal(addressMatches(asset!.networks[0]!, `D${'a'.repeat(33)}`), true);
  assert.equal(addressMatches(asset!.networks[0]!, `D${'0'.repeat(33)}`), false);
  assert.equal(await getAsset(service.ctx.db, 'NOPE'), undefined);

  // Replacing the network: disabled networks leave the public list.
  const off = await putDogecoin({ enabled: false, withdrawal_fee: '2', withdrawal_min: '0', address_pattern: '^D.+$' });
  assert.equal(off.body.networks[0].withdrawal_fee, '2.00000000');
  assert.deepEqual((await publicList()).data.find((a) => a.code === code)?.networks, []);

  const disabled = await admin(service, 'PATCH', `/admin/v1/assets/${code}`, { enabled: false });
  assert.equal(disabled.status, 200);
  assert.equal(disabled.body.enabled, false);
  assert.equal(
    (await publicList()).data.find((a) => a.code === code),
    undefined,
  );
  assert.equal(
    (await admin<ListOf<any>>(service, 'GET', '/admin/v1/assets')).body.data.find((a) => a.code === code).enabled,
    false,
  );
  assert.equal(usableNetwork(await getAsset(service.ctx.db, code), 'DOGECOIN'), undefined);
});

test('operator input is validated', async () => {
  const bad = async (method: string, path: string, body: unknown, status = 400, code = 'invalid_request') => {
    const res = await admin(service, method, path, body);
    assert.equal(res.status, status, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.code, code);
  };
  await bad('POST', '/admin/v1/assets', { code: 'lower', scale: 2, type: 'fiat' });
  await bad('POST', '/admin/v1/assets', { code: freshCode(), scale: 19, type: 'fiat' });
  await bad('POST', '/admin/v1/assets', { code: freshCode(), scale: 2, type: 'stock' });
  await bad('POST', '/admin/v1/assets', { code: freshCode(), scale: '2', type: 'fiat' });
  await bad('PATCH', '/admin/v1/assets/USDT', { enabled: 'no' });
  await bad('PATCH', '/admin/v1/assets/NOPE', { enabled: true }, 404, 'not_found');
  const network = { enabled: true, withdrawal_fee: '1', withdrawal_min: '1', address_pattern: '^T.+$' };
  await bad('PUT', '/admin/v1/assets/NOPE/networks/TRON', network, 404, 'not_found');
  await bad('PUT', '/admin/v1/assets/USD/networks/SWIFT', network);
  await bad('PUT', '/admin/v1/assets/USDT/networks/TRON', { ...network, withdrawal_fee: '0.0000001' });
  await bad('PUT', '/admin/v1/assets/USDT/networks/TRON', { ...network, withdrawal_min: '-1' });
  await bad('PUT', '/admin/v1/assets/USDT/networks/TRON', { ...network, withdrawal_fee: 1 });
  await bad('PUT', '/admin/v1/assets/USDT/networks/TRON', { ...network, address_pattern: '([' });
  await bad('PUT', '/admin/v1/assets/USDT/networks/tron', network);
  await bad('PUT', '/admin/v1/assets/USDT/networks/TRON', {
    withdrawal_fee: '1',
    withdrawal_min: '1',
    address_pattern: '^T.+$',
  });
  // Nothing above changed the seeded network.
  const usdt = await getAsset(service.ctx.db, 'USDT');
  assert.equal(usdt!.networks.find((n) => n.network === 'TRON')!.withdrawalFee, 1_000_000n);
});

test('GET /admin/v1/ledger/verify reports the ledger check', async () => {
  const res = await admin(service, 'GET', '/admin/v1/ledger/verify');
  assert.equal(res.status, 200);
  assert.equal(res.body.ok, true);
  assert.deepEqual(res.body.problems, []);
  assert.deepEqual(Object.keys(res.body.checked).sort(), ['accounts', 'entries', 'postings']);
});
