import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import fc from 'fast-check';
import type { RunningService } from '../src/server.js';
import { admin, adminToken, newMerchantClient, useTestService } from './support/service.js';
import { encodeSegment, deeplyNestedJson, unwritableJsonTexts } from './support/hostile.js';

/**
 * The operator listener's twin of fuzz.test.ts: every operation of the operator OpenAPI document
 * (GET /admin/v1/openapi.json), called with the operator token, with random and hostile path
 * values, query strings and JSON bodies. The bodies and queries follow each operation's own schema
 * most of the time (so that they pass validation and reach the handler), with fields left out,
 * replaced by values of the wrong type, by NUL and unpaired surrogates, huge numbers and amounts,
 * too many decimal places, malformed and out-of-range dates, unknown enum values, deep nesting,
 * arrays for objects. Every answer is a success or a 4xx in the error envelope whose request_id is
 * the X-Request-Id header; never a 5xx, never a stack trace.
 */

type Json = Record<string, any>;

/** Strings made to hurt: NUL, unpaired surrogates, pairs, percent signs, among ordinary text. */
const hostileText = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        '\u0000',
        '\ud800',
        '\udfff',
        '\ud83d\ude00',
        '%',
        '%00',
        '\\',
        '"',
        '\u007f',
        '\u202e',
        '\ufeff',
      ),
      fc.string({ maxLength: 4 }),
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((parts) => parts.join(''));

/** Amount-like text: too many decimals, signs, exponents, huge, empty, odd digits. */
const amountText = fc.oneof(
  fc.constantFrom(
    '0',
    '-0',
    '-1',
    '0.0',
    '00.1',
    '01',
    '.5',
    '5.',
    '+1',
    ' 1',
    '1 ',
    '1e3',
    '1E-3',
    '0x10',
    'NaN',
    'Infinity',
    '١',
    '1,5',
    '1_000',
    '1.1234567890123456789012345',
    `0.${'0'.repeat(40)}1`,
    '9'.repeat(79),
    `${'9'.repeat(40)}.${'9'.repeat(38)}`,
    '9223372036854775808',
    '-9223372036854775809',
    '1e400',
    '0.000000000000000001',
    '100',
    '1',
    '0.5',
    '1000000',
  ),
  fc.bigInt({ min: 10n ** 18n, max: 10n ** 80n }).map(String),
  fc
    .tuple(fc.nat(), fc.nat({ max: 10 ** 9 }), fc.integer({ min: 1, max: 30 }))
    .map(([i, f, n]) => `${i}.${String(f).padStart(n, '0')}`),
);

/** Date-time text: valid, extreme, impossible (31 February, hour 25, leap second), malformed. */
const dateText = fc.oneof(
  fc
    .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
    .map((d) => d.toISOString()),
  fc.constantFrom(
    '2026-02-30T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-01-01T25:00:00Z',
    '2026-12-31T23:59:60Z',
    '2030-06-30T23:59:60Z',
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '9999-12-31T23:59:59.999999999Z',
    '+275760-09-13T00:00:00.000Z',
    '2026-01-01T00:00:00+99:99',
    '2026-01-01T00:00:00+23:59',
    '2026-01-01',
    '2026-01-01T00:00:00',
    'not-a-date',
    '',
    '1970-01-01T00:00:00Z',
    '2099-01-01T00:00:00.1234567890123Z',
    '2026-01-01t00:00:00z',
    '2026-01-01 00:00:00Z',
  ),
);

/** Raw JSON bodies JSON.stringify cannot make: nesting past any bound, numbers past double range, broken JSON. */
const hostileRawBody = fc.oneof(
  ...deeplyNestedJson(),
  fc.constantFrom(
    ...unwritableJsonTexts,
    '{',
    'null',
    '"text"',
    '1',
    '[]',
    '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{"x":1}}}',
    '',
    '{"a":1,"a":2}',
  ),
);

/** Any value of the wrong kind, whatever the field wants. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileText,
  amountText,
  dateText,
  fc.constantFrom(
    null,
    true,
    false,
    0,
    -1,
    -0,
    1.5,
    1e308,
    -1e308,
    2 ** 53 + 2,
    2 ** 31,
    -(2 ** 63),
    [],
    {},
    [[]],
    [1, 2],
    { a: { b: { c: 1 } } },
    '',
    ' ',
    'a'.repeat(5000),
    'unknown_enum_value',
    'ACTIVE',
    'sandbox ',
    'production\u0000',
  ),
  fc.anything({ maxDepth: 2 }),
);

const hostileSegment = fc.oneof(
  hostileText.map(encodeSegment),
  fc.string({ maxLength: 40 }).map(encodeSegment),
  fc.constantFrom(
    '%00',
    'mem_%00',
    '%E0%A4%A',
    '%ZZ',
    '%',
    '%ED%A0%80',
    '%C0%80',
    '0',
    '-1',
    'null',
    '..',
    'a'.repeat(101),
    'a'.repeat(300),
    'a'.repeat(3000),
  ),
);

/** A cursor whose number overflows 64 bits, and other unreadable ones. */
const hostileCursor = fc.oneof(
  fc.bigInt({ min: 2n ** 63n, max: 10n ** 19n - 1n }).map((n) => Buffer.from(`v1:${n}`).toString('base64url')),
  fc.constantFrom(
    Buffer.from('v1:-1').toString('base64url'),
    Buffer.from('v1:1.5').toString('base64url'),
    '%00',
    '%E0%A4%A',
    'v1:1',
    '!!!',
  ),
);

const kind = (schema: Json): string | undefined => (Array.isArray(schema.type) ? schema.type[0] : schema.type);

/**
 * A value after the schema: what gets past validation to the handler. `strict`: every field as the
 * schema wants it (only its content odd: amounts, dates, text); otherwise fields are also left out
 * or replaced by hostile values at every level.
 */
function valueFor(schema: Json | undefined, name: string, strict: boolean, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return hostileValue;
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return fc.oneof(...variants.map((s: Json) => valueFor(s, name, strict, depth + 1)));
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.const !== undefined) return fc.constant(schema.const);
  switch (kind(schema)) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? -(2 ** 40);
      const max = schema.maximum ?? 2 ** 40;
      const int = fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max));
      return kind(schema) === 'integer' ? int : fc.oneof(int, fc.double({ min, max, noNaN: true }));
    }
    case 'array': {
      const maxLength = Math.min(schema.maxItems ?? 4, 4);
      return fc.array(valueFor(schema.items, name, strict, depth + 1), {
        minLength: Math.min(schema.minItems ?? 0, maxLength),
        maxLength,
      });
    }
    case 'object':
      return objectFor(schema, strict, depth + 1);
    case 'string':
      return stringFor(schema, name, strict);
    default:
      return hostileValue;
  }
}

function stringFor(schema: Json, name: string, strict: boolean): fc.Arbitrary<string> {
  if (schema.format === 'date-time') return dateText;
  if (schema.pattern) {
    const matching = fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= 200);
    return strict ? matching : fc.oneof(matching, hostileText);
  }
  const fit = (s: string) => {
    const bounded = s.slice(0, schema.maxLength ?? s.length);
    return bounded.length >= (schema.minLength ?? 0) ? bounded : bounded.padEnd(schema.minLength, 'x');
  };
  const byName = /amount|fee|min|max|threshold/.test(name)
    ? amountText
    : /asset|currency|code/.test(name)
      ? fc.constantFrom('USDT', 'BTC', 'ETH', 'USD', 'EUR', 'usdt', 'XXXX', 'USDT\u0000')
      : name === 'action'
        ? fc.constantFrom(
            'withdrawal.create',
            'withdrawal.create',
            'withdrawal.create',
            'withdrawal.create ',
            'exchange.create',
          )
        : /email/.test(name)
          ? fc.constantFrom(
              'a@example.com',
              'A@EXAMPLE.COM',
              'a@b',
              '@',
              'a\u0000@example.com',
              `${'a'.repeat(250)}@e.co`,
            )
          : /ip_allowlist/.test(name)
            ? fc.constantFrom(
                '127.0.0.1',
                '10.0.0.0/8',
                '::1',
                '0.0.0.0/0',
                '999.1.1.1',
                '1.2.3.4/33',
                '10.0.0.0/-1',
                'a,b,,',
                '::ffff:1.2.3.4/129',
              )
            : /frame_ancestors|url|origin/.test(name)
              ? fc.constantFrom(
                  'https://example.com',
                  'http://localhost:3000',
                  '*',
                  "'self'",
                  'https://*.example.com',
                  'javascript:alert(1)',
                  'https://exa mple.com',
                )
              : fc.string({ maxLength: 30 });
  return fc
    .oneof(
      { weight: 4, arbitrary: byName },
      { weight: strict ? 0 : 1, arbitrary: hostileText },
      { weight: 1, arbitrary: amountText },
    )
    .map(fit);
}

/** An object after the schema: each field kept, left out or made hostile; sometimes an unknown one added. */
function objectFor(schema: Json, strict: boolean, depth: number): fc.Arbitrary<Json> {
  const required = new Set<string>(schema.required ?? []);
  const fields: Record<string, fc.Arbitrary<{ v: unknown } | undefined>> = {};
  for (const [key, sub] of Object.entries<Json>(schema.properties ?? {})) {
    fields[key] = fc.oneof(
      { weight: 8, arbitrary: valueFor(sub, key, strict, depth).map((v) => ({ v })) },
      { weight: strict ? 0 : 1, arbitrary: hostileValue.map((v) => ({ v })) },
      { weight: required.has(key) ? (strict ? 0 : 1) : 4, arbitrary: fc.constant(undefined) },
    );
  }
  const extra = fc.option(
    fc.tuple(
      fc.oneof(hostileText, fc.constantFrom('__proto__', 'constructor', 'id', 'merchant_id', 'amount')),
      hostileValue,
    ),
    { freq: strict ? 20 : 6 },
  );
  return fc.tuple(fc.record(fields), extra).map(([record, more]) => {
    const out: Json = {};
    for (const [k, v] of Object.entries(record)) if (v) out[k] = v.v;
    if (more) out[more[0]] = more[1];
    return out;
  });
}

/** A query value as text: what the schema wants, or anything. */
const queryText = (value: unknown) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

interface Operation {
  method: string;
  path: string;
  pathParams: Array<{ name: string; schema: Json }>;
  queryParams: Array<{ name: string; schema: Json }>;
  body: Json | undefined;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One call on the operator listener with the request line exactly as given (no URL normalisation). */
function call(base: URL, method: string, path: string, body: string | undefined): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${adminToken}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = request({ host: base.hostname, port: base.port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

function problemWith(answer: Answer): string | undefined {
  if (answer.status >= 500) return 'server error';
  if (answer.status < 200 || (answer.status >= 300 && answer.status < 400)) return 'unexpected status';
  if (/\bat [^\n]+\.[cm]?[jt]s:\d+|node_modules/.test(answer.text)) return 'stack trace in the answer';
  if (answer.status < 400) return undefined;
  let body: any;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return 'error answer not JSON';
  }
  const requestId = answer.headers['x-request-id'];
  const enveloped =
    typeof body?.code === 'string' &&
    typeof body?.type === 'string' &&
    typeof body?.message === 'string' &&
    typeof requestId === 'string' &&
    body.request_id === requestId;
  return enveloped ? undefined : 'not the error envelope';
}

describe('random input on the operator listener never makes a server error', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));

  it('answers every operator operation with an error envelope below 500 or a success', async () => {
    // Real objects, so that some calls get past "not found" into the handler's own checks.
    const { merchantId, creds, client } = await newMerchantClient(service);
    const member = (await client.members.create({ external_member_id: 'op-fuzz-member' })) as Json;
    const user = await admin(service, 'POST', `/admin/v1/merchants/${merchantId}/console-users`, {
      email: 'fuzz@example.com',
      role: 'developer',
    });
    const listed = async (path: string) =>
      ((await admin<{ data: Array<{ id: string }> }>(service, 'GET', path)).body.data ?? []).map((r) => r.id);
    const byPath: Array<[RegExp, string[]]> = [
      [/\/merchants\/\{id\}/, [merchantId]],
      [/\/api-keys\/\{id\}/, [creds.keyId]],
      [/\/console-users\/\{id\}/, [user.body.id]],
      [/\/members\/\{id\}/, [member.id]],
      [/\/earn\/products\/\{id\}/, await listed('/admin/v1/earn/products?environment=sandbox')],
      [/\/cards\/products\/\{id\}/, await listed('/admin/v1/cards/products?environment=sandbox')],
      [/\/remit\/corridors\/\{id\}/, await listed('/admin/v1/remit/corridors?environment=sandbox')],
      [/\/exchange\/directions\/\{id\}/, await listed('/admin/v1/exchange/directions?environment=sandbox')],
    ];
    const known: Record<string, string[]> = {
      id: byPath.flatMap(([, ids]) => ids),
      code: ['USDT', 'BTC', 'ETH', 'EUR', 'usdt'],
      asset: ['USDT', 'BTC', 'ETH', 'EUR'],
      network: ['TRON', 'ETHEREUM', 'BITCOIN', 'tron'],
      address: ['0x' + 'ab'.repeat(20), 'T' + 'A'.repeat(33), '0x' + 'AB'.repeat(20)],
      bin: ['400000', '48953710', '12345', '000000'],
      business: ['card_issuing', 'remittance', 'exchange', 'high_value_transfer', 'fuzz_business'],
    };
    const knownFor = (path: string, name: string): string[] => {
      const pool = name === 'id' ? byPath.find(([re]) => re.test(path))?.[1] : known[name];
      return pool?.length ? pool : known.id!;
    };

    const named = (await admin<Json>(service, 'GET', '/admin/v1/openapi.json')).body;
    // Named schemas inlined (the document refers to components.schemas): the values follow the schema itself.
    const inline = (value: unknown): any => {
      if (Array.isArray(value)) return value.map(inline);
      if (value === null || typeof value !== 'object') return value;
      const ref = (value as Json).$ref;
      if (typeof ref === 'string' && ref.startsWith('#/components/schemas/'))
        return inline(named.components.schemas[ref.slice('#/components/schemas/'.length)]);
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inline(v)]));
    };
    const doc: Json = { ...named, paths: inline(named.paths) };
    const operations: Operation[] = [];
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const [method, op] of Object.entries<Json>(item)) {
        if (typeof op !== 'object' || method === 'parameters') continue;
        const params: Json[] = op.parameters ?? [];
        operations.push({
          method: method.toUpperCase(),
          path,
          pathParams: params.filter((p) => p.in === 'path').map((p) => ({ name: p.name, schema: p.schema ?? {} })),
          queryParams: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema ?? {} })),
          body: op.requestBody?.content?.['application/json']?.schema,
        });
      }
    }
    assert.ok(operations.length >= 60, `${operations.length} operations`);

    const base = new URL(service.adminUrl);
    const failures: string[] = [];
    for (const op of operations) {
      const segments = fc.record(
        Object.fromEntries(
          op.pathParams.map((p) => [
            p.name,
            fc.oneof(
              { weight: 6, arbitrary: fc.constantFrom(...knownFor(op.path, p.name)) },
              { weight: 1, arbitrary: fc.constantFrom(...known.id!) },
              { weight: 2, arbitrary: valueFor(p.schema, p.name, false).map((v) => encodeSegment(queryText(v))) },
              { weight: 2, arbitrary: hostileSegment },
            ),
          ]),
        ),
      );
      const ownQuery = fc.record(
        Object.fromEntries(
          op.queryParams.map((p) => [
            p.name,
            fc.oneof(
              {
                weight: 6,
                arbitrary: valueFor(p.schema, p.name, false).map((v) => ({ v: encodeSegment(queryText(v)) })),
              },
              {
                weight: 2,
                arbitrary: fc
                  .oneof(
                    hostileText.map(encodeSegment),
                    amountText.map(encodeSegment),
                    hostileCursor,
                    fc.constantFrom('%E0%A4%A', '%ZZ', '%', ''),
                  )
                  .map((v) => ({ v })),
              },
              { weight: 2, arbitrary: fc.constant(undefined) },
            ),
          ]),
        ),
      );
      const extraQuery = fc.array(
        fc.tuple(
          fc.oneof(
            fc.constantFrom(...op.queryParams.map((p) => p.name), 'limit', 'cursor'),
            hostileText.map(encodeSegment),
          ),
          fc.oneof(hostileText.map(encodeSegment), amountText.map(encodeSegment), hostileCursor),
        ),
        { maxLength: 2 },
      );
      const strictQuery = fc
        .record(
          Object.fromEntries(
            op.queryParams.map((p) => [p.name, fc.option(valueFor(p.schema, p.name, true), { freq: 3 })]),
          ),
        )
        .map((own) =>
          Object.entries(own)
            .filter(([, v]) => v !== null)
            .map(([k, v]) => `${k}=${encodeSegment(queryText(v))}`)
            .join('&'),
        );
      const looseQuery = fc.tuple(ownQuery, extraQuery).map(([own, extra]) =>
        [
          ...Object.entries(own)
            .filter(([, v]) => v)
            .map(([k, v]) => `${k}=${v!.v}`),
          ...extra.map(([k, v]) => `${k}=${v}`),
        ].join('&'),
      );
      const query = fc.oneof(strictQuery, looseQuery);
      const bodySchema = op.body ?? { type: 'object' };
      const body: fc.Arbitrary<string | undefined> = fc.oneof(
        { weight: op.body ? 6 : 1, arbitrary: valueFor(bodySchema, 'body', true).map((v) => JSON.stringify(v)) },
        { weight: op.body ? 4 : 1, arbitrary: valueFor(bodySchema, 'body', false).map((v) => JSON.stringify(v)) },
        { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }).map((v) => JSON.stringify(v) ?? 'null') },
        { weight: 1, arbitrary: hostileRawBody },
        { weight: 1, arbitrary: fc.constant(undefined) },
      );
      let listed = false;
      await fc
        .assert(
          fc.asyncProperty(segments, query, body, async (seg, q, b) => {
            const path =
              op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => (seg as Record<string, string>)[name]!) +
              (q ? `?${q}` : '');
            const withBody = op.method !== 'GET' && op.method !== 'DELETE';
            const answer = await call(base, op.method, path, withBody ? b : undefined);
            const problem = problemWith(answer);
            if (problem) {
              listed = true;
              failures.push(
                `${op.method} ${path.slice(0, 160)} ${withBody ? (b ?? '(no body)').slice(0, 300) : ''} ` +
                  `→ ${answer.status} (${problem}) ${answer.text.slice(0, 300)}`,
              );
              return false;
            }
            return true;
          }),
          { numRuns: 36, seed: 20261123, endOnFailure: true },
        )
        .catch((err: Error) => {
          // A property that returned false is already listed; anything thrown (a dropped connection) is listed here.
          if (!listed) failures.push(`${op.method} ${op.path}: ${err.message.slice(0, 1500)}`);
        });
    }
    assert.deepEqual(failures, []);
  });
});
