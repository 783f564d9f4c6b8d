import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { MerchantWalletClient, MerchantWalletPermissionError, SseParser, type ApiEvent } from '../src/index.js';
import { API_KEY, CLIENT_ID, SIGNING_KEY, makeClient, startStub } from './helpers.js';

const event = (n: number) => ({
  event_id: `evt_${n}`,
  event_type: 'deposit.credited',
  created_at: new Date(0).toISOString(),
  merchant_id: 'mch_1',
  livemode: false,
  data: { object: 'deposit', id: `dep_${n}`, external_member_id: 'u1', status: 'credited', status_version: 1 },
});
const frame = (n: number) => `id: evt_${n}\nevent: deposit.credited\ndata: ${JSON.stringify(event(n))}\n\n`;

test(
  'SseParser: CRLF, LF and CR line ends split anywhere, comments, ' + 'multi-line data, id kept across messages, retry',
  () => {
    const p = new SseParser();
    const text =
      ': keep-alive\r\nid: a\r\nevent: x\r\ndata: 1\r\ndata: 2\r\n\r\n' +
      'data: 3\r\rretry: 2500\nid\nevent: y\ndata:4\n\nid: b\0c\ndata: 5\n\n';
    const out = [];
    // One character at a time: a CR at the end of a piece may be the first half of a CRLF.
    for (const ch of text) out.push(...p.push(ch));
    assert.deepEqual(out, [
      { id: 'a', event: 'x', data: '1\n2' },
      { id: 'a', event: 'message', data: '3' },
      { id: '', event: 'y', data: '4' },
      { id: '', event: 'message', data: '5' },
    ]);
    assert.equal(p.retry, 2500);
    // A message without a blank line after it is not dispatched.
    assert.deepEqual(new SseParser().push('data: half\n'), []);
  },
);

/** A stub with the token exchange and a scripted `/v1/events/stream`, one script step per connection. */
async function streamStub(script: ((req: http.IncomingMessage, res: http.ServerResponse) => void)[]) {
  const streamRequests: http.IncomingHttpHeaders[] = [];
  let tokens = 0;
  const server = http.createServer((req, res) => {
    if (req.url === '/v1/connect/token') {
      tokens++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          auth_token: `tok_${tokens}`,
          expired_at: Math.floor(Date.now() / 1000) + 1800,
          token_type: 'Bearer',
          scopes: [],
        }),
      );
      return;
    }
    streamRequests.push(req.headers);
    const step = script[streamRequests.length - 1];
    if (!step) {
      res.writeHead(500).end();
      return;
    }
    step(req, res);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    streamRequests,
    tokens: () => tokens,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

const sse = (res: http.ServerResponse) =>
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' }).flushHeaders();

test(
  'events.stream: a dropped connection is resumed with Last-Event-ID; no event is lost or repeated; ' +
    'a *.localhost base URL reaches the loopback address',
  async (t) => {
    const stub = await streamStub([
      (_req, res) => {
        sse(res);
        res.write(': hello\n\nretry: 10\n\n');
        // Two whole events, then half of a third, then the connection breaks.
        res.write(frame(1) + frame(2) + frame(3).slice(0, 40));
        setTimeout(() => res.socket?.destroy(), 20);
      },
      (_req, res) => {
        sse(res);
        // A server that resumed one too early: the repeat is dropped by the client.
        res.write(frame(2) + frame(3) + frame(4));
        res.end();
      },
      (_req, res) => {
        sse(res);
        res.write(frame(5));
      },
    ]);
    // No connectHost: api-sandbox.localhost connects to 127.0.0.1 by itself (RFC 6761).
    const client = new MerchantWalletClient({
      baseUrl: `http://api-sandbox.localhost:${stub.port}`,
      clientId: CLIENT_ID,
      apiKey: API_KEY,
      signingKey: SIGNING_KEY,
    });
    t.after(async () => {
      client.close();
      await stub.close();
    });
    const opens: (string | undefined)[] = [];
    const drops: number[] = [];
    const stream = client.events.stream({
      type: 'deposit.*',
      onOpen: (i) => opens.push(i.lastEventId),
      onDisconnect: (i) => drops.push(i.delayMs),
    });
    const got: ApiEvent[] = [];
    for await (const e of stream) {
      got.push(e);
      if (got.length === 5) break;
    }
    assert.deepEqual(
      got.map((e) => e.event_id),
      ['evt_1', 'evt_2', 'evt_3', 'evt_4', 'evt_5'],
    );
    assert.deepEqual(got[0], event(1));
    assert.equal(stream.lastEventId, 'evt_5');
    assert.deepEqual(
      stub.streamRequests.map((h) => h['last-event-id']),
      [undefined, 'evt_2', 'evt_4'],
    );
    assert.deepEqual(opens, [undefined, 'evt_2', 'evt_4']);
    // The server's retry: 10 is the first delay; a stream that was open resets the backoff.
    assert.deepEqual(drops, [10, 10]);
    for (const h of stub.streamRequests) {
      assert.equal(h['host'], `api-sandbox.localhost:${stub.port}`);
      assert.equal(h['accept'], 'text/event-stream');
      assert.equal(h['authorization'], 'Bearer tok_1');
    }
  },
);

test(
  'events.stream: lastEventId resumes an earlier stream; a refused token is exchanged again once; ' +
    'a 403 ends the iteration with its error',
  async (t) => {
    const stub = await streamStub([
      (_req, res) => {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            type: 'authentication_error',
            code: 'invalid_token',
            message: 'expired',
            request_id: 'req_1',
          }),
        );
      },
      (_req, res) => {
        sse(res);
        res.write(frame(8));
        res.end();
      },
      (_req, res) => {
        res.writeHead(403, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            type: 'permission_error',
            code: 'insufficient_scope',
            message: 'events:read',
            request_id: 'req_2',
          }),
        );
      },
    ]);
    const { client } = makeClient({ baseUrl: `http://127.0.0.1:${stub.port}` });
    t.after(async () => {
      client.close();
      await stub.close();
    });
    const got: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const e of client.events.stream({ lastEventId: 'evt_7', reconnectDelayMs: 1 })) got.push(e.event_id);
      })(),
      (err) => err instanceof MerchantWalletPermissionError && err.code === 'insufficient_scope',
    );
    assert.deepEqual(got, ['evt_8']);
    assert.deepEqual(
      stub.streamRequests.map((h) => [h['authorization'], h['last-event-id']]),
      [
        ['Bearer tok_1', 'evt_7'],
        ['Bearer tok_2', 'evt_7'],
        ['Bearer tok_2', 'evt_8'],
      ],
    );
  },
);

test(
  'events.stream: close() ends a waiting iteration; ' + 'a silent connection counts as broken after idleTimeoutMs',
  async (t) => {
    const stub = await streamStub([
      (_req, res) => {
        sse(res);
        res.write(frame(1));
        // then silence: the client gives up on this connection after idleTimeoutMs
      },
      (_req, res) => {
        sse(res);
        // open and quiet: close() ends the loop
      },
    ]);
    const { client } = makeClient({ baseUrl: `http://127.0.0.1:${stub.port}` });
    t.after(async () => {
      client.close();
      await stub.close();
    });
    const errors: string[] = [];
    const stream = client.events.stream({
      idleTimeoutMs: 150,
      reconnectDelayMs: 1,
      onDisconnect: (i) => errors.push((i.error as { code?: string }).code ?? ''),
      onOpen: (i) => {
        if (i.reconnects === 1) setTimeout(() => stream.close(), 50);
      },
    });
    const got: string[] = [];
    for await (const e of stream) got.push(e.event_id);
    assert.deepEqual(got, ['evt_1']);
    assert.deepEqual(errors, ['timeout']);
    assert.equal(stub.streamRequests.length, 2);
  },
);

test('events.list, events.get and webhooks.replay call the documented paths', async (t) => {
  const stub = await startStub({
    handle: (r) => {
      if (r.url.startsWith('/v1/events?'))
        return { body: { data: [event(2), event(1)], has_more: false, next_cursor: null } };
      if (r.url === '/v1/events/evt_1') return { body: event(1) };
      return { body: { id: 'whe_1', queued: 3 } };
    },
  });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  const listed: string[] = [];
  for await (const e of client.events.list({
    type: 'card.*',
    delivery_success: false,
    created_gte: new Date(0),
    limit: 5,
  }))
    listed.push(e.event_id);
  assert.deepEqual(listed, ['evt_2', 'evt_1']);
  assert.equal(
    stub.requests[0]!.url,
    '/v1/events?type=card.*&created_gte=1970-01-01T00%3A00%3A00.000Z&delivery_success=false&limit=5',
  );
  assert.equal((await client.events.get('evt_1')).event_id, 'evt_1');
  const replay = await client.webhooks.replay('whe_1', { since: new Date(0), only_failed: false });
  assert.deepEqual(replay, { id: 'whe_1', queued: 3 });
  const r = stub.requests[2]!;
  assert.equal(r.url, '/v1/webhooks/endpoints/whe_1/replay');
  assert.deepEqual(r.json, { since: '1970-01-01T00:00:00.000Z', only_failed: false });
  assert.ok(typeof r.headers['x-idempotency-key'] === 'string');
  assert.ok(typeof r.headers['x-signature'] === 'string');
});
