import assert from 'node:assert/strict';
import * as net from 'node:net';
import { test } from 'node:test';
import { MerchantWalletConnectionError, MerchantWalletError } from '../src/index.js';
import { errorBody, makeClient, signatureValid, startStub, UUID_V4 } from './helpers.js';

test(
  'upstream_timeout (504) is retried with the same idempotency key, ' + 'new nonce and signature each attempt',
  async (t) => {
    const stub = await startStub({
      handle: (_r, i) =>
        i < 2
          ? { status: 504, body: errorBody('upstream_timeout', 'upstream_timeout') }
          : { status: 200, body: { id: 'wdr_1', status: 'settled', replayed: false } },
    });
    let now = 1_700_000_000_000;
    const { client, sleeps } = makeClient(stub, {
      retryBaseDelayMs: 100,
      retryMaxDelayMs: 1000,
      random: () => 0.999,
      // Each attempt happens one simulated second later, so timestamps must differ too.
      now: () => now,
      sleep: async (ms) => {
        sleeps.push(ms);
        now += 1000;
      },
    });
    t.after(async () => {
      client.close();
      await stub.close();
    });
    const out = await client.withdrawals.confirm('wdr_1');
    assert.equal(out.status, 'settled');
    assert.equal(stub.requests.length, 3);
    const keys = new Set(stub.requests.map((r) => r.headers['x-idempotency-key']));
    assert.equal(keys.size, 1, 'same idempotency key on every attempt');
    assert.match(String([...keys][0]), UUID_V4);
    const nonces = new Set(stub.requests.map((r) => r.headers['x-nonce']));
    assert.equal(nonces.size, 3, 'new nonce per attempt');
    const stamps = stub.requests.map((r) => Number(r.headers['x-timestamp']));
    assert.deepEqual(stamps, [1_700_000_000, 1_700_000_001, 1_700_000_002], 'new timestamp per attempt');
    assert.ok(stub.requests.every((r) => signatureValid(r)));
    // Exponential backoff with full jitter: floor(random * min(max, base * 2^i)).
    assert.deepEqual(sleeps, [99, 199]);
  },
);

test('a caller-supplied idempotency key is kept across retries', async (t) => {
  const stub = await startStub({
    handle: (_r, i) =>
      i === 0 ? { status: 500, body: errorBody('api_error', 'api_error') } : { status: 201, body: { id: 'dep_1' } },
  });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  const key = '11111111-2222-4333-8444-555555555555';
  await client.deposits.create({ member_id: 'm', asset: 'USDT', amount: '1', tx_hash: '0x1' }, { idempotencyKey: key });
  assert.deepEqual(
    stub.requests.map((r) => r.headers['x-idempotency-key']),
    [key, key],
  );
});

test('retries are bounded by maxAttempts and the last error is thrown', { timeout: 5000 }, async (t) => {
  const stub = await startStub({
    handle: () => ({ status: 502, body: errorBody('upstream_error', 'upstream_error') }),
  });
  const { client, sleeps } = makeClient(stub, { maxAttempts: 3 });
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await assert.rejects(client.request({ method: 'POST', path: '/v1/deposits', body: {} }), (e: unknown) => {
    assert.ok(e instanceof MerchantWalletError);
    assert.equal(e.code, 'upstream_error');
    assert.equal(e.status, 502);
    assert.equal(e.requestId, 'req_upstream_error');
    return true;
  });
  assert.equal(stub.requests.length, 3);
  assert.equal(sleeps.length, 2);
});

test('default maxAttempts is 4; backoff is capped by retryMaxDelayMs', { timeout: 5000 }, async (t) => {
  const stub = await startStub({ handle: () => ({ status: 500, raw: '<html>oops</html>' }) });
  const { client, sleeps } = makeClient(stub, { random: () => 0.999, retryBaseDelayMs: 1000, retryMaxDelayMs: 1500 });
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await assert.rejects(client.request({ method: 'GET', path: '/v1/assets' }), (e: unknown) => {
    assert.ok(e instanceof MerchantWalletError);
    assert.equal(e.code, 'api_error', 'non-JSON 500 falls back to api_error');
    assert.equal(e.status, 500);
    assert.match(e.requestId, /^req_/, 'requestId falls back to the x-request-id header');
    return true;
  });
  assert.equal(stub.requests.length, 4);
  assert.deepEqual(sleeps, [999, 1498, 1498]);
});

test('idempotency_in_progress (409) is retried with the same key after 1-2 s', async (t) => {
  const stub = await startStub({
    handle: (_r, i) =>
      i === 0
        ? { status: 409, body: errorBody('idempotency_in_progress', 'idempotency_error') }
        : { body: { id: 'x' } },
  });
  const { client, sleeps } = makeClient(stub, { random: () => 0.5 });
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await client.request({ method: 'POST', path: '/v1/withdrawals/wdr_1/confirm' });
  assert.equal(stub.requests.length, 2);
  assert.equal(stub.requests[0]!.headers['x-idempotency-key'], stub.requests[1]!.headers['x-idempotency-key']);
  assert.deepEqual(sleeps, [1500]);
});

test(
  'idempotency_in_progress again and again: 1-2 s, then backoff (doubling, ' + 'capped by retryMaxDelayMs)',
  async (t) => {
    const stub = await startStub({
      handle: (_r, i) =>
        i < 3
          ? { status: 409, body: errorBody('idempotency_in_progress', 'idempotency_error') }
          : { body: { id: 'x' } },
    });
    const { client, sleeps } = makeClient(stub, { random: () => 0.5, retryMaxDelayMs: 5000 });
    t.after(async () => {
      client.close();
      await stub.close();
    });
    await client.request({ method: 'POST', path: '/v1/withdrawals/wdr_1/confirm' });
    assert.equal(stub.requests.length, 4);
    assert.equal(new Set(stub.requests.map((r) => r.headers['x-idempotency-key'])).size, 1, 'the same key every time');
    assert.deepEqual(sleeps, [1500, 3000, 5000]);
  },
);

const NEVER_RETRIED: Array<[number, string, string]> = [
  [400, 'request_rejected', 'invalid_request_error'],
  [403, 'insufficient_scope', 'permission_error'],
  [403, 'ip_not_allowed', 'permission_error'],
  [403, 'merchant_disabled', 'permission_error'],
  [400, 'product_not_available', 'invalid_request_error'],
  [404, 'not_found', 'not_found'],
  [404, 'member_not_found', 'not_found'],
  [404, 'resource_not_found', 'not_found'],
  [400, 'order_not_cancellable', 'invalid_request_error'],
  [400, 'state_invalid', 'invalid_request_error'],
  [401, 'invalid_signature', 'authentication_error'],
  [401, 'timestamp_out_of_range', 'authentication_error'],
  [400, 'insufficient_balance', 'invalid_request_error'],
  [400, 'step_up_required', 'invalid_request_error'],
  [409, 'idempotency_key_reused', 'idempotency_error'],
  [400, 'service_unavailable', 'invalid_request_error'],
];

test('do-not-retry codes are attempted exactly once', { timeout: 5000 }, async (t) => {
  let reply = NEVER_RETRIED[0]!;
  const stub = await startStub({
    handle: () => ({ status: reply[0], body: errorBody(reply[1], reply[2], { challenge_id: 'chl_1' }) }),
  });
  const { client, sleeps } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  for (const entry of NEVER_RETRIED) {
    reply = entry;
    const before = stub.requests.length;
    await assert.rejects(
      client.request({ method: 'POST', path: '/v1/withdrawals', body: { a: 1 }, onBehalfOf: 'u1' }),
      (e: unknown) => {
        assert.ok(e instanceof MerchantWalletError);
        assert.equal(e.code, entry[1]);
        assert.equal(e.status, entry[0]);
        assert.equal(e.type, entry[2]);
        assert.equal(e.requestId, `req_${entry[1]}`);
        assert.equal(e.body['challenge_id'], 'chl_1', 'extra fields are kept in body');
        return true;
      },
    );
    assert.equal(stub.requests.length - before, 1, `${entry[1]} must not be retried`);
  }
  assert.deepEqual(sleeps, []);
});

test(
  "a code outside the reference's table is handled as api_error: retried once with the same key, then reported",
  { timeout: 5000 },
  async (t) => {
    let reply: [number, string] = [400, 'code_from_the_future'];
    const stub = await startStub({
      handle: () => ({ status: reply[0], body: errorBody(reply[1], 'invalid_request_error') }),
    });
    const { client, sleeps } = makeClient(stub);
    t.after(async () => {
      client.close();
      await stub.close();
    });
    // Whatever the status: a 400, a 409 and a 5xx (which would otherwise be retried up to maxAttempts).
    for (const entry of [
      [400, 'code_from_the_future'],
      [409, 'another_new_code'],
      [503, 'overloaded'],
    ] as Array<[number, string]>) {
      reply = entry;
      const before = stub.requests.length;
      await assert.rejects(
        client.request({ method: 'POST', path: '/v1/withdrawals', body: { a: 1 }, onBehalfOf: 'u1' }),
        (e: unknown) => {
          assert.ok(e instanceof MerchantWalletError);
          assert.equal(e.code, entry[1]);
          assert.equal(e.status, entry[0]);
          assert.equal(e.requestId, `req_${entry[1]}`, 'reported with its request_id');
          return true;
        },
      );
      const sent = stub.requests.slice(before);
      assert.equal(sent.length, 2, `${entry[1]}: one retry, no more`);
      assert.equal(sent[0]!.headers['x-idempotency-key'], sent[1]!.headers['x-idempotency-key'], 'same key');
      assert.notEqual(sent[0]!.headers['x-nonce'], sent[1]!.headers['x-nonce'], 'new nonce');
    }
    assert.equal(sleeps.length, 3);
  },
);

test('a code outside the table followed by success resolves with the success', async (t) => {
  const stub = await startStub({
    handle: (_r, i) =>
      i === 0
        ? { status: 400, body: errorBody('code_from_the_future', 'invalid_request_error') }
        : { status: 201, body: { id: 'wdr_1' } },
  });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  const out = await client.request<{ id: string }>({
    method: 'POST',
    path: '/v1/withdrawals',
    body: { a: 1 },
    onBehalfOf: 'u1',
  });
  assert.equal(out.id, 'wdr_1');
  assert.equal(stub.requests.length, 2);
});

test('429 rate_limited waits Retry-After (header) then retries', async (t) => {
  const stub = await startStub({
    handle: (_r, i) =>
      i === 0
        ? // The header wins over the body (the body value differs on purpose).
          {
            status: 429,
            headers: { 'retry-after': '60' },
            body: { error: errorBody('rate_limited', 'rate_limit_error', { retry_after: 59 }) },
          }
        : { status: 201, body: { id: 'mem_1' } },
  });
  const { client, sleeps } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await client.members.create({ external_member_id: 'u1' });
  assert.deepEqual(sleeps, [60_000]);
  assert.equal(stub.requests.length, 2);
  assert.equal(stub.requests[0]!.headers['x-idempotency-key'], stub.requests[1]!.headers['x-idempotency-key']);
  assert.notEqual(stub.requests[0]!.headers['x-nonce'], stub.requests[1]!.headers['x-nonce']);
});

test(
  '429 without header uses retry_after from the wrapped {error:{...}} body; exhausted 429 surfaces unwrapped',
  { timeout: 5000 },
  async (t) => {
    const stub = await startStub({
      handle: () => ({
        status: 429,
        body: { error: errorBody('rate_limited', 'rate_limit_error', { retry_after: 7 }) },
      }),
    });
    const { client, sleeps } = makeClient(stub, { maxAttempts: 2 });
    t.after(async () => {
      client.close();
      await stub.close();
    });
    await assert.rejects(client.request({ method: 'GET', path: '/v1/balances', onBehalfOf: 'u1' }), (e: unknown) => {
      assert.ok(e instanceof MerchantWalletError);
      assert.equal(e.status, 429);
      assert.equal(e.code, 'rate_limited');
      assert.equal(e.type, 'rate_limit_error');
      assert.equal(e.requestId, 'req_rate_limited');
      assert.equal(e.body['retry_after'], 7);
      return true;
    });
    assert.deepEqual(sleeps, [7000]);
    assert.equal(stub.requests.length, 2);
  },
);

test('429 with a flat body and retry_after only in the body', async (t) => {
  const stub = await startStub({
    handle: (_r, i) =>
      i === 0
        ? { status: 429, body: errorBody('rate_limited', 'rate_limit_error', { retry_after: 2 }) }
        : { body: { data: [], next_cursor: null, has_more: false } },
  });
  const { client, sleeps } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  assert.deepEqual(await client.assets.list(), []);
  assert.deepEqual(sleeps, [2000]);
});

test('connection reset (ECONNRESET) is retried with backoff and the same key', async (t) => {
  const stub = await startStub({
    handle: (_r, i) => (i === 0 ? { destroy: true } : { status: 201, body: { id: 'dep_1' } }),
    // Close the token connection so the business request starts on a fresh socket.
    token: () => ({
      headers: { connection: 'close' },
      body: { auth_token: 'tok_x', expired_at: Math.floor(Date.now() / 1000) + 1800, token_type: 'Bearer', scopes: [] },
    }),
  });
  const { client, sleeps } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  const out = await client.deposits.create({ member_id: 'm', asset: 'USDT', amount: '1', tx_hash: '0x1' });
  assert.equal(out.id, 'dep_1');
  assert.equal(stub.requests.length, 2);
  assert.equal(stub.requests[0]!.headers['x-idempotency-key'], stub.requests[1]!.headers['x-idempotency-key']);
  assert.notEqual(stub.requests[0]!.headers['x-nonce'], stub.requests[1]!.headers['x-nonce']);
  assert.equal(sleeps.length, 1, 'a reset on a fresh connection counts as an attempt and backs off');
});

test('a reset on a reused keep-alive socket is re-sent at once (also by requestRaw)', async (t) => {
  const stub = await startStub({
    handle: (_r, i) =>
      i === 0 ? { destroy: true } : { status: 400, body: errorBody('state_invalid', 'invalid_request_error') },
  });
  const { client, sleeps } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await client.getToken(); // opens the keep-alive socket the next request reuses
  const res = await client.requestRaw({ method: 'POST', path: '/v1/webhooks/deliveries/whd_1/redeliver' });
  assert.equal(res.status, 400);
  assert.equal(stub.requests.length, 2);
  assert.equal(stub.requests[0]!.headers['x-idempotency-key'], stub.requests[1]!.headers['x-idempotency-key']);
  assert.notEqual(stub.requests[0]!.headers['x-nonce'], stub.requests[1]!.headers['x-nonce']);
  assert.deepEqual(sleeps, []);
});

test('per-attempt timeout is retried, then surfaces as a connection error', async (t) => {
  const stub = await startStub({ handle: () => ({ hang: true }) });
  const { client, sleeps } = makeClient(stub, { timeoutMs: 400, maxAttempts: 2 });
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await client.getToken();
  await assert.rejects(client.request({ method: 'GET', path: '/v1/assets' }), (e: unknown) => {
    assert.ok(e instanceof MerchantWalletConnectionError);
    assert.ok(e instanceof MerchantWalletError);
    assert.equal(e.code, 'timeout');
    assert.equal(e.errno, 'ETIMEDOUT');
    assert.equal(e.status, 0);
    return true;
  });
  // Two attempts, one pause between them. (The stub counts the requests that reached it: on a
  // loaded machine the second can time out before its bytes are read, so that count is 1 or 2.)
  assert.equal(sleeps.length, 1);
  assert.ok(stub.requests.length >= 1 && stub.requests.length <= 2, String(stub.requests.length));
});

test('connection refused (ECONNREFUSED) is retried up to maxAttempts', { timeout: 5000 }, async () => {
  // Reserve a port, then close it so nothing listens there.
  const srv = net.createServer();
  await new Promise<void>((ok) => srv.listen(0, '127.0.0.1', ok));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((ok) => srv.close(() => ok()));
  const { client, sleeps } = makeClient({ baseUrl: `http://127.0.0.1:${port}` }, { maxAttempts: 3 });
  await assert.rejects(client.getToken(), (e: unknown) => {
    assert.ok(e instanceof MerchantWalletConnectionError);
    assert.equal(e.errno, 'ECONNREFUSED');
    assert.equal(e.code, 'network_error');
    return true;
  });
  assert.equal(sleeps.length, 2);
  client.close();
});

test('idempotencyKey: false sends no key; a GET never carries one', async (t) => {
  const stub = await startStub({ handle: () => ({ body: {} }) });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await client.request({ method: 'POST', path: '/v1/exchange/quotes', body: { a: 1 }, idempotencyKey: false });
  await client.request({ method: 'POST', path: '/v1/exchange/quotes', body: { a: 1 } });
  await client.request({ method: 'GET', path: '/v1/assets' });
  assert.equal(stub.requests[0]!.headers['x-idempotency-key'], undefined);
  assert.match(String(stub.requests[1]!.headers['x-idempotency-key']), UUID_V4);
  assert.equal(stub.requests[2]!.headers['x-idempotency-key'], undefined);
});

test('each logical call gets its own generated key', async (t) => {
  const stub = await startStub({ handle: () => ({ status: 201, body: {} }) });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await client.members.create({ external_member_id: 'a' });
  await client.members.create({ external_member_id: 'a' });
  assert.notEqual(stub.requests[0]!.headers['x-idempotency-key'], stub.requests[1]!.headers['x-idempotency-key']);
});

test(
  'a write sent without an idempotency key is not retried after a 5xx or a lost answer; a 429 still is',
  { timeout: 5000 },
  async (t) => {
    let mode: 'api_error' | 'timeout' | 'rate_limited' | 'ok' = 'api_error';
    const stub = await startStub({
      handle: () => {
        if (mode === 'timeout') return { hang: true };
        if (mode === 'ok') return { body: { ok: true } };
        if (mode === 'rate_limited') {
          mode = 'ok';
          return { status: 429, headers: { 'retry-after': '1' }, body: errorBody('rate_limited', 'rate_limit_error') };
        }
        return { status: 500, body: errorBody('api_error', 'api_error') };
      },
    });
    const { client, sleeps } = makeClient(stub, { timeoutMs: 150 });
    t.after(async () => {
      client.close();
      await stub.close();
    });
    await client.getToken();
    await assert.rejects(
      client.request({ method: 'POST', path: '/v1/remit/payees/pye_1/verify', idempotencyKey: false }),
      (e: unknown) => {
        assert.ok(e instanceof MerchantWalletError);
        assert.equal(e.code, 'api_error');
        return true;
      },
    );
    assert.equal(stub.requests.length, 1, 'a keyless write answered 500 is attempted once');
    mode = 'timeout';
    await assert.rejects(
      client.request({
        method: 'PATCH',
        path: '/v1/remit/payees/pye_1',
        body: { favorite: true },
        idempotencyKey: false,
      }),
      MerchantWalletConnectionError,
    );
    assert.equal(stub.requests.length, 2, 'a keyless write that timed out is attempted once');
    assert.deepEqual(sleeps, []);
    // A 429 is refused before anything runs: retried after Retry-After even without a key.
    mode = 'rate_limited';
    assert.deepEqual(
      await client.request({ method: 'POST', path: '/v1/qrpay/decode', body: { qr_code: 'x' }, idempotencyKey: false }),
      { ok: true },
    );
    assert.equal(stub.requests.length, 4);
    assert.deepEqual(sleeps, [1000]);
    // A write with a key is still retried with that key.
    mode = 'api_error';
    await assert.rejects(
      client.request({ method: 'POST', path: '/v1/members', body: { external_member_id: 'a' } }),
      MerchantWalletError,
    );
    assert.equal(stub.requests.length, 8);
    // So is a DELETE without one: the reference calls deletes naturally idempotent.
    await assert.rejects(
      client.request({ method: 'DELETE', path: '/v1/webhooks/endpoints/whe_1' }),
      MerchantWalletError,
    );
    assert.equal(stub.requests.length, 12, 'a keyless DELETE answered 500 is retried like a GET');
  },
);

test('a reset on a reused keep-alive socket is not re-sent for a write without a key', async (t) => {
  const stub = await startStub({ handle: () => ({ destroy: true }) });
  const { client, sleeps } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await client.getToken(); // opens the keep-alive socket the next request reuses
  await assert.rejects(
    client.request({ method: 'POST', path: '/v1/remit/payees/pye_1/verify', idempotencyKey: false }),
    MerchantWalletConnectionError,
  );
  assert.equal(stub.requests.length, 1);
  assert.deepEqual(sleeps, []);
});
