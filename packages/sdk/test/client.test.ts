import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MerchantWalletClient, MerchantWalletError, MerchantWalletInvalidRequestError } from '../src/index.js';
import {
  API_KEY,
  CLIENT_ID,
  errorBody,
  makeClient,
  signatureValid,
  SIGNING_KEY,
  startStub,
  UUID_V4,
} from './helpers.js';

test(
  'connectHost: TCP goes to 127.0.0.1 while Host stays the baseUrl host:port (and the signature still ' + 'verifies)',
  async (t) => {
    const stub = await startStub({ handle: () => ({ status: 201, body: { id: 'mem_1' } }) });
    const { client } = makeClient(
      { baseUrl: `http://api-sandbox.localhost:${stub.port}` },
      { connectHost: '127.0.0.1' },
    );
    t.after(async () => {
      client.close();
      await stub.close();
    });
    await client.members.create({ external_member_id: 'u1' });
    assert.equal(stub.tokenRequests[0]!.headers['host'], `api-sandbox.localhost:${stub.port}`);
    const r = stub.requests[0]!;
    assert.equal(r.headers['host'], `api-sandbox.localhost:${stub.port}`);
    assert.equal(r.url, '/v1/members');
    assert.ok(signatureValid(r));
  },
);

test('without connectHost the Host header is the baseUrl host:port', async (t) => {
  const stub = await startStub({ handle: () => ({ body: {} }) });
  const { client } = makeClient(stub, { userAgent: 'my-app/1.0' });
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await client.request({ method: 'GET', path: '/v1/assets' });
  assert.equal(stub.requests[0]!.headers['host'], `127.0.0.1:${stub.port}`);
  assert.equal(stub.requests[0]!.headers['user-agent'], 'my-app/1.0');
});

test('a base URL path prefix is part of the request line and of the signed path', async (t) => {
  const stub = await startStub({
    handle: (r) =>
      r.url === '/gw/v1/connect/token'
        ? {
            body: {
              auth_token: 'tok_gw',
              expired_at: Math.floor(Date.now() / 1000) + 1800,
              token_type: 'Bearer',
              scopes: [],
            },
          }
        : { body: { ok: true } },
  });
  const { client } = makeClient({ baseUrl: `${stub.baseUrl}/gw/` });
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await client.request({ method: 'POST', path: '/v1/members', query: { a: 1 }, body: { x: 1 } });
  const r = stub.requests[1]!;
  assert.equal(r.url, '/gw/v1/members?a=1');
  assert.equal(r.headers['authorization'], 'Bearer tok_gw');
  assert.ok(signatureValid(r));
});

test(
  'requestRaw never throws for HTTP errors, makes one attempt, ' + 'and returns status/headers/body/rawBody',
  async (t) => {
    const stub = await startStub({
      handle: () => ({ status: 504, body: errorBody('upstream_timeout', 'upstream_timeout') }),
    });
    const { client, sleeps } = makeClient(stub);
    t.after(async () => {
      client.close();
      await stub.close();
    });
    const res = await client.requestRaw({ method: 'POST', path: '/v1/withdrawals/wdr_1/confirm' });
    assert.equal(res.status, 504);
    assert.equal(res.body.code, 'upstream_timeout');
    assert.equal(res.rawBody, JSON.stringify(errorBody('upstream_timeout', 'upstream_timeout')));
    assert.match(String(res.headers['x-request-id']), /^req_/);
    assert.equal(stub.requests.length, 1);
    assert.deepEqual(sleeps, []);
    assert.ok(signatureValid(stub.requests[0]!));
    assert.match(String(stub.requests[0]!.headers['x-idempotency-key']), UUID_V4);
  },
);

test('error envelope: code/type/requestId/body with extra fields; message not relied upon', async (t) => {
  const stub = await startStub({
    handle: () => ({
      status: 400,
      headers: { 'x-request-id': 'req_header' },
      body: {
        type: 'invalid_request_error',
        code: 'invalid_fields',
        message: 'bad',
        fields: [{ key: 'fields.iban', reason: 'iban_checksum' }],
        reason: 'x',
      },
    }),
  });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await assert.rejects(
    client.request({ method: 'POST', path: '/v1/remit/payees', body: {}, onBehalfOf: 'u1' }),
    (e: unknown) => {
      assert.ok(e instanceof MerchantWalletError);
      assert.ok(e instanceof Error);
      assert.ok(e instanceof MerchantWalletInvalidRequestError, 'the class of its type');
      assert.equal(e.name, 'MerchantWalletInvalidRequestError');
      assert.equal(e.code, 'invalid_fields');
      assert.equal(e.type, 'invalid_request_error');
      assert.equal(e.status, 400);
      assert.equal(e.requestId, 'req_header', 'falls back to the x-request-id header');
      assert.deepEqual(e.body['fields'], [{ key: 'fields.iban', reason: 'iban_checksum' }]);
      assert.equal(e.body['reason'], 'x');
      return true;
    },
  );
});

test('resource helpers: method, path, headers, idempotency keys, unwrapped data', async (t) => {
  const list = (data: unknown[]) => ({ body: { data, next_cursor: null, has_more: false } });
  const stub = await startStub({
    handle: (r) => {
      const path = r.url.split('?')[0];
      if (r.method === 'GET' && path === '/v1/balances') return list([{ asset: 'USDT', available: '1.00' }]);
      if (r.method === 'GET' && path === '/v1/merchant/balances')
        return list([{ asset: 'USDT', custody: '5', prepaid_available: '0' }]);
      if (r.method === 'GET' && path === '/v1/assets')
        return list([{ code: 'USDT', scale: 6, type: 'crypto', networks: ['TRON'] }]);
      if (r.method === 'GET' && path === '/v1/webhooks/endpoints') return list([{ id: 'whe_1' }]);
      return { status: r.method === 'POST' ? 201 : 200, body: { echo: `${r.method} ${r.url}` } };
    },
  });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });

  const calls: Array<[() => Promise<unknown>, string, string, { key: boolean; obo?: string; body?: unknown }]> = [
    [
      () => client.members.create({ external_member_id: 'u1' }),
      'POST',
      '/v1/members',
      { key: true, body: { external_member_id: 'u1' } },
    ],
    [() => client.members.get('mem_1'), 'GET', '/v1/members/mem_1', { key: false }],
    [() => client.members.get('ext/1 x'), 'GET', '/v1/members/ext%2F1%20x', { key: false }],
    [() => client.members.suspend('u1'), 'POST', '/v1/members/u1/suspend', { key: true }],
    [() => client.members.revokeSessions('u1'), 'POST', '/v1/members/u1/sessions/revoke', { key: true }],
    [
      () => client.deposits.create({ member_id: 'u1', asset: 'USDT', amount: '10', tx_hash: '0x1', network: 'TRON' }),
      'POST',
      '/v1/deposits',
      { key: true, body: { member_id: 'u1', asset: 'USDT', amount: '10', tx_hash: '0x1', network: 'TRON' } },
    ],
    [() => client.balances.list({ onBehalfOf: 'u1' }), 'GET', '/v1/balances', { key: false, obo: 'u1' }],
    [() => client.merchant.balances(), 'GET', '/v1/merchant/balances', { key: false }],
    [() => client.assets.list(), 'GET', '/v1/assets', { key: false }],
    [
      () =>
        client.withdrawals.create({ asset: 'USDT', network: 'TRON', address: 'T1', amount: '1' }, { onBehalfOf: 'u1' }),
      'POST',
      '/v1/withdrawals',
      { key: true, obo: 'u1', body: { asset: 'USDT', network: 'TRON', address: 'T1', amount: '1' } },
    ],
    [() => client.withdrawals.get('wdr_1'), 'GET', '/v1/withdrawals/wdr_1', { key: false }],
    [
      () => client.withdrawals.get('wdr_1', { onBehalfOf: 'u1' }),
      'GET',
      '/v1/withdrawals/wdr_1',
      { key: false, obo: 'u1' },
    ],
    [() => client.withdrawals.confirm('wdr_1'), 'POST', '/v1/withdrawals/wdr_1/confirm', { key: true }],
    [() => client.withdrawals.fail('wdr_1'), 'POST', '/v1/withdrawals/wdr_1/fail', { key: true }],
    [
      () => client.webhooks.createEndpoint({ url: 'https://m.example/hook', event_types: ['*'] }),
      'POST',
      '/v1/webhooks/endpoints',
      { key: true, body: { url: 'https://m.example/hook', event_types: ['*'] } },
    ],
    [() => client.webhooks.listEndpoints(), 'GET', '/v1/webhooks/endpoints', { key: false }],
    [() => client.webhooks.deleteEndpoint('whe_1'), 'DELETE', '/v1/webhooks/endpoints/whe_1', { key: false }],
    [() => client.webhooks.redeliver('whd_1'), 'POST', '/v1/webhooks/deliveries/whd_1/redeliver', { key: true }],
  ];
  for (const [call, method, url, exp] of calls) {
    const before = stub.requests.length;
    await call();
    assert.equal(stub.requests.length, before + 1, `${method} ${url}: one request`);
    const r = stub.requests[before]!;
    assert.equal(r.method, method, url);
    assert.equal(r.url, url);
    if (exp.key) assert.match(String(r.headers['x-idempotency-key']), UUID_V4, `${url} needs an idempotency key`);
    else assert.equal(r.headers['x-idempotency-key'], undefined, `${url} must not carry an idempotency key`);
    assert.equal(r.headers['x-on-behalf-of'], exp.obo, `${url} x-on-behalf-of`);
    if (exp.body !== undefined) assert.deepEqual(r.json, exp.body);
    else assert.equal(r.body.length, 0);
    if (method !== 'GET') assert.ok(signatureValid(r), `${method} ${url} is signed`);
    else assert.equal(r.headers['x-signature'], undefined);
  }

  assert.deepEqual(await client.balances.list({ onBehalfOf: 'u1' }), [{ asset: 'USDT', available: '1.00' }]);
  assert.deepEqual(await client.merchant.balances(), [{ asset: 'USDT', custody: '5', prepaid_available: '0' }]);
  assert.deepEqual(await client.assets.list(), [{ code: 'USDT', scale: 6, type: 'crypto', networks: ['TRON'] }]);
  assert.deepEqual(await client.webhooks.listEndpoints(), [{ id: 'whe_1' }]);
  assert.deepEqual(
    await client.withdrawals.confirm('wdr_9', { idempotencyKey: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee' }),
    {
      echo: 'POST /v1/withdrawals/wdr_9/confirm',
    },
  );
  assert.equal(stub.requests.at(-1)!.headers['x-idempotency-key'], 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee');
});

test('option validation', () => {
  const base = { baseUrl: 'http://127.0.0.1:1', clientId: CLIENT_ID, apiKey: API_KEY, signingKey: SIGNING_KEY };
  assert.throws(() => new MerchantWalletClient({ ...base, baseUrl: 'ftp://x' }), TypeError);
  assert.throws(() => new MerchantWalletClient({ ...base, apiKey: '' }), TypeError);
  assert.throws(() => new MerchantWalletClient({ ...base, maxAttempts: 0 }), TypeError);
  assert.throws(() => new MerchantWalletClient({ ...base, baseUrl: 'http://x/?q=1' }), TypeError);
  assert.doesNotThrow(() => new MerchantWalletClient(base).close());
});
