import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { buildSigningString, signRequest } from '../src/index.js';
import { errorBody, makeClient, serverSignature, signatureValid, startStub, UUID_V4 } from './helpers.js';

test('signRequest matches an independently computed vector (openssl)', () => {
  // printf 'POST\n/v1/deposits?x=1&y=%2F\n1700000000\nn-1\n<sha256 hex of {"a":1}>' \
  //   | openssl dgst -sha256 -hmac sk_vector -binary | base64
  const sig = signRequest({
    method: 'post',
    pathWithQuery: '/v1/deposits?x=1&y=%2F',
    timestamp: 1700000000,
    nonce: 'n-1',
    rawBody: Buffer.from('{"a":1}'),
    signingKey: 'sk_vector',
  });
  assert.equal(sig, '/1nQ6HfXiwGXEsRXgRGDRtvxGfZq9tyo+Dv8K9XDy9Y=');
  assert.equal(sig.length, 44);
  // Empty body: the SHA-256 of zero bytes is part of the string.
  const empty = signRequest({
    method: 'DELETE',
    pathWithQuery: '/v1/webhooks/endpoints/whe_1',
    timestamp: '1700000000',
    nonce: 'n-2',
    rawBody: Buffer.alloc(0),
    signingKey: 'sk_vector',
  });
  assert.equal(empty, 'jouzIwqtKj9ZKsDGxiMfzSfnoW0mC2KQpq+28W0RKj0=');
  assert.equal(
    buildSigningString({ method: 'delete', pathWithQuery: '/p?q=1', timestamp: 5, nonce: 'n' }),
    'DELETE\n/p?q=1\n5\nn\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  );
});

test('signed POST: server recomputes the signature from the raw bytes and the path as received', async (t) => {
  const stub = await startStub({ handle: () => ({ status: 201, body: { ok: true } }) });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  const body = { member_id: 'mem_1', asset: 'USDT', amount: '10.50', tx_hash: '0xabc', note: 'é ünïcode ✓' };
  await client.request({
    method: 'POST',
    path: '/v1/deposits',
    query: { b: 'x y/z', a: 2, skipped: undefined, c: 'ä&=' },
    body,
  });
  assert.equal(stub.requests.length, 1);
  const r = stub.requests[0]!;
  // Query kept in insertion order, percent-encoded once, undefined skipped.
  assert.equal(r.url, '/v1/deposits?b=x%20y%2Fz&a=2&c=%C3%A4%26%3D');
  assert.equal(r.body.toString('utf8'), JSON.stringify(body));
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(Number(r.headers['content-length']), r.body.length);
  assert.match(String(r.headers['x-timestamp']), /^\d{10}$/, 'x-timestamp is Unix seconds');
  assert.ok(Math.abs(Number(r.headers['x-timestamp']) - Date.now() / 1000) < 5);
  assert.match(String(r.headers['x-nonce']), UUID_V4);
  assert.match(String(r.headers['x-idempotency-key']), UUID_V4);
  assert.equal(r.headers['authorization'], 'Bearer tok_1');
  assert.equal(r.headers['x-signature'], serverSignature(r));
  assert.equal(String(r.headers['x-signature']).length, 44);
});

test('signing covers a path that already carries a query string', async (t) => {
  const stub = await startStub({ handle: () => ({ body: {} }) });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await client.request({ method: 'PATCH', path: '/v1/x?z=1', query: { a: 'b' }, body: { n: 1 } });
  const r = stub.requests[0]!;
  assert.equal(r.url, '/v1/x?z=1&a=b');
  assert.ok(signatureValid(r));
});

test('DELETE without body: signed over zero bytes, no content-type, no idempotency key by default', async (t) => {
  const stub = await startStub({ handle: () => ({ status: 204 }) });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  const out = await client.webhooks.deleteEndpoint('whe_1');
  assert.equal(out, undefined);
  const r = stub.requests[0]!;
  assert.equal(r.method, 'DELETE');
  assert.equal(r.url, '/v1/webhooks/endpoints/whe_1');
  assert.equal(r.body.length, 0);
  assert.equal(r.headers['content-type'], undefined);
  assert.equal(r.headers['x-idempotency-key'], undefined);
  assert.ok(r.headers['x-signature'], 'DELETE is signed');
  assert.ok(signatureValid(r));
  // The body hash used must be the hash of the empty string.
  const e3 = createHash('sha256').update('').digest('hex');
  assert.equal(e3, 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
});

test('POST without body (e.g. confirm): zero bytes, no content-type, still signed', async (t) => {
  const stub = await startStub({ handle: () => ({ body: { id: 'wdr_1', status: 'settled', replayed: false } }) });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await client.withdrawals.confirm('wdr_1');
  const r = stub.requests[0]!;
  assert.equal(r.body.length, 0);
  assert.equal(r.headers['content-type'], undefined);
  assert.equal(r.headers['content-length'], '0');
  assert.ok(signatureValid(r));
});

test('GET is not signed', async (t) => {
  const stub = await startStub({ handle: () => ({ body: { data: [], next_cursor: null, has_more: false } }) });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await client.assets.list();
  const r = stub.requests[0]!;
  assert.equal(r.method, 'GET');
  assert.equal(r.headers['x-signature'], undefined);
  assert.equal(r.headers['x-nonce'], undefined);
  assert.equal(r.headers['x-timestamp'], undefined);
  assert.equal(r.headers['x-idempotency-key'], undefined);
  assert.equal(r.headers['content-type'], undefined);
});

test('the body is serialised once, and retries send the same bytes', async (t) => {
  const stub = await startStub({
    handle: (_r, i) =>
      i === 0 ? { status: 502, body: errorBody('upstream_error', 'upstream_error') } : { status: 201, body: {} },
  });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  let serialisations = 0;
  const body = {
    amount: '1.00',
    toJSON() {
      serialisations++;
      // Different output on every call: a second serialisation would change the bytes.
      return { amount: '1.00', n: serialisations };
    },
  };
  await client.request({ method: 'POST', path: '/v1/deposits', body });
  assert.equal(serialisations, 1);
  assert.equal(stub.requests.length, 2);
  assert.deepEqual(stub.requests[0]!.body, stub.requests[1]!.body);
  assert.equal(stub.requests[1]!.body.toString(), '{"amount":"1.00","n":1}');
  assert.ok(signatureValid(stub.requests[0]!));
  assert.ok(signatureValid(stub.requests[1]!));
});

test('a wrong signing key is detected by the server-side check (the check can fail)', async (t) => {
  const stub = await startStub({ handle: () => ({ body: {} }) });
  const { client } = makeClient(stub, { signingKey: 'another_key' });
  t.after(async () => {
    client.close();
    await stub.close();
  });
  await client.request({ method: 'POST', path: '/v1/members', body: { external_member_id: 'u1' } });
  assert.equal(signatureValid(stub.requests[0]!), false);
  assert.equal(signatureValid(stub.requests[0]!, 'another_key'), true);
});

test('requestRaw: fixed timestamp/nonce feed the signature; header overrides break it on purpose', async (t) => {
  const stub = await startStub({
    handle: () => ({ status: 401, body: errorBody('invalid_signature', 'authentication_error') }),
  });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  const res = await client.requestRaw({
    method: 'POST',
    path: '/v1/members',
    body: { a: 1 },
    timestamp: 1700000000,
    nonce: 'fixed-nonce',
  });
  assert.equal(res.status, 401);
  assert.equal(res.body.code, 'invalid_signature');
  assert.equal(stub.requests.length, 1, 'requestRaw makes one attempt');
  const r0 = stub.requests[0]!;
  assert.equal(r0.headers['x-timestamp'], '1700000000');
  assert.equal(r0.headers['x-nonce'], 'fixed-nonce');
  assert.ok(signatureValid(r0));

  await client.requestRaw({
    method: 'POST',
    path: '/v1/members',
    body: { a: 1 },
    headers: { 'X-Nonce': 'tampered', 'x-signature': undefined },
  });
  const r1 = stub.requests[1]!;
  assert.equal(r1.headers['x-nonce'], 'tampered');
  assert.equal(r1.headers['x-signature'], undefined);

  await client.requestRaw({ method: 'POST', path: '/v1/members', rawBody: '{"a":1 }' });
  const r2 = stub.requests[2]!;
  assert.equal(r2.body.toString(), '{"a":1 }');
  assert.ok(signatureValid(r2));
});
