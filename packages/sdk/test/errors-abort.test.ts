import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  MerchantWalletAbortError,
  MerchantWalletAPIError,
  MerchantWalletAuthenticationError,
  MerchantWalletConnectionError,
  MerchantWalletError,
  MerchantWalletIdempotencyError,
  MerchantWalletInvalidRequestError,
  MerchantWalletNotFoundError,
  MerchantWalletPermissionError,
  MerchantWalletRateLimitError,
  MerchantWalletUpstreamError,
  StepUpRequiredError,
} from '../src/index.js';
import { errorBody, makeClient, startStub, type StubReply } from './helpers.js';

async function rejection(reply: StubReply, opts: { maxAttempts?: number } = {}): Promise<MerchantWalletError> {
  const stub = await startStub({ handle: () => reply });
  const { client } = makeClient(stub, { maxAttempts: opts.maxAttempts ?? 1 });
  try {
    await client.request({ method: 'POST', path: '/v1/members', body: { external_member_id: 'u1' } });
  } catch (e) {
    assert.ok(e instanceof MerchantWalletError, String(e));
    return e;
  } finally {
    client.close();
    await stub.close();
  }
  throw new Error('no rejection');
}

test(
  'one error class per type of the reference, each a MerchantWalletError with code, type, status, request_id, ' +
    'message and the raw body',
  async () => {
    const cases: [number, string, string, new (...a: never[]) => MerchantWalletError][] = [
      [400, 'invalid_request_error', 'insufficient_balance', MerchantWalletInvalidRequestError],
      [401, 'authentication_error', 'invalid_signature', MerchantWalletAuthenticationError],
      [403, 'permission_error', 'insufficient_scope', MerchantWalletPermissionError],
      [404, 'not_found', 'member_not_found', MerchantWalletNotFoundError],
      [409, 'idempotency_error', 'idempotency_key_reused', MerchantWalletIdempotencyError],
      [429, 'rate_limit_error', 'rate_limited', MerchantWalletRateLimitError],
      [500, 'api_error', 'api_error', MerchantWalletAPIError],
      [502, 'upstream_error', 'upstream_error', MerchantWalletUpstreamError],
      [504, 'upstream_timeout', 'upstream_timeout', MerchantWalletUpstreamError],
    ];
    for (const [status, type, code, Class] of cases) {
      const raw = JSON.stringify(errorBody(code, type, { extra: 1 }));
      const e = await rejection({ status, raw, headers: { 'content-type': 'application/json', 'retry-after': '0' } });
      assert.ok(e instanceof Class, `${type} → ${Class.name}, got ${e.name}`);
      assert.equal(e.name, Class.name);
      assert.ok(e instanceof Error);
      assert.equal(e.status, status);
      assert.equal(e.type, type);
      assert.equal(e.code, code);
      assert.equal(e.requestId, `req_${code}`);
      assert.equal(e.request_id, `req_${code}`);
      assert.match(e.message, new RegExp(`^${code}: ${code} happened`));
      assert.equal(e.rawBody, raw);
      assert.equal(e.body['extra'], 1);
      for (const [, , , Other] of cases)
        if (Other !== Class) assert.ok(!(e instanceof Other), `${e.name} is not a ${Other.name}`);
    }
  },
);

test(
  'error classes: chosen by the status when the body has no type; an unknown type stays the base class; ' +
    'step-up and rate-limit extras',
  async () => {
    assert.ok((await rejection({ status: 403, raw: 'forbidden' })) instanceof MerchantWalletPermissionError);
    assert.ok((await rejection({ status: 503, raw: '' })) instanceof MerchantWalletAPIError);
    const unknown = await rejection({ status: 400, body: errorBody('brand_new', 'brand_new_error') });
    assert.equal(unknown.constructor, MerchantWalletError);
    const stepUp = await rejection({
      status: 400,
      body: errorBody('step_up_required', 'invalid_request_error', {
        challenge_id: 'kyc_1',
        hosted_url: 'https://h',
        expires_at: 1,
      }),
    });
    assert.ok(stepUp instanceof StepUpRequiredError && stepUp instanceof MerchantWalletInvalidRequestError);
    const limited = await rejection({
      status: 429,
      headers: { 'retry-after': '7' },
      body: { error: errorBody('rate_limited', 'rate_limit_error') },
    });
    assert.ok(limited instanceof MerchantWalletRateLimitError);
    assert.equal(limited.retryAfter, 7);
  },
);

test('timeout: the client default, a per-call timeoutMs and withOptions each bound an attempt', async () => {
  const stub = await startStub({
    handle: (r) => (r.url.startsWith('/v1/slow') ? { hang: true } : { body: { ok: true } }),
  });
  const { client } = makeClient(stub, { maxAttempts: 2, timeoutMs: 150 });
  try {
    const t0 = Date.now();
    await assert.rejects(client.request({ method: 'GET', path: '/v1/slow/a' }), (e: unknown) => {
      assert.ok(e instanceof MerchantWalletConnectionError);
      assert.equal(e.code, 'timeout');
      return true;
    });
    assert.equal(stub.requests.length, 2, 'a timed-out GET is retried (maxAttempts 2)');
    assert.ok(Date.now() - t0 >= 280, 'two attempts of 150 ms');

    const t1 = Date.now();
    await assert.rejects(client.request({ method: 'GET', path: '/v1/slow/b', timeoutMs: 40 }), { code: 'timeout' });
    assert.ok(Date.now() - t1 < 140, `per call: 2 × 40 ms, not the client's 150 (took ${Date.now() - t1} ms)`);

    const t2 = Date.now();
    await assert.rejects(
      client
        .withOptions({ timeoutMs: 40 })
        .members.get('u1')
        .then(() => client.request({ method: 'GET', path: '/v1/slow/c' })),
      { code: 'timeout' },
    );
    assert.ok(
      Date.now() - t2 >= 280,
      'withOptions scopes its timeout to the returned object, the client keeps its own',
    );
    const t3 = Date.now();
    await assert.rejects(client.withOptions({ timeoutMs: 40 }).request({ method: 'GET', path: '/v1/slow/d' }), {
      code: 'timeout',
    });
    assert.ok(Date.now() - t3 < 140);
    assert.throws(() => client.withOptions({ timeoutMs: 0 }), TypeError);
  } finally {
    client.close();
    await stub.close();
  }
});

test('AbortSignal: aborts a call in flight, before it is sent and while it waits to retry; never retried', async () => {
  const stub = await startStub({
    handle: (r) =>
      r.url === '/v1/hang' ? { hang: true } : { status: 502, body: errorBody('upstream_error', 'upstream_error') },
  });
  const { client } = makeClient(stub, {
    maxAttempts: 5,
    sleep: (ms) => new Promise((ok) => setTimeout(ok, ms)),
    retryBaseDelayMs: 10_000,
    retryMaxDelayMs: 10_000,
    random: () => 0.99,
  });
  try {
    const inFlight = new AbortController();
    const p = client.request({ method: 'GET', path: '/v1/hang', signal: inFlight.signal });
    setTimeout(() => inFlight.abort(new Error('user left')), 50);
    await assert.rejects(p, (e: unknown) => {
      assert.ok(e instanceof MerchantWalletAbortError && e instanceof MerchantWalletError);
      assert.equal(e.code, 'aborted');
      assert.equal((e.cause as Error).message, 'user left');
      return true;
    });
    assert.equal(stub.requests.length, 1, 'an aborted attempt is not retried');

    await assert.rejects(
      client.request({ method: 'POST', path: '/v1/members', body: {}, signal: AbortSignal.abort() }),
      MerchantWalletAbortError,
    );
    assert.equal(stub.requests.length, 1, 'an already aborted signal sends nothing');

    // The 502 is retried after a 10 s backoff; the abort ends that wait.
    const waiting = new AbortController();
    const t0 = Date.now();
    const q = client.withOptions({ signal: waiting.signal }).members.create({ external_member_id: 'u1' });
    setTimeout(() => waiting.abort(), 100);
    await assert.rejects(q, MerchantWalletAbortError);
    assert.ok(Date.now() - t0 < 2000, 'the backoff wait ends at the abort');
    assert.equal(stub.requests.length, 2, 'one attempt, then aborted during the wait');
  } finally {
    client.close();
    await stub.close();
  }
});

test(
  'AbortSignal: a caller waiting for the shared token exchange is released; ' + 'the exchange goes on for the others',
  async () => {
    const stub = await startStub({ tokenDelayMs: 300, handle: () => ({ body: { ok: true } }) });
    const { client } = makeClient(stub);
    try {
      const ac = new AbortController();
      const aborted = client.request({ method: 'GET', path: '/v1/a', signal: ac.signal });
      const other = client.request({ method: 'GET', path: '/v1/b' });
      setTimeout(() => ac.abort(), 30);
      await assert.rejects(aborted, MerchantWalletAbortError);
      assert.deepEqual(await other, { ok: true });
      assert.equal(stub.tokenRequests.length, 1);
      assert.deepEqual(
        stub.requests.map((r) => r.url),
        ['/v1/b'],
      );
    } finally {
      client.close();
      await stub.close();
    }
  },
);
