import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { REFERENCE_CODES } from '../packages/sdk/src/retry.js';
import type { RunningService } from '../src/server.js';
import { allErrorCodes, errorStatus, errorType } from '../src/platform/errors.js';
import { rawRequest, signedHeaders, signedPost as signed } from './support/raw-http.js';
import { fundedMember } from './support/fixtures.js';
import { baseUrlFor, newMerchantClient, startTestService, useTestService } from './support/service.js';

describe('errors and the request pipeline', () => {
  let service: RunningService;
  useTestService({ config: { bodyLimitBytes: 4096 }, merchant: false }, (s) => ({ service } = s));

  it('maps every code to the type and HTTP status of the reference table', () => {
    const statusByType: Record<string, number> = {
      invalid_request_error: 400,
      authentication_error: 401,
      permission_error: 403,
      not_found: 404,
      idempotency_error: 409,
      rate_limit_error: 429,
      api_error: 500,
      upstream_error: 502,
      upstream_timeout: 504,
    };
    const expected: Record<string, number> = {
      invalid_credentials: 401,
      invalid_token: 401,
      invalid_signature: 401,
      signature_required: 401,
      timestamp_out_of_range: 401,
      nonce_reused: 401,
      environment_mismatch: 400,
      insufficient_scope: 403,
      ip_not_allowed: 403,
      merchant_disabled: 403,
      idempotency_key_required: 400,
      idempotency_key_invalid: 400,
      quote_lock_unsupported: 400,
      idempotency_key_reused: 409,
      idempotency_in_progress: 409,
      member_not_found: 404,
      member_context_required: 400,
      member_suspended: 400,
      kyc_required: 400,
      insufficient_balance: 400,
      merchant_insufficient_funds: 400,
      merchant_custody_shortfall: 400,
      product_not_available: 400,
      limit_exceeded: 400,
      amount_out_of_range: 400,
      request_rejected: 400,
      step_up_required: 400,
      order_not_cancellable: 400,
      asset_not_allowed: 400,
      invalid_request: 400,
      invalid_fields: 400,
      corridor_not_supported: 400,
      resource_not_found: 404,
      state_invalid: 400,
      duplicate_resource: 409,
      address_not_allowed: 400,
      qr_code_invalid: 400,
      not_found: 404,
      rate_limited: 429,
      api_error: 500,
      upstream_error: 502,
      upstream_timeout: 504,
      service_unavailable: 400,
    };
    assert.deepEqual([...allErrorCodes].sort(), Object.keys(expected).sort());
    for (const code of allErrorCodes) {
      assert.equal(errorStatus(code), expected[code], code);
      assert.equal(statusByType[errorType(code)], expected[code], `${code} type`);
    }
    assert.equal(errorType('insufficient_balance'), 'invalid_request_error');
    // The SDK retries a code outside this table once (the reference): it must know the same table.
    assert.deepEqual([...REFERENCE_CODES].sort(), [...allErrorCodes].sort(), "the SDK's table is the server's");
  });

  it('answers an unknown path with 404 not_found and X-Request-Id equal to request_id', async () => {
    const res = await rawRequest(`${service.publicUrl}/v1/nothing-here`);
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'not_found');
    assert.equal(res.body.type, 'not_found');
    assert.match(res.body.request_id, /^req_/);
    assert.equal(res.headers['x-request-id'], res.body.request_id);
  });

  it('puts X-Request-Id on successful responses too', async () => {
    const res = await rawRequest(`${service.publicUrl}/healthz`);
    assert.equal(res.status, 200);
    assert.match(String(res.headers['x-request-id']), /^req_/);
  });

  async function signedPost(path: string, body: string, extra: Record<string, string> = {}) {
    const { client, creds } = await newMerchantClient(service);
    const to = {
      publicUrl: service.publicUrl,
      host: new URL(baseUrlFor(service, creds.environment)).host,
      token: await client.getToken(),
      signingKey: creds.signingKey,
    };
    return signed(to, path, body, { headers: extra });
  }

  it('answers invalid_request for a body that is not JSON, without internal detail', async () => {
    const res = await signedPost('/v1/members', '{"external_member_id": ');
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'invalid_request');
    assert.equal(res.body.type, 'invalid_request_error');
    assert.doesNotMatch(res.text, /at |node_modules|stack|SyntaxError|\.ts:/);
  });

  it('answers invalid_request for a missing field, a wrong type and a body over the size limit', async () => {
    const missing = await signedPost('/v1/members', '{}');
    assert.equal(missing.body.code, 'invalid_request');
    assert.match(missing.body.message, /external_member_id/);
    const wrongType = await signedPost('/v1/members', '{"external_member_id": 42}');
    assert.equal(wrongType.body.code, 'invalid_request');
    const big = await signedPost('/v1/members', JSON.stringify({ external_member_id: 'x', pad: 'y'.repeat(5000) }));
    assert.equal(big.status, 400);
    assert.equal(big.body.code, 'invalid_request');
  });

  it('refuses x-on-behalf-of on an endpoint that acts as the merchant', async () => {
    const { client } = await newMerchantClient(service);
    const res = await client.requestRaw({ method: 'GET', path: '/v1/members/x', onBehalfOf: 'someone' });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'invalid_request');
  });

  it(
    'refuses a blank x-on-behalf-of where it is optional, ' + 'instead of acting as the merchant for every member',
    async () => {
      const { client } = await newMerchantClient(service);
      await fundedMember(client, '5', 'USDT', { external: 'blank-obo', txHashPrefix: 'blank-' });
      // GET /v1/deposits acts as the merchant without the header, on behalf of the member with it.
      assert.equal((await client.requestRaw({ method: 'GET', path: '/v1/deposits' })).body.data.length, 1);
      for (const blank of ['', '   ']) {
        const res = await client.requestRaw({ method: 'GET', path: '/v1/deposits', onBehalfOf: blank });
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.equal(res.body.code, 'member_context_required');
        assert.equal(res.body.request_id, res.headers['x-request-id']);
      }
    },
  );

  it('answers 403 on a route registered without an access declaration', async () => {
    const { buildPublicApp } = await import('../src/platform/http/http-app.js');
    const app = buildPublicApp(service.ctx);
    app.get('/v1/undeclared', async () => ({ secret: true }));
    await app.ready();
    const res = await app.inject({ method: 'GET', url: '/v1/undeclared' });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().code, 'insufficient_scope');
    await app.close();
  });
});

describe('a request that reaches the listener while it closes', () => {
  /** The HTTP/1.1 answers read from one connection, in order. */
  function answersIn(raw: Buffer): Array<{ status: number; headers: Record<string, string>; body: any }> {
    const answers = [];
    let rest = raw;
    while (rest.length > 0) {
      const end = rest.indexOf('\r\n\r\n');
      if (end < 0) break;
      const [statusLine = '', ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines)
        headers[line.slice(0, line.indexOf(':')).trim().toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      const length = Number(headers['content-length'] ?? 0);
      const text = rest.subarray(end + 4, end + 4 + length).toString('utf8');
      answers.push({ status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(text) });
      rest = rest.subarray(end + 4 + length);
    }
    return answers;
  }

  /** A raw connection to the public listener: what it receives, and when it closes. */
  function openConnection(service: RunningService) {
    const socket = connect(Number(new URL(service.publicUrl).port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const ended = new Promise<void>((resolve, reject) => {
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    return { socket, chunks, ended };
  }

  /** The answer to a request that reached the listener after its close began. */
  function assertRefusedWhileClosing(
    answer: { status: number; headers: Record<string, string>; body: any } | undefined,
  ): void {
    assert.equal(answer?.status, 500, JSON.stringify(answer?.body));
    assert.equal(answer.body.code, 'api_error');
    assert.equal(answer.body.type, 'api_error');
    assert.match(answer.body.message, /shutting down/);
    assert.match(answer.headers['x-request-id'] ?? '', /^req_/);
    assert.equal(answer.body.request_id, answer.headers['x-request-id']);
    assert.equal(answer.headers.connection, 'close');
  }

  it(
    'answers 500 api_error in the envelope (retry with the same key), X-Request-Id and Connection: ' + 'close',
    async () => {
      const service = await startTestService();
      let closing: Promise<void> | undefined;
      try {
        const { client, creds } = await newMerchantClient(service);
        const token = await client.getToken();
        const to = { host: new URL(baseUrlFor(service, creds.environment)).host, token, signingKey: creds.signingKey };
        const post = (externalId: string) => {
          const body = JSON.stringify({ external_member_id: externalId });
          const headers = {
            ...signedHeaders(to, '/v1/members', body),
            'content-length': String(Buffer.byteLength(body)),
          };
          const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
          return `POST /v1/members HTTP/1.1\r\n${lines.join('')}\r\n${body}`;
        };
        const { socket, chunks, ended } = openConnection(service);
        // The first request is under way when the close begins: its body is not all there yet.
        const first = post('before-close');
        socket.write(first.slice(0, -5));
        await new Promise((r) => setTimeout(r, 500));
        closing = service.close();
        while (service.publicApp.server.listening) await new Promise((r) => setTimeout(r, 5));
        // The rest of it, and a second request on the same connection.
        socket.write(first.slice(-5) + post('while-closing'));
        await ended;
        const [a, b, ...more] = answersIn(Buffer.concat(chunks));
        assert.equal(more.length, 0);
        assert.equal(a?.status, 201, JSON.stringify(a?.body));
        assertRefusedWhileClosing(b);
      } finally {
        await (closing ?? service.close());
      }
    },
  );

  it(
    '/healthz, which runs no hook (its handler sets the id): 200 with X-Request-Id, then 500 api_error with ' +
      'Connection: close once the close began',
    async () => {
      const service = await startTestService();
      let closing: Promise<void> | undefined;
      try {
        const get = 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n';
        const { socket, chunks, ended } = openConnection(service);
        // A second request on the connection: the first's body is not all there when the close begins.
        const body = '{"a":1}';
        socket.write(
          get +
            (`POST /healthz-missing HTTP/1.1\r\nHost: localhost\r\nContent-Type: ` +
              `application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, -2)}`),
        );
        while (chunks.length === 0) await new Promise((r) => setTimeout(r, 5));
        closing = service.close();
        while (service.publicApp.server.listening) await new Promise((r) => setTimeout(r, 5));
        socket.write(body.slice(-2) + get);
        await ended;
        const [first, missing, during, ...more] = answersIn(Buffer.concat(chunks));
        assert.equal(more.length, 0);
        assert.equal(first?.status, 200, JSON.stringify(first?.body));
        assert.deepEqual(first.body, { ok: true });
        assert.match(first.headers['x-request-id'] ?? '', /^req_[0-9a-f-]{36}$/);
        assert.equal(missing?.status, 404, JSON.stringify(missing?.body));
        assert.equal(missing.body.request_id, missing.headers['x-request-id']);
        assertRefusedWhileClosing(during);
      } finally {
        await (closing ?? service.close());
      }
    },
  );
});
