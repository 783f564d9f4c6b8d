import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MerchantWalletError } from '../src/index.js';
import { API_KEY, CLIENT_ID, errorBody, makeClient, startStub } from './helpers.js';

const ok = () => ({ body: { ok: true } });

test('token exchange: POST /v1/connect/token with x-client-id and x-api-key, no body; Bearer token sent', async (t) => {
  const stub = await startStub({ handle: ok });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await client.request({ method: 'GET', path: '/v1/assets' });
  assert.equal(stub.tokenRequests.length, 1);
  const tr = stub.tokenRequests[0]!;
  assert.equal(tr.method, 'POST');
  assert.equal(tr.headers['x-client-id'], CLIENT_ID);
  assert.equal(tr.headers['x-api-key'], API_KEY);
  assert.equal(tr.body.length, 0);
  assert.equal(tr.headers['content-type'], undefined);
  assert.equal(tr.headers['authorization'], undefined);
  assert.equal(stub.requests[0]!.headers['authorization'], 'Bearer tok_1');
  assert.equal(client.tokenInfo()?.token_type, 'Bearer');
});

test('token is cached across calls', async (t) => {
  const stub = await startStub({ handle: ok });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  for (let i = 0; i < 5; i++) await client.request({ method: 'GET', path: '/v1/assets' });
  assert.equal(stub.tokenRequests.length, 1);
  assert.equal(await client.getToken(), 'tok_1');
  assert.ok(stub.requests.every((r) => r.headers['authorization'] === 'Bearer tok_1'));
});

test('concurrent callers share one in-flight exchange', async (t) => {
  const stub = await startStub({ handle: ok, tokenDelayMs: 50 });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  const tokens = await Promise.all([
    client.getToken(),
    client.getToken(),
    ...Array.from({ length: 8 }, () => client.request({ method: 'GET', path: '/v1/assets' })),
  ]);
  assert.equal(stub.tokenRequests.length, 1);
  assert.equal(tokens[0], 'tok_1');
  assert.equal(tokens[1], 'tok_1');
  assert.equal(stub.requests.length, 8);
});

test('token is renewed about 60 s before expired_at', async (t) => {
  const stub = await startStub({ handle: ok, tokenTtlSec: 1800 });
  let now = Date.now();
  const { client } = makeClient(stub, { now: () => now });
  t.after(async () => {
    client.close();
    await stub.close();
  });
  assert.equal(await client.getToken(), 'tok_1');
  now += 1700_000; // 100 s before expiry: still good
  assert.equal(await client.getToken(), 'tok_1');
  assert.equal(stub.tokenRequests.length, 1);
  now += 50_000; // 50 s before expiry: inside the 60 s window
  assert.equal(await client.getToken(), 'tok_2');
  assert.equal(stub.tokenRequests.length, 2);
  await client.request({ method: 'GET', path: '/v1/assets' });
  assert.equal(stub.requests[0]!.headers['authorization'], 'Bearer tok_2');
});

test('a short-lived token is not treated as stale on arrival', async (t) => {
  const stub = await startStub({ handle: ok, tokenTtlSec: 40 });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await client.getToken();
  await client.getToken();
  assert.equal(stub.tokenRequests.length, 1);
});

test(
  '401 invalid_token: drop the token, exchange again and resend once (same idempotency key, new nonce)',
  { timeout: 5000 },
  async (t) => {
    const stub = await startStub({
      handle: (r) =>
        r.headers['authorization'] === 'Bearer tok_1'
          ? { status: 401, body: errorBody('invalid_token', 'authentication_error') }
          : { status: 201, body: { id: 'mem_1' } },
    });
    const { client, sleeps } = makeClient(stub);
    t.after(async () => {
      client.close();
      await stub.close();
    });
    const out = await client.request<{ id: string }>({
      method: 'POST',
      path: '/v1/members',
      body: { external_member_id: 'u1' },
    });
    assert.equal(out.id, 'mem_1');
    assert.equal(stub.tokenRequests.length, 2);
    assert.equal(stub.requests.length, 2);
    const [a, b] = stub.requests;
    assert.equal(b!.headers['authorization'], 'Bearer tok_2');
    assert.equal(a!.headers['x-idempotency-key'], b!.headers['x-idempotency-key']);
    assert.notEqual(a!.headers['x-nonce'], b!.headers['x-nonce']);
    assert.deepEqual(sleeps, [], 'the resend is immediate');
  },
);

test('invalid_token twice in a row: resent only once, then the error surfaces', { timeout: 5000 }, async (t) => {
  const stub = await startStub({
    handle: () => ({ status: 401, body: errorBody('invalid_token', 'authentication_error') }),
  });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await assert.rejects(client.request({ method: 'GET', path: '/v1/assets' }), (e: unknown) => {
    assert.ok(e instanceof MerchantWalletError);
    assert.equal(e.code, 'invalid_token');
    assert.equal(e.status, 401);
    return true;
  });
  assert.equal(stub.requests.length, 2);
  assert.equal(stub.tokenRequests.length, 2);
});

test('invalidateToken() forces a new exchange', async (t) => {
  const stub = await startStub({ handle: ok });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  assert.equal(await client.getToken(), 'tok_1');
  client.invalidateToken();
  assert.equal(await client.getToken(), 'tok_2');
});

test('invalid_credentials on exchange is not retried and surfaces as MerchantWalletError', async (t) => {
  const stub = await startStub({ handle: ok });
  const { client, sleeps } = makeClient(stub, { apiKey: 'wrong' });
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await assert.rejects(client.request({ method: 'GET', path: '/v1/assets' }), (e: unknown) => {
    assert.ok(e instanceof MerchantWalletError);
    assert.equal(e.code, 'invalid_credentials');
    assert.equal(e.requestId, 'req_tok');
    return true;
  });
  assert.equal(stub.tokenRequests.length, 1);
  assert.equal(stub.requests.length, 0);
  assert.deepEqual(sleeps, []);
});

test('token exchange rate-limited: waits Retry-After, then succeeds', async (t) => {
  const stub = await startStub({
    handle: ok,
    token: (_r, i) =>
      i === 0
        ? {
            status: 429,
            headers: { 'retry-after': '3' },
            body: { error: errorBody('rate_limited', 'rate_limit_error', { retry_after: 3 }) },
          }
        : undefined,
  });
  const { client, sleeps } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  assert.equal(await client.getToken(), 'tok_2');
  assert.deepEqual(sleeps, [3000]);
});

test(
  'a failing token exchange is attempted maxAttempts times in all, not retried again by the call that needed the token',
  { timeout: 5000 },
  async (t) => {
    const stub = await startStub({
      handle: () => ({ body: { data: [] } }),
      token: () => ({ status: 500, body: errorBody('api_error', 'api_error') }),
    });
    const { client, sleeps } = makeClient(stub, { maxAttempts: 3 });
    t.after(async () => {
      client.close();
      await stub.close();
    });
    await assert.rejects(client.request({ method: 'GET', path: '/v1/assets' }), (e: unknown) => {
      assert.ok(e instanceof MerchantWalletError);
      assert.equal(e.code, 'api_error');
      return true;
    });
    assert.equal(stub.tokenRequests.length, 3);
    assert.equal(sleeps.length, 2);
    assert.equal(stub.requests.length, 0);
  },
);
