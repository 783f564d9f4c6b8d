/**
 * The idempotency and signing contract (reference: "Idempotency", "Signing", "Retry rules";
 * extensions 8), checked on every signed write the served OpenAPI document lists: each has a
 * valid request in test/support/write-routes.ts, and a route added without one fails the first
 * test. Side effects are judged by a digest of every row the merchant owns.
 * Runs on the embedded database and on PostgreSQL (TEST_DATABASE_URL); the requests sent together
 * with one key (and a keyless request where the key is optional) only on PostgreSQL, where they
 * truly run in parallel.
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { signRequest, type MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { rawRequest, type RawResponse } from './support/raw-http.js';
import {
  baseUrlFor,
  newMerchantClient,
  useTestService,
  type Credentials,
  postgresOnly,
  onPostgres,
  instantUpstreams,
} from './support/service.js';
import { writeCases, type WriteCall } from './support/write-routes.js';

type Json = Record<string, any>;
type KeyRule = 'required' | 'optional' | 'none';
interface DocumentedWrite {
  key: KeyRule;
  member: boolean;
}

/** Rows that record requests rather than their effects. */
const notEffects = new Set([
  'idempotency_keys',
  'signature_nonces',
  'api_call_logs',
  'merchant_api_logs',
  'rate_windows',
]);

describe('idempotency and signing of every write', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  let merchantId: string;
  let creds: Credentials;
  let token: string;
  let doc: Json;
  let writes: Map<string, DocumentedWrite>;
  let merchantTables: string[];
  useTestService(
    {
      config: {
        rateLimitScale: 1_000,
        ...instantUpstreams,
      },
    },
    (s) => ({ service, client, merchantId, creds } = s),
  );
  const cases = writeCases(
    () => service,
    () => client,
    () => merchantId,
  );

  before(async () => {
    token = await client.getToken();
    doc = (await (await fetch(`${service.publicUrl}/v1/openapi.json`)).json()) as Json;
    writes = new Map();
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const [method, op] of Object.entries<Json>(item)) {
        const header = (name: string) => (op.parameters ?? []).find((p: Json) => p.in === 'header' && p.name === name);
        // Signing and the key's requirement are the operation's extensions (the signing headers are
        // security schemes, and the key is an optional parameter whose requirement `x-idempotency` states).
        if (op['x-signed'] !== true) continue;
        writes.set(`${method.toUpperCase()} ${path}`, {
          key: op['x-idempotency'] as KeyRule,
          member: header('x-on-behalf-of')?.required === true,
        });
      }
    }
    const { rows } = await sql<{ table_name: string }>`
      SELECT c.table_name FROM information_schema.columns c
      JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND
        t.table_type = 'BASE TABLE'
      WHERE c.table_schema = current_schema() AND c.column_name = 'merchant_id' ORDER BY 1`.execute(service.ctx.db);
    merchantTables = rows.map((r) => r.table_name).filter((t) => !notEffects.has(t));
  });

  /** Every row the merchant owns (balances through its journal entries), as one digest. */
  async function digest(): Promise<string> {
    const parts = merchantTables.map(
      (t) => sql`SELECT ${t} || ':' || x::text AS r FROM ${sql.table(t)} x WHERE x.merchant_id = ${merchantId}`,
    );
    const { rows } = await sql<{
      d: string | null;
    }>`SELECT md5(string_agg(r, '|' ORDER BY r)) AS d FROM (${sql.join(parts, sql` UNION ALL `)}) s`.execute(
      service.ctx.db,
    );
    return rows[0]!.d ?? '';
  }

  interface SendOptions {
    key?: string | false;
    onBehalfOf?: string;
    timestamp?: string;
    nonce?: string;
    /** Sign these instead of what is sent. */
    signedPath?: string;
    signedBody?: string;
    rawBody?: string;
    query?: string;
  }

  /** A signed request built by hand, so that each signing rule can be broken on purpose. */
  function send(route: string, call: WriteCall, opts: SendOptions = {}): Promise<RawResponse> {
    const method = route.split(' ')[0]!;
    const body = opts.rawBody ?? (call.body === undefined ? '' : JSON.stringify(call.body));
    const path = call.path + (opts.query ?? '');
    const timestamp = opts.timestamp ?? String(Math.floor(Date.now() / 1000));
    const nonce = opts.nonce ?? randomUUID();
    const headers: Record<string, string> = {
      host: new URL(baseUrlFor(service, 'sandbox')).host,
      authorization: `Bearer ${token}`,
      'x-timestamp': timestamp,
      'x-nonce': nonce,
      'x-signature': signRequest({
        method,
        pathWithQuery: opts.signedPath ?? path,
        timestamp,
        nonce,
        rawBody: opts.signedBody ?? body,
        signingKey: creds.signingKey,
      }),
    };
    const onBehalfOf = opts.onBehalfOf ?? call.onBehalfOf;
    if (onBehalfOf !== undefined) headers['x-on-behalf-of'] = onBehalfOf;
    if (opts.key !== false) headers['x-idempotency-key'] = opts.key ?? randomUUID();
    if (call.stepUp) headers['x-step-up'] = call.stepUp;
    if (body !== '') headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(body));
    return rawRequest(`${service.publicUrl}${path}`, { method, headers, body });
  }

  const fresh = (res: RawResponse, what: string) => {
    assert.ok(res.status >= 200 && res.status < 300, `${what}: ${res.status} ${res.text}`);
    assert.equal(res.headers['x-idempotent-replay'], undefined, `${what}: not a replay`);
  };
  const refused = (res: RawResponse, status: number, code: string, what: string) => {
    assert.equal(res.status, status, `${what}: ${res.text}`);
    assert.equal(res.body.code, code, `${what}: ${res.text}`);
    const type = { 400: 'invalid_request_error', 401: 'authentication_error', 409: 'idempotency_error' }[status];
    assert.equal(res.body.type, type, what);
    assert.equal(res.body.request_id, res.headers['x-request-id'], `${what}: request_id is X-Request-Id`);
    assert.equal(res.headers['x-idempotent-replay'], undefined, `${what}: an answer of its own`);
  };
  const replayOf = (res: RawResponse, first: RawResponse, what: string) => {
    assert.equal(res.headers['x-idempotent-replay'], 'true', `${what}: ${res.status} ${res.text}`);
    assert.equal(res.status, first.status, what);
    assert.equal(res.text, first.text, `${what}: the first answer, byte for byte`);
  };
  /** Another member of the merchant, for the same request sent on behalf of someone else. */
  const otherMember = async () =>
    (await client.members.create({ external_member_id: `ia-o-${randomUUID().slice(0, 8)}` }))
      .external_member_id as string;
  /** A request on another keyed route with the same principal. */
  function elsewhere(route: string, call: WriteCall): [string, WriteCall] {
    if (call.onBehalfOf !== undefined) {
      return route === 'POST /v1/kyc/sessions'
        ? ['POST /v1/kyc/profile-sessions', { path: '/v1/kyc/profile-sessions', onBehalfOf: call.onBehalfOf }]
        : ['POST /v1/kyc/sessions', { path: '/v1/kyc/sessions', onBehalfOf: call.onBehalfOf }];
    }
    return route === 'POST /v1/sandbox/clock/advance'
      ? ['POST /v1/sandbox/reset', { path: '/v1/sandbox/reset' }]
      : ['POST /v1/sandbox/clock/advance', { path: '/v1/sandbox/clock/advance', body: { seconds: 1 } }];
  }

  it('every signed write the document lists has a case here, and every case is a documented route', () => {
    assert.deepEqual(
      [...writes.keys()].filter((r) => !(r in cases)),
      [],
      'routes without a case: add one to test/support/write-routes.ts',
    );
    assert.deepEqual(
      Object.keys(cases).filter((r) => !writes.has(r)),
      [],
      'cases without a route',
    );
  });

  it('reads are never signed: no GET the document lists asks for a signature', async () => {
    const member = (await client.members.create({ external_member_id: `ia-r-${randomUUID().slice(0, 8)}` }))
      .external_member_id as string;
    const signingCodes = ['invalid_signature', 'signature_required', 'timestamp_out_of_range', 'nonce_reused'];
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      if (!item.get) continue;
      const onBehalf = (item.get.parameters ?? []).some(
        (p: Json) => p.in === 'header' && p.name === 'x-on-behalf-of' && p.required,
      );
      const res = await rawRequest(`${service.publicUrl}${path.replace(/\{[^}]+\}/g, 'x')}`, {
        headers: {
          host: new URL(baseUrlFor(service, 'sandbox')).host,
          authorization: `Bearer ${token}`,
          ...(onBehalf ? { 'x-on-behalf-of': member } : {}),
        },
      });
      assert.ok(
        res.status !== 401 && !signingCodes.includes(res.body?.code),
        `GET ${path}: ${res.status} ${res.text.slice(0, 200)}`,
      );
    }
  });

  it(
    "a business refusal is the key's result: insufficient_balance is replayed after a top-up (a new key is " +
      'needed)',
    async () => {
      const call = {
        path: '/v1/withdrawals',
        body: { asset: 'USDT', network: 'TRON', address: 'TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW', amount: '5000' },
      };
      const m = (await client.members.create({ external_member_id: `ia-b-${randomUUID().slice(0, 8)}` }))
        .external_member_id as string;
      const key = randomUUID();
      const first = await send('POST /v1/withdrawals', { ...call, onBehalfOf: m }, { key });
      refused(first, 400, 'insufficient_balance', 'no balance');
      await client.deposits.create({ member_id: m, asset: 'USDT', amount: '10000', tx_hash: `ia-${randomUUID()}` });
      replayOf(
        await send('POST /v1/withdrawals', { ...call, onBehalfOf: m }, { key }),
        first,
        'after the top-up, the same key',
      );
      fresh(await send('POST /v1/withdrawals', { ...call, onBehalfOf: m }), 'a new key');
    },
  );

  it('the idempotency window is real time: advancing the sandbox clock two days frees no key', async () => {
    const call = { path: '/v1/members', body: { external_member_id: `ia-c-${randomUUID().slice(0, 8)}` } };
    const key = randomUUID();
    const first = await send('POST /v1/members', call, { key });
    fresh(first, 'first');
    fresh(
      await send('POST /v1/sandbox/clock/advance', {
        path: '/v1/sandbox/clock/advance',
        body: { seconds: 2 * 86_400 },
      }),
      'clock advanced',
    );
    replayOf(await send('POST /v1/members', call, { key }), first, 'two sandbox days later');
    refused(
      await send('POST /v1/members', { path: '/v1/members', body: { external_member_id: 'ia-c-other' } }, { key }),
      409,
      'idempotency_key_reused',
      'another body',
    );
  });

  it(
    'per route, requests with one key sent together run once',
    {
      skip: postgresOnly('the embedded database runs one statement at a time'),
    },
    () => {},
  );

  for (const [route, prepare] of Object.entries(cases)) {
    describe(route, () => {
      const rule = () => writes.get(route)!;
      // A merchant of its own per route: the digest reads only this route's rows.
      before(async () => {
        ({ merchantId, creds, client } = await newMerchantClient(service));
        token = await client.getToken();
      });

      it('signing, key rules, replay, reuse and the 24 hours, on one prepared request', async () => {
        const call = await prepare();
        const someoneElse = call.onBehalfOf === undefined ? undefined : await otherMember();
        const before = await digest();
        // Signing: each refusal changes nothing.
        const now = Math.floor(Date.now() / 1000);
        refused(
          await send(route, call, { timestamp: String(now - 301) }),
          401,
          'timestamp_out_of_range',
          'stale timestamp',
        );
        // (Well beyond the 300 s: the service's clock moves on while the requests are sent.)
        refused(
          await send(route, call, { timestamp: String(now + 330) }),
          401,
          'timestamp_out_of_range',
          'future timestamp',
        );
        const body = call.body === undefined ? '' : JSON.stringify(call.body);
        refused(
          await send(route, call, { rawBody: body === '' ? '{}' : `${body} `, signedBody: body }),
          401,
          'invalid_signature',
          'body changed after signing',
        );
        refused(
          await send(route, call, { signedPath: call.other.path === call.path ? `${call.path}/x` : call.other.path }),
          401,
          'invalid_signature',
          'signed for another path',
        );
        refused(
          await send(route, call, { query: '?a=1', signedPath: call.path }),
          401,
          'invalid_signature',
          'query not signed',
        );
        // Key rules: a missing key where it is required, a malformed one always; a refused input is the key's result.
        if (rule().key !== 'none') {
          if (rule().key === 'required')
            refused(await send(route, call, { key: false }), 400, 'idempotency_key_required', 'no key');
          refused(await send(route, call, { key: 'not-a-key' }), 400, 'idempotency_key_invalid', 'malformed key');
          refused(await send(route, call, { key: `${randomUUID()}0` }), 400, 'idempotency_key_invalid', 'too long');
          if (call.body !== undefined) {
            const key = randomUUID();
            // A quote takes its key only with `lock: true` (the reference: "meaningful only with lock: true").
            const rawBody = route === 'POST /v1/exchange/quotes' ? '{"lock":true}' : '[]';
            const invalid = await send(route, call, { key, rawBody });
            assert.equal(invalid.status, 400, invalid.text);
            replayOf(await send(route, call, { key, rawBody }), invalid, 'a refused input is replayed');
            refused(
              await send(route, call, { key }),
              409,
              'idempotency_key_reused',
              'the corrected input takes a new key',
            );
          }
        }
        assert.equal(await digest(), before, 'no refused request changed anything');

        const key = randomUUID();
        const nonce = randomUUID();
        const first = await send(route, call, { key, nonce });
        fresh(first, 'first, signed as it should be');
        const after = await digest();
        refused(await send(route, call.other, { nonce }), 401, 'nonce_reused', 'the nonce again');
        if (rule().key === 'none') return assert.equal(await digest(), after, 'a used nonce changed nothing');

        replayOf(await send(route, call, { key }), first, 'same key, same body');
        refused(await send(route, call.other, { key }), 409, 'idempotency_key_reused', 'another request on the route');
        refused(await send(...elsewhere(route, call), { key }), 409, 'idempotency_key_reused', 'another endpoint');
        if (someoneElse !== undefined)
          refused(
            await send(route, call, { key, onBehalfOf: someoneElse }),
            409,
            'idempotency_key_reused',
            'another member',
          );
        assert.equal(await digest(), after, 'neither the replay nor a refusal changed anything');
        replayOf(await send(route, call, { key }), first, 'the first answer stays retrievable with its key');

        // After 24 hours the key is new. Everything that dates its first use on real time: the record, and a QR order's
        // own key.
        await sql`UPDATE idempotency_keys SET created_at = created_at - interval '24 hours 1 second' WHERE merchant_id
          = ${merchantId} AND key = ${key}`.execute(service.ctx.db);
        await sql`UPDATE qrpay_orders SET call_started_at = call_started_at - interval '24 hours 1 second' WHERE
          merchant_id = ${merchantId} AND idempotency_key = ${key}`.execute(service.ctx.db);
        fresh(await send(route, call.other, { key }), 'another request with the key, a day later');
      });

      // Requests truly in parallel need PostgreSQL: the embedded database runs one statement at a time.
      if (onPostgres())
        it(
          'runs once for requests with one key sent together (the others replay it or are told it is in ' +
            'progress); runs without a key where the key is optional',
          async (t) => {
            if (rule().key === 'none') return t.skip('takes no key');
            const call = await prepare();
            const key = randomUUID();
            const answers = await Promise.all([1, 2, 3].map(() => send(route, call, { key })));
            const ran = answers.filter((a) => a.status < 300 && a.headers['x-idempotent-replay'] === undefined);
            assert.equal(
              ran.length,
              1,
              'one ran: ' +
                answers.map((a) => `${a.status} ${a.headers['x-idempotent-replay'] ?? ''} ${a.text}`).join(' | '),
            );
            for (const a of answers.filter((x) => x !== ran[0])) {
              if (a.status === 409) refused(a, 409, 'idempotency_in_progress', 'the same key in parallel');
              else replayOf(a, ran[0]!, 'the same key in parallel');
            }
            const after = await digest();
            replayOf(await send(route, call, { key }), ran[0]!, 'afterwards');
            assert.equal(await digest(), after);
            if (rule().key === 'optional')
              fresh(await send(route, call.other, { key: false }), 'no key where it is optional');
          },
        );
    });
  }
});
