import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { RunningService } from '../src/server.js';
import { newMerchantClient, startTestService } from './support/service.js';

/**
 * Bad input of any kind gets a clear 4xx, never a 5xx and never a crash: every public operation of
 * the OpenAPI document is called with random path values, query strings and JSON bodies, properly
 * authenticated, signed and keyed, on behalf of a real member where the operation wants one.
 */
describe('random input never makes a server error', () => {
  let service: RunningService;
  before(async () => {
    service = await startTestService();
  });
  after(async () => service.close());

  it('answers every operation with an error envelope below 500 or a success', async () => {
    const { client } = await newMerchantClient(service);
    await client.members.create({ external_member_id: 'fuzz-member' });
    await client.deposits.create({ member_id: 'fuzz-member', asset: 'USDT', amount: '100', tx_hash: 'fuzz-funding' });
    const doc = await client.request<any>({ method: 'GET', path: '/v1/openapi.json' });
    const operations: Array<{ method: string; path: string; member: boolean; hasQuery: boolean }> = [];
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (path === '/v1/connect/token') continue;
        operations.push({
          method: method.toUpperCase(),
          path,
          member: op['x-principal'] === 'member' || op['x-principal'] === 'either',
          hasQuery: (op.parameters ?? []).some((p: any) => p.in === 'query'),
        });
      }
    }
    assert.ok(operations.length > 20, `${operations.length} operations`);
    const segment = fc.oneof(fc.string({ maxLength: 40 }), fc.uuid().map((u) => `wdr_${u}`), fc.constantFrom('fuzz-member', '0', '%00', '..', 'null'));
    const body = fc.oneof(
      fc.anything({ maxDepth: 2 }),
      fc.dictionary(fc.constantFrom('amount', 'asset', 'network', 'address', 'member_id', 'url', 'event_types', 'qr_code', 'upstream', 'behavior', 'external_member_id', 'since', 'status', 'tx_hash', 'lock'), fc.oneof(fc.string({ maxLength: 30 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }))),
    );
    const query = fc.dictionary(fc.constantFrom('limit', 'cursor', 'status', 'asset'), fc.oneof(fc.string({ maxLength: 20 }), fc.integer().map(String)));
    const failures: string[] = [];
    for (const op of operations) {
      await fc.assert(
        fc.asyncProperty(segment, body, query, async (seg, b, q) => {
          const path = op.path.replace(/\{[^}]+\}/g, encodeURIComponent(seg));
          const res = await client.requestRaw({
            method: op.method as 'GET',
            path,
            query: op.hasQuery ? q : undefined,
            body: op.method === 'GET' || op.method === 'DELETE' ? undefined : b,
            onBehalfOf: op.member ? 'fuzz-member' : undefined,
          });
          if (res.status >= 500 || (res.status >= 400 && typeof res.body?.code !== 'string')) {
            failures.push(`${op.method} ${path} → ${res.status} ${res.rawBody.slice(0, 200)}`);
            return false;
          }
          return true;
        }),
        { numRuns: 12, seed: 20261122 },
      ).catch((err: Error) => {
        // A property that returned false is already listed; anything thrown (a dropped connection) is listed here.
        if (!failures.some((f) => f.startsWith(`${op.method} `))) failures.push(`${op.method} ${op.path}: ${err.message.slice(0, 300)}`);
      });
    }
    assert.deepEqual(failures, []);
  });
});
