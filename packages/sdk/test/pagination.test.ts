import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeClient, startStub, type StubRequest } from './helpers.js';

/** Serves `total` items in pages of `limit` with opaque cursors; the last page still carries a cursor. */
function pagedHandler(total: number, tag = 'item') {
  return (r: StubRequest) => {
    const u = new URL(r.url, 'http://x');
    const limit = Number(u.searchParams.get('limit') ?? 20);
    const cursor = u.searchParams.get('cursor');
    const start = cursor ? Number(Buffer.from(cursor, 'base64url').toString()) : 0;
    const data = Array.from({ length: Math.max(0, Math.min(limit, total - start)) }, (_, k) => ({
      id: `${tag}_${start + k}`,
    }));
    const end = start + data.length;
    return {
      body: {
        data,
        // A cursor is present on the last page on purpose: only has_more decides.
        next_cursor: Buffer.from(String(end)).toString('base64url'),
        has_more: end < total,
      },
    };
  };
}

test('paginate walks every page until has_more is false, forwarding cursor and limit', async (t) => {
  const stub = await startStub({ handle: pagedHandler(7) });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  const ids: string[] = [];
  for await (const item of client.paginate<{ id: string }>('/v1/things', {
    limit: 3,
    query: { status: 'sent' },
    onBehalfOf: 'u1',
  })) {
    ids.push(item.id);
  }
  assert.deepEqual(ids, ['item_0', 'item_1', 'item_2', 'item_3', 'item_4', 'item_5', 'item_6']);
  assert.equal(stub.requests.length, 3);
  assert.equal(stub.requests[0]!.url, '/v1/things?status=sent&limit=3');
  assert.equal(
    stub.requests[1]!.url,
    `/v1/things?status=sent&limit=3&cursor=${Buffer.from('3').toString('base64url')}`,
  );
  assert.ok(stub.requests.every((r) => r.headers['x-on-behalf-of'] === 'u1'));
});

test('paginate does not stop on a short page while has_more is true', async (t) => {
  const pages = [
    { data: [{ id: 'a' }], next_cursor: 'c1', has_more: true },
    { data: [], next_cursor: 'c2', has_more: true },
    { data: [{ id: 'b' }], next_cursor: null, has_more: false },
  ];
  const stub = await startStub({ handle: (_r, i) => ({ body: pages[i] }) });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  const ids: string[] = [];
  for await (const item of client.paginate<{ id: string }>('/v1/x', { limit: 100 })) ids.push(item.id);
  assert.deepEqual(ids, ['a', 'b']);
  assert.equal(stub.requests.length, 3);
});

test(
  'paginate refuses has_more without a cursor, and a repeating cursor (no endless loop)',
  { timeout: 5000 },
  async (t) => {
    let mode: 'nocursor' | 'loop' = 'nocursor';
    const stub = await startStub({
      handle: () =>
        mode === 'nocursor'
          ? { body: { data: [{ id: 1 }], next_cursor: null, has_more: true } }
          : { body: { data: [{ id: 1 }], next_cursor: 'same', has_more: true } },
    });
    const { client } = makeClient(stub);
    t.after(async () => {
      client.close();
      await stub.close();
    });
    const drain = async () => {
      for await (const _ of client.paginate('/v1/x')) {
        /* drain */
      }
    };
    await assert.rejects(drain(), /next_cursor is empty/);
    mode = 'loop';
    await assert.rejects(drain(), /next_cursor repeats/);
  },
);

test('webhooks.deliveries() pages through the delivery log with the status filter', async (t) => {
  const stub = await startStub({ handle: pagedHandler(45, 'whd') });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  const seen: string[] = [];
  for await (const d of client.webhooks.deliveries({ status: 'dead' })) seen.push(d.id);
  assert.equal(seen.length, 45);
  assert.equal(new Set(seen).size, 45);
  assert.equal(stub.requests.length, 3, 'server default page size 20');
  assert.ok(stub.requests.every((r) => r.url.startsWith('/v1/webhooks/deliveries?status=dead')));
  assert.ok(stub.requests.every((r) => r.headers['x-on-behalf-of'] === undefined));

  const before = stub.requests.length;
  let n = 0;
  for await (const _ of client.webhooks.deliveries()) n++;
  assert.equal(n, 45);
  assert.equal(stub.requests[before]!.url, '/v1/webhooks/deliveries');
});
