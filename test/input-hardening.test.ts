import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { decodeCursor, encodeCursor } from '../src/platform/routes/pagination.js';
import {
  findUnsafeRequestText,
  findUnsafeText,
  jsonDepthExceeds,
  jsonDepthMax,
} from '../src/platform/http/validation.js';
import { payNow } from './support/emv.js';
import { rawRequest } from './support/raw-http.js';
import { baseUrlFor, useTestService } from './support/service.js';
import { fundedMember, TRON } from './support/fixtures.js';

/**
 * Bad input that once answered 500 or a framework body (issue 9, points 12 to 14 and 16 to 18):
 * every answer is a 4xx in the envelope whose request_id is the X-Request-Id header.
 */

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

function assertEnvelope(res: Answer, status: number, code: string, label: string): void {
  assert.equal(res.status, status, `${label}: ${res.status} ${JSON.stringify(res.body)}`);
  assert.equal(res.body?.code, code, `${label}: ${JSON.stringify(res.body)}`);
  assert.equal(typeof res.body.type, 'string', label);
  assert.equal(typeof res.body.message, 'string', label);
  assert.match(String(res.headers['x-request-id']), /^req_[0-9a-f-]{36}$/, `${label}: X-Request-Id`);
  assert.equal(res.body.request_id, res.headers['x-request-id'], `${label}: request_id`);
}

/** One request written on a socket byte for byte (Node's client refuses a NUL in a header). */
function rawSocket(url: string, text: string): Promise<Answer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = raw.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      let parsed: unknown = body;
      try {
        parsed = JSON.parse(body);
      } catch {
        /* not JSON */
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: parsed });
    });
    socket.end(text);
  });
}

describe('pure input checks', () => {
  it('finds NUL and unpaired surrogates in values and keys, at any depth, and nothing else', () => {
    assert.equal(findUnsafeText({ a: 'fine', b: ['ok', { c: 'x\u0000y' }] }), '/b/1/c');
    assert.equal(findUnsafeText({ 'k\u0000': 1 }), '/k\u0000');
    assert.equal(findUnsafeText(['\ud800']), '/0');
    assert.equal(findUnsafeText('\udc00x'), '');
    assert.equal(findUnsafeText({ 'a/b~': 'x\ud83d' }), '/a~1b~0');
    assert.equal(findUnsafeText({ emoji: '😀', text: 'é\u0001\u007f', n: 1, t: true, z: null }), undefined);
    let deep: unknown = 'x\u0000';
    for (let i = 0; i < 50_000; i++) deep = [deep];
    assert.equal(findUnsafeText(deep)?.length, 50_000 * 2);
  });

  it('finds unsafe text in path parameters, query values and headers', () => {
    assert.equal(findUnsafeRequestText({ params: { id: 'a\u0000' } }), 'path parameter id');
    assert.equal(findUnsafeRequestText({ query: { status: ['ok', '\ud800'] } }), 'query parameter status');
    assert.equal(findUnsafeRequestText({ headers: { 'x-on-behalf-of': 'm\u0000' } }), 'header x-on-behalf-of');
    assert.equal(
      findUnsafeRequestText({ params: { id: 'wdr_1' }, query: { limit: '5' }, headers: { host: 'x' } }),
      undefined,
    );
  });

  it('measures JSON nesting on the bytes, skipping strings', () => {
    const nest = (n: number) => Buffer.from('['.repeat(n) + ']'.repeat(n));
    assert.equal(jsonDepthExceeds(nest(jsonDepthMax)), false);
    assert.equal(jsonDepthExceeds(nest(jsonDepthMax + 1)), true);
    assert.equal(
      jsonDepthExceeds(Buffer.from(JSON.stringify({ s: '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["\\' }))),
      false,
    );
    assert.equal(jsonDepthExceeds(Buffer.from('{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000))), true);
  });

  it('a cursor past the int8 range is unreadable: the walk restarts', () => {
    assert.equal(decodeCursor(encodeCursor(9223372036854775807n)), 9223372036854775807n);
    assert.equal(decodeCursor(Buffer.from('v1:9223372036854775808').toString('base64url')), undefined);
    assert.equal(decodeCursor(Buffer.from('v1:9999999999999999999').toString('base64url')), undefined);
  });
});

describe('bad input over HTTP: a 4xx in the envelope, never a 500', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  let doc: any;
  const adminCall = async (method: string, path: string, body?: string): Promise<Answer> => {
    const res = await rawRequest(`${service.adminUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${service.adminToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body }),
    });
    return res;
  };

  useTestService({ config: { simulatorConfirmDelayMs: 0 } }, (s) => ({ service, client } = s));
  before(async () => {
    await fundedMember(client, '100', 'USDT', { external: 'hard-1', txHashPrefix: 'fund-' });
    await client.deposits.create({ member_id: 'hard-1', asset: 'SGD', amount: '100', tx_hash: `fund-${randomUUID()}` });
    doc = await client.request({ method: 'GET', path: '/v1/openapi.json' });
  });

  const operations = () => {
    const ops: Array<{ method: string; path: string; member: boolean; op: any }> = [];
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        ops.push({ method: method.toUpperCase(), path, member: op['x-principal'] === 'member', op });
      }
    }
    return ops;
  };

  it('12: NUL in a path id, on every public route that has one', async () => {
    const withId = operations().filter((o) => o.path.includes('{'));
    assert.ok(withId.length >= 9, `${withId.length} routes with a path parameter`);
    for (const o of withId) {
      for (const bad of ['%00', 'wdr_%00', 'a%00b']) {
        const path = o.path.replace(/\{[^}]+\}/g, bad);
        const res = await client.requestRaw({
          method: o.method as 'GET',
          path,
          body: o.method === 'GET' || o.method === 'DELETE' ? undefined : {},
          onBehalfOf: o.member ? 'hard-1' : undefined,
        });
        assertEnvelope(res, 400, 'invalid_request', `${o.method} ${path}`);
      }
    }
  });

  it('12: NUL in a query value or key, on every public list', async () => {
    const lists = operations().filter(
      (o) => o.method === 'GET' && (o.op.parameters ?? []).some((p: any) => p.in === 'query'),
    );
    assert.ok(lists.length >= 4, `${lists.length} lists`);
    for (const o of lists) {
      const name = (o.op.parameters as any[]).find((p) => p.in === 'query' && p.name !== 'limit')?.name ?? 'cursor';
      for (const path of [`${o.path}?${name}=%00`, `${o.path}?${name}=a%00`, `${o.path}?x%00=1`]) {
        const res = await client.requestRaw({ method: 'GET', path, onBehalfOf: o.member ? 'hard-1' : undefined });
        assertEnvelope(res, 400, 'invalid_request', `GET ${path}`);
      }
    }
  });

  it(
    '12: the request checks run before authentication: NUL in the query of a route that needs a token, sent ' +
      'without one, is 400, not 401',
    async () => {
      for (const path of ['/v1/balances?asset=%00', '/v1/deposits?x%00=1', '/v1/members/%00']) {
        const res = await rawRequest(`${service.publicUrl}${path}`, {
          headers: { host: new URL(baseUrlFor(service, 'sandbox')).host },
        });
        assertEnvelope(res, 400, 'invalid_request', `GET ${path} without a token`);
      }
      const res = await rawRequest(`${service.publicUrl}/v1/balances`, {
        headers: { host: new URL(baseUrlFor(service, 'sandbox')).host },
      });
      assertEnvelope(res, 401, 'invalid_token', 'GET /v1/balances without a token');
    },
  );

  it('12: NUL or an unpaired surrogate in a body field or key (public and operator)', async () => {
    const bodies = [
      '{"url":"https://example.com/\\u0000"}',
      '{"url":"https://example.com/\\ud800"}',
      '{"url\\u0000":"https://example.com/"}',
      '{"url":"https://example.com/\\udfff"}',
    ];
    for (const rawBody of bodies) {
      const res = await client.requestRaw({ method: 'POST', path: '/v1/webhooks/endpoints', rawBody });
      assertEnvelope(res, 400, 'invalid_request', rawBody);
    }
    const w = await client.requestRaw({
      method: 'POST',
      path: '/v1/withdrawals',
      onBehalfOf: 'hard-1',
      rawBody: `{"asset":"USDT","network":"TRON","address":"${TRON}\\u0000","amount":"1"}`,
    });
    assertEnvelope(w, 400, 'invalid_request', 'withdrawal address');
    for (const rawBody of ['{"name":"x\\u0000"}', '{"name":"\\ud800"}']) {
      assertEnvelope(
        await adminCall('POST', '/admin/v1/merchants', rawBody),
        400,
        'invalid_request',
        `admin ${rawBody}`,
      );
    }
    // Paired surrogates are characters like any other.
    const ok = await adminCall('POST', '/admin/v1/merchants', JSON.stringify({ name: 'Emoji 😀' }));
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
  });

  it('12: NUL in operator path ids and queries', async () => {
    for (const [method, path] of [
      ['GET', '/admin/v1/merchants/%00'],
      ['PATCH', '/admin/v1/merchants/%00'],
      ['GET', '/admin/v1/qrpay/payments/%00'],
      ['POST', '/admin/v1/api-keys/%00/approve'],
      ['GET', '/admin/v1/webhooks/deliveries/%00'],
      ['GET', '/admin/v1/assets/%00'],
      ['GET', '/admin/v1/alerts?status=%00'],
      ['GET', '/admin/v1/upstreams/reconciliation?merchant_id=%00'],
    ] as const) {
      const res = await adminCall(method, path, method === 'GET' ? undefined : '{}');
      assertEnvelope(res, 400, 'invalid_request', `${method} ${path}`);
    }
  });

  it('12: a NUL in a header is answered with the envelope too', async () => {
    const port = new URL(service.publicUrl).port;
    const res = await rawSocket(
      service.publicUrl,
      `GET /v1/balances HTTP/1.1\r\nHost: api-sandbox.localhost:${port}\r\nx-on-behalf-of: hard\u00001\r\n\r\n`,
    );
    assertEnvelope(res, 400, 'invalid_request', 'NUL in x-on-behalf-of');
    const admin = await rawSocket(
      service.adminUrl,
      `GET /admin/v1/alerts HTTP/1.1\r\nHost: localhost\r\nx-idempotency-key: a\u0000\r\n\r\n`,
    );
    assertEnvelope(admin, 400, 'invalid_request', 'NUL in an operator header');
  });

  it('13: a cursor beyond 64 bits restarts from the first page on every list', async () => {
    const overflow = Buffer.from('v1:9999999999999999999').toString('base64url');
    const lists = operations().filter(
      (o) => o.method === 'GET' && (o.op.parameters ?? []).some((p: any) => p.in === 'query' && p.name === 'cursor'),
    );
    assert.ok(lists.length >= 4, `${lists.length} lists with a cursor`);
    for (const o of lists) {
      const onBehalfOf = o.member ? 'hard-1' : undefined;
      const first = await client.requestRaw({ method: 'GET', path: o.path, query: { limit: 2 }, onBehalfOf });
      const res = await client.requestRaw({
        method: 'GET',
        path: o.path,
        query: { limit: 2, cursor: overflow },
        onBehalfOf,
      });
      // A list under an object (`/v1/cards/{id}/transactions`) of an id that does not exist: not_found either way,
      // never a 500.
      if (o.path.includes('{')) {
        assert.deepEqual([first.status, res.status, (res.body as any).code], [404, 404, 'not_found'], o.path);
        continue;
      }
      assert.equal(res.status, 200, `${o.path}: ${res.rawBody}`);
      assert.deepEqual(res.body, first.body, o.path);
    }
    for (const path of ['/admin/v1/alerts', '/admin/v1/upstreams/reconciliation']) {
      const res = await adminCall('GET', `${path}?cursor=${overflow}`);
      assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
      assert.ok(Array.isArray(res.body.data));
    }
  });

  it('13: a cursor of any length restarts from the first page on every list, never 400', async () => {
    const lists = operations().filter(
      (o) =>
        o.method === 'GET' &&
        !o.path.includes('{') &&
        (o.op.parameters ?? []).some((p: any) => p.in === 'query' && p.name === 'cursor'),
    );
    assert.ok(lists.length >= 4, `${lists.length} lists with a cursor`);
    // Past the 200 characters the schema once allowed; a readable cursor padded out; far longer.
    const readable = encodeCursor(999n);
    const cursors = ['c'.repeat(201), readable + 'A'.repeat(300), 'x'.repeat(8_000)];
    for (const o of lists) {
      const onBehalfOf = o.member ? 'hard-1' : undefined;
      const first = await client.requestRaw({ method: 'GET', path: o.path, query: { limit: 2 }, onBehalfOf });
      for (const cursor of cursors) {
        const res = await client.requestRaw({ method: 'GET', path: o.path, query: { limit: 2, cursor }, onBehalfOf });
        assert.equal(res.status, 200, `${o.path} (${cursor.length}): ${res.rawBody}`);
        assert.deepEqual(res.body, first.body, `${o.path} (${cursor.length})`);
      }
    }
    for (const cursor of cursors) {
      const res = await adminCall('GET', `/admin/v1/alerts?cursor=${cursor}`);
      assert.equal(res.status, 200, `/admin/v1/alerts (${cursor.length}): ${JSON.stringify(res.body)}`);
    }
  });

  it(
    'a leap second (23:59:60, valid RFC 3339 that JavaScript cannot read) in a date-time is a 400, ' + 'not a 500',
    async () => {
      const leap = '2030-12-31T23:59:60Z';
      const listed = await client.requestRaw({
        method: 'GET',
        path: `/v1/deposits?created_gte=${encodeURIComponent(leap)}`,
      });
      assert.deepEqual([listed.status, listed.body.code], [400, 'invalid_request']);
      const merchant = await adminCall('POST', '/admin/v1/merchants', JSON.stringify({ name: 'leap' }));
      const key = await adminCall(
        'POST',
        `/admin/v1/merchants/${merchant.body.id}/api-keys`,
        JSON.stringify({ environment: 'sandbox', scopes: [], expires_at: leap }),
      );
      assert.deepEqual([key.status, key.body.code], [400, 'invalid_request']);
      const fine = await adminCall(
        'POST',
        `/admin/v1/merchants/${merchant.body.id}/api-keys`,
        JSON.stringify({ environment: 'sandbox', scopes: [], expires_at: '2030-12-31T23:59:59Z' }),
      );
      assert.equal(fine.status, 201);
    },
  );

  it(
    'a date-time before year 1 (year 0000, or 0001 with a positive offset: valid RFC 3339 that PostgreSQL ' +
      'cannot store) is a 400, not a 500',
    async () => {
      for (const early of ['0000-01-01T00:00:00Z', '0000-06-01T00:00:00Z', '0001-01-01T00:00:00+01:00']) {
        const gte = await client.requestRaw({ method: 'GET', path: '/v1/deposits', query: { created_gte: early } });
        assert.deepEqual([gte.status, gte.body.code], [400, 'invalid_request'], `created_gte ${early}`);
        const lt = await client.requestRaw({ method: 'GET', path: '/v1/deposits', query: { created_lt: early } });
        assert.deepEqual([lt.status, lt.body.code], [400, 'invalid_request'], `created_lt ${early}`);
        const requeue = await client.requestRaw({
          method: 'POST',
          path: '/v1/webhooks/deliveries/requeue',
          body: { since: early },
        });
        assert.deepEqual([requeue.status, requeue.body.code], [400, 'invalid_request'], `requeue since ${early}`);
      }
      const first = await client.requestRaw({
        method: 'GET',
        path: '/v1/deposits',
        query: { created_gte: '0001-01-01T00:00:00Z' },
      });
      assert.equal(first.status, 200, 'the first instant of year 1 is still a time');
    },
  );

  it('14: JSON nested 10,000 deep is refused before anything walks it, on both listeners', async () => {
    const deep = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
    const res = await client.requestRaw({ method: 'POST', path: '/v1/members', rawBody: deep });
    assertEnvelope(res, 400, 'invalid_request', 'deep object');
    assert.match(res.body.message, /deeper than 32/);
    const arrays = await client.requestRaw({
      method: 'POST',
      path: '/v1/withdrawals',
      onBehalfOf: 'hard-1',
      rawBody: '['.repeat(10_000) + ']'.repeat(10_000),
    });
    assertEnvelope(arrays, 400, 'invalid_request', 'deep arrays');
    assertEnvelope(await adminCall('POST', '/admin/v1/merchants', deep), 400, 'invalid_request', 'admin deep');
    // At the bound the body is read (and refused by the schema for what it is, not for its depth).
    const atBound =
      `{"external_member_id":"x","profile":${'['.repeat(jsonDepthMax - 1)}` + `${']'.repeat(jsonDepthMax - 1)}}`;
    const shallow = await client.requestRaw({ method: 'POST', path: '/v1/members', rawBody: atBound });
    assertEnvelope(shallow, 400, 'invalid_request', 'at the bound');
    assert.doesNotMatch(shallow.body.message, /deeper/);
  });

  it(
    '16: a malformed percent-encoding or an overlong path parameter gets the envelope, ' + 'on both listeners',
    async () => {
      for (const path of [
        '/v1/withdrawals/%E0%A4%A',
        '/v1/withdrawals/%ZZ',
        '/v1/withdrawals/%ED%A0%80',
        `/v1/withdrawals/${'a'.repeat(150)}`,
        `/v1/withdrawals/${'a'.repeat(5000)}`,
        `/v1/nowhere/${'b'.repeat(300)}`,
      ]) {
        const res = await client.requestRaw({ method: 'GET', path });
        assert.ok(res.status === 400 || res.status === 404, `${path.slice(0, 60)}: ${res.status}`);
        assertEnvelope(res, res.status, res.status === 400 ? 'invalid_request' : 'not_found', path.slice(0, 60));
        assert.doesNotMatch(res.rawBody, /FST_/);
      }
      for (const path of ['/admin/v1/merchants/%E0%A4%A', `/admin/v1/merchants/${'a'.repeat(300)}`]) {
        const res = await adminCall('GET', path);
        assertEnvelope(res, 400, 'invalid_request', path.slice(0, 60));
      }
      // Without a token: the router's refusal comes before authentication, in the same envelope.
      const port = new URL(service.publicUrl).port;
      const bare = await rawRequest(`http://127.0.0.1:${port}/v1/withdrawals/%E0%A4%A`, {
        headers: { host: `api-sandbox.localhost:${port}` },
      });
      assertEnvelope(bare, 400, 'invalid_request', 'bad encoding, no token');
    },
  );

  it('17: deposits and withdrawals read amounts by the one grammar', async () => {
    const deposit = (amount: string) =>
      client.requestRaw({
        method: 'POST',
        path: '/v1/deposits',
        body: { member_id: 'hard-1', asset: 'USDT', amount, tx_hash: `g-${randomUUID()}` },
      });
    const withdraw = (amount: string) =>
      client.requestRaw({
        method: 'POST',
        path: '/v1/withdrawals',
        onBehalfOf: 'hard-1',
        body: { asset: 'USDT', network: 'TRON', address: TRON, amount },
      });
    const refused = [
      '00.1',
      '01',
      `${'1'.repeat(40)}`,
      `1.${'0'.repeat(59)}`,
      '1'.repeat(21),
      '-1',
      '1e2',
      ' 1',
      '1.0000001',
      '.5',
      '5.',
    ];
    for (const amount of refused) {
      assertEnvelope(await deposit(amount), 400, 'invalid_request', `deposit ${amount}`);
      assertEnvelope(await withdraw(amount), 400, 'invalid_request', `withdrawal ${amount}`);
    }
    // Places beyond the scale that are zeros are read, never rounded.
    const d = await deposit('1.50000000');
    assert.equal(d.status, 201, d.rawBody);
    assert.equal(d.body.amount, '1.500000');
    const w = await withdraw('2.000000000');
    assert.equal(w.status, 201, w.rawBody);
    assert.equal(w.body.amount, '2.000000');
  });

  /** A QR payment of member hard-1 under idempotency key `key`. */
  const payQr = (body: unknown, key: string) =>
    client.requestRaw({ method: 'POST', path: '/v1/qrpay/payments', body, onBehalfOf: 'hard-1', idempotencyKey: key });

  it(
    '18: ten parallel QR payments with one key make one order, one 201, ' + 'and replays or in-progress answers',
    async () => {
      const key = randomUUID();
      const body = { qr_code: payNow({ amount: '3' }), asset: 'SGD' };
      const results = await Promise.all(Array.from({ length: 10 }, () => payQr(body, key)));
      const firsts = results.filter((r) => r.status === 201 && r.headers['x-idempotent-replay'] === undefined);
      assert.equal(
        firsts.length,
        1,
        results
          .map((r) => `${r.status} ${r.headers['x-idempotent-replay'] ?? ''} ${r.body?.code ?? r.body?.status}`)
          .join('; '),
      );
      for (const r of results) {
        if (r === firsts[0]) continue;
        if (r.status === 409) assertEnvelope(r, 409, 'idempotency_in_progress', 'duplicate');
        else {
          assert.equal(r.status, 201);
          assert.equal(r.headers['x-idempotent-replay'], 'true');
          assert.equal(r.body.id, firsts[0]!.body.id);
        }
      }
      const orders = await service.ctx.db
        .selectFrom('qrpay_orders')
        .select('id')
        .where('idempotency_key', '=', key)
        .execute();
      assert.deepEqual(
        orders.map((o) => o.id),
        [firsts[0]!.body.id],
      );
      const again = await payQr(body, key);
      assert.equal(again.headers['x-idempotent-replay'], 'true');
      assert.equal(again.body.id, firsts[0]!.body.id);
    },
  );

  it("18: a QR payment's claim holds its key while live and is taken over once it lapses", async () => {
    const key = randomUUID();
    const body = { qr_code: payNow({ amount: '2' }), asset: 'SGD' };
    const pay = () => payQr(body, key);
    const first = await pay();
    assert.equal(first.status, 201, first.rawBody);
    const claimFor = (ms: number) => JSON.stringify({ in_progress: randomUUID(), lease_until_ms: Date.now() + ms });
    const setRecord = (status: number, text: string) =>
      service.ctx.db
        .updateTable('idempotency_keys')
        .set({ status_code: status, response_body: text })
        .where('key', '=', key)
        .execute();
    // A request still running with this key (its claim is live): 409 in progress.
    await setRecord(0, claimFor(60_000));
    assertEnvelope(await pay(), 409, 'idempotency_in_progress', 'live claim');
    // Its holder stopped: after the lease the next request takes the key over and resumes the order.
    await setRecord(0, claimFor(-1));
    const resumed = await pay();
    assert.equal(resumed.status, 201, resumed.rawBody);
    assert.equal(resumed.headers['x-idempotent-replay'], undefined);
    assert.equal(resumed.body.id, first.body.id);
    const replay = await pay();
    assert.equal(replay.headers['x-idempotent-replay'], 'true');
    assert.equal(replay.body.id, first.body.id);
    const orders = await service.ctx.db
      .selectFrom('qrpay_orders')
      .select('id')
      .where('idempotency_key', '=', key)
      .execute();
    assert.equal(orders.length, 1);
  });
});
