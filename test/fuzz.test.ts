import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { RunningService } from '../src/server.js';
import { newMerchantClient, useTestService } from './support/service.js';
import { encodeSegment } from './support/hostile.js';
import { deeplyNestedJson, unwritableJsonTexts } from './support/hostile.js';

/**
 * Bad input of any kind gets a clear 4xx, never a 5xx and never a crash: every public operation of
 * the OpenAPI document is called with random path values, query strings, headers and JSON bodies,
 * properly authenticated, signed and keyed, on behalf of a real member where the operation wants
 * one. Besides ordinary random values, the generators make the input that once answered 500 or a
 * framework body (issue 9, points 12 to 17): NUL and unpaired surrogates anywhere, deep nesting,
 * huge numbers and amounts, long headers and path segments, malformed percent-encodings. Every
 * error is the envelope, its request_id the X-Request-Id header.
 */

/** Strings made to hurt: NUL, unpaired surrogates, pairs, percent signs, among ordinary text. */
const hostileText = fc
  .array(
    fc.oneof(
      fc.constantFrom('\u0000', '\ud800', '\udfff', '\ud83d\ude00', '%', '%00', '\\', '"', '\u007f'),
      fc.string({ maxLength: 4 }),
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((parts) => parts.join(''));

const hostileSegment = fc.oneof(
  hostileText.map(encodeSegment),
  fc.constantFrom(
    '%00',
    'wdr_%00',
    '%E0%A4%A',
    '%ZZ',
    '%',
    '%ED%A0%80',
    '%C0%80',
    'a'.repeat(101),
    'a'.repeat(300),
    'a'.repeat(3000),
  ),
);

/** Amount-like and number-like text the grammar must refuse or bound. */
const hugeNumberText = fc.oneof(
  fc.constantFrom(
    '00.1',
    '01',
    `${'1'.repeat(40)}`,
    `1.${'0'.repeat(59)}`,
    '9'.repeat(400),
    '1e400',
    '-1',
    '1E3',
    '0x10',
    '9223372036854775808',
  ),
  fc.bigInt({ min: 10n ** 18n, max: 10n ** 80n }).map(String),
);

/** Raw JSON bodies JSON.stringify cannot make: nesting past any bound, numbers past double range. */
const hostileRawBody = fc.oneof(...deeplyNestedJson(), fc.constantFrom(...unwritableJsonTexts));

/** A cursor whose number overflows 64 bits, and other unreadable ones. */
const hostileCursor = fc.oneof(
  fc.bigInt({ min: 2n ** 63n, max: 10n ** 19n - 1n }).map((n) => Buffer.from(`v1:${n}`).toString('base64url')),
  fc.constantFrom(Buffer.from('v1:-1').toString('base64url'), '%00', '%E0%A4%A', 'v1:1'),
);

/** A query string as it goes on the request line. */
const hostileQuery = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom('limit', 'cursor', 'status', 'asset', 'member_id', 'since'),
        hostileText.map(encodeSegment),
      ),
      fc.oneof(hostileText.map(encodeSegment), hugeNumberText, hostileCursor, fc.constantFrom('%E0%A4%A', '%ZZ', '%')),
    ),
    { maxLength: 3 },
  )
  .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));

/** Long or odd values for the headers that reach the database. */
const hostileHeaders = fc.record(
  {
    'x-on-behalf-of': fc.oneof(
      fc.integer({ min: 65, max: 8_000 }).map((n) => 'm'.repeat(n)),
      fc.constantFrom('fuzz-member ', ' ', 'mem_', '\u00ff\u00fe'),
    ),
    'x-idempotency-key': fc.oneof(
      fc.integer({ min: 37, max: 4_000 }).map((n) => 'a'.repeat(n)),
      fc.uuid().map((u) => u.toUpperCase()),
      fc.constant(''),
    ),
    // Replaces the nonce the client signed with: a long or odd one must be refused, never overflow the index.
    'x-nonce': fc.oneof(
      fc.integer({ min: 129, max: 6_000 }).map((n) => 'n'.repeat(n)),
      fc.constantFrom('', ' ', 'a b', '\u00ff'),
    ),
    'x-timestamp': fc.oneof(
      fc.constantFrom('', '-1', '1e10', '99999999999999999999999', '0x10'),
      fc.integer().map(String),
    ),
  },
  { requiredKeys: [] },
);
describe('random input never makes a server error', () => {
  let service: RunningService;
  // Rate limits would answer most calls 429 before they reach the code under test.
  useTestService({ config: { rateLimitScale: 100 }, merchant: false }, (s) => ({ service } = s));

  it('answers every operation with an error envelope below 500 or a success', async () => {
    const { client } = await newMerchantClient(service);
    await client.members.create({ external_member_id: 'fuzz-member' });
    await client.deposits.create({ member_id: 'fuzz-member', asset: 'USDT', amount: '100', tx_hash: 'fuzz-funding' });
    const doc = await client.request<any>({ method: 'GET', path: '/v1/openapi.json' });
    const operations: Array<{ method: string; path: string; member: boolean; hasQuery: boolean }> = [];
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (path === '/v1/connect/token') continue;
        // A stream never ends, so a valid request would hold the property for ever; its input is
        // checked in test/events-stream.test.ts.
        if (op.responses?.['200']?.content?.['text/event-stream']) continue;
        operations.push({
          method: method.toUpperCase(),
          path,
          member: op['x-principal'] === 'member' || op['x-principal'] === 'either',
          hasQuery: (op.parameters ?? []).some((p: any) => p.in === 'query'),
        });
      }
    }
    assert.ok(operations.length > 20, `${operations.length} operations`);
    const segment = fc.oneof(
      fc.string({ maxLength: 40 }).map(encodeSegment),
      fc.uuid().map((u) => `wdr_${u}`),
      fc.constantFrom('fuzz-member', '0', '%00', '..', 'null'),
      hostileSegment,
    );
    const field = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 3 }),
      hostileText,
      hugeNumberText,
    );
    const body = fc.oneof(
      fc.anything({ maxDepth: 2 }).map((value) => ({ value })),
      fc
        .dictionary(
          fc.constantFrom(
            'amount',
            'asset',
            'network',
            'address',
            'member_id',
            'url',
            'event_types',
            'qr_code',
            'upstream',
            'behavior',
            'external_member_id',
            'since',
            'status',
            'tx_hash',
            'lock',
            'name',
          ),
          field,
        )
        .map((value) => ({ value })),
      fc.dictionary(hostileText, field, { maxKeys: 2 }).map((value) => ({ value })),
      hostileRawBody.map((raw) => ({ raw })),
    );
    const ordinaryQuery = fc
      .dictionary(
        fc.constantFrom('limit', 'cursor', 'status', 'asset'),
        fc.oneof(fc.string({ maxLength: 20 }), fc.integer().map(String)),
      )
      .map((q) => new URLSearchParams(q).toString());
    const query = fc.oneof(ordinaryQuery, hostileQuery);
    const headers = fc.oneof(fc.constant({}), hostileHeaders);
    const failures: string[] = [];
    for (const op of operations) {
      await fc
        .assert(
          fc.asyncProperty(segment, body, query, headers, async (seg, b, q, h) => {
            const path = op.path.replace(/\{[^}]+\}/g, seg) + (op.hasQuery && q ? `?${q}` : '');
            const withBody = op.method !== 'GET' && op.method !== 'DELETE';
            const res = await client.requestRaw({
              method: op.method as 'GET',
              path,
              ...(withBody ? ('raw' in b ? { rawBody: b.raw } : { body: b.value }) : {}),
              onBehalfOf: op.member ? 'fuzz-member' : undefined,
              headers: op.member ? h : { ...h, 'x-on-behalf-of': undefined },
            });
            const requestId = res.headers['x-request-id'];
            const enveloped =
              typeof res.body?.code === 'string' &&
              typeof res.body?.type === 'string' &&
              typeof res.body?.message === 'string' &&
              typeof requestId === 'string' &&
              res.body.request_id === requestId;
            if (res.status >= 500 || (res.status >= 400 && !enveloped)) {
              failures.push(`${op.method} ${path.slice(0, 120)} → ${res.status} ${res.rawBody.slice(0, 200)}`);
              return false;
            }
            return true;
          }),
          { numRuns: 16, seed: 20261122 },
        )
        .catch((err: Error) => {
          // A property that returned false is already listed; anything thrown (a dropped connection) is listed here.
          if (!failures.some((f) => f.startsWith(`${op.method} `)))
            failures.push(`${op.method} ${op.path}: ${err.message.slice(0, 300)}`);
        });
    }
    assert.deepEqual(failures, []);
  });
});
