import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningService } from '../src/server.js';
import { consumeNonce, purgeExpiredNonces } from '../src/platform/writes/nonces.js';
import { sourceSubject } from '../src/platform/auth/rate-limit.js';
import { ipv6Hextets } from '../src/platform/http/ip-address.js';
import { stopsTokens } from '../src/modules/merchants/rules.js';
import { rawRequest, signedHeaders, type RawResponse } from './support/raw-http.js';
import {
  admin,
  baseUrlFor,
  createKey,
  createMerchant,
  newMerchantClient,
  type Credentials,
  useTestService,
} from './support/service.js';

/** Issue 9, points 7 to 9, 11 and 15: request security found by the first audit. */

const sandboxHost = (service: RunningService) => new URL(baseUrlFor(service, 'sandbox')).host;

function expectError(res: RawResponse, status: number, code: string, what = ''): void {
  assert.equal(res.status, status, `${what} ${res.text}`);
  assert.equal(res.body.code, code, `${what} ${res.text}`);
  assert.ok(res.headers['x-request-id'], `${what} X-Request-Id`);
  assert.equal(res.body.request_id, res.headers['x-request-id'], `${what} request_id`);
}

describe('signed-request replay (7) and nonce bounds (15)', () => {
  let service: RunningService;
  let creds: Credentials;
  let token: string;
  // The request-security clock of the service, moved by the test instead of waiting 300 s.
  let offsetMs = 0;
  useTestService({ requestClock: () => Date.now() + offsetMs, merchant: false }, (s) => ({ service } = s));
  before(async () => {
    const m = await newMerchantClient(service);
    creds = m.creds;
    token = await m.client.getToken();
  });

  const serverSeconds = () => Math.floor((Date.now() + offsetMs) / 1000);

  function signedMemberPost(opts: { timestamp: string; nonce: string; idempotencyKey?: string; body?: string }) {
    const body = opts.body ?? JSON.stringify({ external_member_id: `replay-${randomUUID()}` });
    const to = { host: sandboxHost(service), token, signingKey: creds.signingKey };
    const { timestamp, nonce, idempotencyKey: key } = opts;
    const headers = signedHeaders(to, '/v1/members', body, { timestamp, nonce, key });
    return {
      body,
      headers,
      send: (extra: Record<string, string> = {}) =>
        rawRequest(`${service.publicUrl}/v1/members`, { method: 'POST', headers: { ...headers, ...extra }, body }),
    };
  }

  it(
    'refuses the same signed bytes once the first-use window has passed but the timestamp is still ' + 'accepted',
    async () => {
      offsetMs = 0;
      const start = serverSeconds();
      const request = signedMemberPost({ timestamp: String(start + 295), nonce: randomUUID() });
      const first = await request.send();
      assert.equal(first.status, 201, first.text);

      offsetMs = 306_000; // 306 s after first use: a nonce kept for 300 s from first use would be gone
      expectError(await request.send(), 401, 'nonce_reused', 'identical request');
      expectError(
        await request.send({ 'x-idempotency-key': randomUUID() }),
        401,
        'nonce_reused',
        'same signed bytes, new idempotency key',
      );

      // The purge at that time keeps the nonce: it is still needed.
      await purgeExpiredNonces(service.ctx.db, Date.now() + offsetMs);
      offsetMs = 590_000; // the timestamp (start + 295) is still within 300 s
      expectError(
        await request.send({ 'x-idempotency-key': randomUUID() }),
        401,
        'nonce_reused',
        'near the end of the timestamp window',
      );

      offsetMs = 600_000; // the timestamp has left the window: refused for that reason
      expectError(
        await request.send({ 'x-idempotency-key': randomUUID() }),
        401,
        'timestamp_out_of_range',
        'after the window',
      );
      offsetMs = 0;
    },
  );

  it('ends a token 30 minutes after its exchange on the request-security clock', async () => {
    offsetMs = 0;
    const read = () =>
      rawRequest(`${service.publicUrl}/v1/merchant/balances`, {
        headers: { host: sandboxHost(service), authorization: `Bearer ${token}` },
      });
    assert.equal((await read()).status, 200);
    offsetMs = 30 * 60_000 + 5_000;
    expectError(await read(), 401, 'invalid_token', 'after 30 minutes');
    offsetMs = 0;
    assert.equal((await read()).status, 200);
  });

  it('keeps a nonce for max(first use, timestamp) + 300 s in the database', async () => {
    const db = service.ctx.db;
    const now = Date.UTC(2030, 0, 1, 12, 0, 0);
    const nowSeconds = now / 1000;
    const merchant = creds.merchantId;
    const use = (nonce: string, timestampSeconds: number, atMs: number) =>
      consumeNonce(db, { merchantId: merchant, environment: 'sandbox', nonce, timestampSeconds, nowMs: atMs });

    const future = `future-${randomUUID()}`;
    assert.equal(await use(future, nowSeconds + 295, now), true);
    assert.equal(await use(future, nowSeconds + 295, now + 306_000), false, 'timestamp still acceptable: kept');
    assert.equal(await use(future, nowSeconds + 295, now + 594_000), false);
    await purgeExpiredNonces(db, now + 594_000);
    // Timestamps are whole seconds: at now + 595.999 s the timestamp is still 300 s old, so acceptable.
    assert.equal(
      await use(future, nowSeconds + 295, now + 595_999),
      false,
      'not purged while its timestamp is acceptable',
    );
    assert.equal(
      await use(future, nowSeconds + 295, now + 596_000),
      true,
      'free once the timestamp has left the window',
    );

    const past = `past-${randomUUID()}`;
    assert.equal(await use(past, nowSeconds - 200, now), true);
    assert.equal(
      await use(past, nowSeconds - 200, now + 299_999),
      false,
      'five minutes from first use, as the reference says',
    );
    assert.equal(await use(past, nowSeconds - 200, now + 300_000), true);
  });

  it('bounds x-nonce: 128 visible ASCII characters at most, a clear invalid_signature otherwise', async () => {
    const ts = String(serverSeconds());
    const longest = signedMemberPost({ timestamp: ts, nonce: 'n'.repeat(128) });
    assert.equal((await longest.send()).status, 201);
    for (const [what, nonce] of [
      ['129 characters', 'n'.repeat(129)],
      ['3,000 characters', randomUUID().repeat(84).slice(0, 3000)],
      ['a space', 'a b'],
    ] as const) {
      const res = await signedMemberPost({ timestamp: ts, nonce }).send();
      expectError(res, 401, 'invalid_signature', what);
      assert.equal(res.body.type, 'authentication_error');
    }
  });
});

// One service for the token-exchange limits and the operator key changes. Requests arrive from
// 127.0.0.1; X-Forwarded-For gives each client of the limits' tests its own source address (the
// key changes' requests send none: they come from 127.0.0.1, whose budget those tests leave alone).
let keysService: RunningService;
useTestService({ config: { trustedProxies: ['127.0.0.1'] }, merchant: false }, (s) => ({ service: keysService } = s));

describe('pages over HTTPS', () => {
  it(
    'the console and hosted screens send HSTS and Secure cookies only when the request came over HTTPS (a ' +
      'trusted proxy says so)',
    async () => {
      for (const path of ['/console/sign-in', '/hosted/kyc_00000000000000000000000000000000']) {
        const viaProxy = await rawRequest(`${keysService.publicUrl}${path}`, {
          headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.9' },
        });
        assert.equal(viaProxy.headers['strict-transport-security'], 'max-age=31536000', path);
        const plain = await rawRequest(`${keysService.publicUrl}${path}`);
        assert.equal(plain.headers['strict-transport-security'], undefined, path);
      }
      const signIn = await rawRequest(`${keysService.publicUrl}/console/sign-in`, {
        headers: { 'x-forwarded-proto': 'https' },
      });
      const cookies = ([] as string[]).concat(signIn.headers['set-cookie'] ?? []);
      assert.ok(cookies.length > 0 && cookies.every((c) => /; Secure/.test(c)), cookies.join(' | '));
    },
  );
});

describe('token-exchange limits (8)', () => {
  let service: RunningService;
  before(() => {
    service = keysService;
  });

  function exchange(from: string, headers: Record<string, string>) {
    return rawRequest(`${service.publicUrl}/v1/connect/token`, {
      method: 'POST',
      headers: { host: sandboxHost(service), 'x-forwarded-for': from, ...headers },
    });
  }

  const windowRows = async () =>
    Number(
      (
        await service.ctx.db
          .selectFrom('rate_limit_windows')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('does not lock the owner out after 22 wrong keys for its client id from another address', async () => {
    const creds = await createKey(service, await createMerchant(service));
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++)
      statuses.push(
        (await exchange('198.51.100.7', { 'x-client-id': creds.clientId, 'x-api-key': 'mwk_wrong' })).status,
      );
    assert.deepEqual(statuses, [...Array(20).fill(401), 429, 429], 'the guessing address is limited');
    const owner = await exchange('198.51.100.8', { 'x-client-id': creds.clientId, 'x-api-key': creds.apiKey });
    assert.equal(owner.status, 200, owner.text);
    const limited = await exchange('198.51.100.7', { 'x-client-id': creds.clientId, 'x-api-key': creds.apiKey });
    expectError(limited, 429, 'rate_limited', 'the limited address itself');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
  });

  it('limits attempts without x-client-id', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) statuses.push((await exchange('198.51.100.9', { 'x-api-key': 'mwk_wrong' })).status);
    assert.deepEqual(statuses, [...Array(20).fill(401), 429]);
  });

  it('limits random client ids by address without a row per client id', async () => {
    const rowsBefore = await windowRows();
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++)
      statuses.push(
        (await exchange('198.51.100.10', { 'x-client-id': `cli_${randomUUID()}`, 'x-api-key': 'mwk_wrong' })).status,
      );
    assert.deepEqual(statuses, [...Array(20).fill(401), ...Array(10).fill(429)]);
    assert.ok((await windowRows()) - rowsBefore <= 2, 'one counter per address and minute');
    // An over-long client id is a failure like any other, not a 500.
    const long = await exchange('198.51.100.11', { 'x-client-id': 'c'.repeat(3000), 'x-api-key': 'mwk_wrong' });
    expectError(long, 401, 'invalid_credentials', 'long client id');
  });

  it('counts IPv6 sources by /64', async () => {
    for (let i = 0; i < 20; i++)
      assert.equal((await exchange(`2001:db8:9:9::${i + 1}`, { 'x-api-key': 'x' })).status, 401);
    assert.equal((await exchange('2001:db8:9:9:ffff::1', { 'x-api-key': 'x' })).status, 429, 'same /64');
    assert.equal((await exchange('2001:db8:9:a::1', { 'x-api-key': 'x' })).status, 401, 'another /64');
  });

  it('names a source address by IPv4 address or IPv6 /64', () => {
    for (const [address, subject] of [
      ['198.51.100.7', '198.51.100.7'],
      ['::ffff:198.51.100.7', '198.51.100.7'],
      ['2001:db8:9:9::1', '2001:db8:9:9::/64'],
      ['2001:0db8:0009:0009:ffff:0:0:1', '2001:db8:9:9::/64'],
      ['::1', '0:0:0:0::/64'],
      ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ] as const)
      assert.equal(sourceSubject(address), subject, address);
    assert.deepEqual(ipv6Hextets('64:ff9b::192.0.2.1'), [0x64, 0xff9b, 0, 0, 0, 0, 0xc000, 0x201]);
    assert.equal(ipv6Hextets('not-an-ip'), null);
  });

  it('still limits a key to 20 exchanges a minute, from any address', async () => {
    const creds = await createKey(service, await createMerchant(service));
    for (let i = 0; i < 20; i++) {
      assert.equal(
        (await exchange(`203.0.113.${i + 1}`, { 'x-client-id': creds.clientId, 'x-api-key': creds.apiKey })).status,
        200,
        `exchange ${i + 1}`,
      );
    }
    expectError(
      await exchange('203.0.113.99', { 'x-client-id': creds.clientId, 'x-api-key': creds.apiKey }),
      429,
      'rate_limited',
      'key budget',
    );
  });
});

describe('operator key changes (9, 11)', () => {
  let service: RunningService;
  before(() => {
    service = keysService;
  });

  async function tokenFor(creds: Credentials): Promise<string> {
    const res = await rawRequest(`${service.publicUrl}/v1/connect/token`, {
      method: 'POST',
      headers: { host: sandboxHost(service), 'x-client-id': creds.clientId, 'x-api-key': creds.apiKey },
    });
    assert.equal(res.status, 200, res.text);
    return res.body.auth_token;
  }
  const read = (token: string) =>
    rawRequest(`${service.publicUrl}/v1/members/nobody`, {
      headers: { host: sandboxHost(service), authorization: `Bearer ${token}` },
    });

  it('keeps tokens issued before a disable dead after the key is enabled again', async () => {
    const creds = await createKey(service, await createMerchant(service));
    const before = await tokenFor(creds);
    assert.equal((await read(before)).status, 404, 'the token works');
    assert.equal((await admin(service, 'PATCH', `/admin/v1/api-keys/${creds.keyId}`, { disabled: true })).status, 200);
    expectError(await read(before), 401, 'invalid_token', 'while disabled');
    const enabled = await admin(service, 'PATCH', `/admin/v1/api-keys/${creds.keyId}`, { disabled: false });
    assert.equal(enabled.status, 200);
    assert.equal(enabled.body.disabled, false);
    expectError(await read(before), 401, 'invalid_token', 'after re-enabling');
    const after = await tokenFor(creds);
    assert.equal((await read(after)).status, 404, 'a new token works');
  });

  it('keeps tokens dead after an expired key is given a new expiry', async () => {
    const creds = await createKey(service, await createMerchant(service), {
      expires_at: new Date(Date.now() + 1500).toISOString(),
    });
    const token = await tokenFor(creds);
    assert.equal((await read(token)).status, 404);
    for (let i = 0; i < 50 && (await read(token)).status !== 401; i++) await sleep(100);
    expectError(await read(token), 401, 'invalid_token', 'expired');
    const rotated = await admin(service, 'POST', `/admin/v1/api-keys/${creds.keyId}/rotate`, { overlap_seconds: 60 });
    assert.equal(rotated.status, 400, 'an expired key has no successor born dead');
    assert.equal(rotated.body.code, 'state_invalid');
    assert.equal(
      (await admin(service, 'PATCH', `/admin/v1/api-keys/${creds.keyId}`, { expires_at: null })).status,
      200,
    );
    expectError(await read(token), 401, 'invalid_token', 'after the expiry is lifted');
    assert.equal((await read(await tokenFor(creds))).status, 404);
  });

  it('leaves tokens alone on changes that do not stop the key', async () => {
    const creds = await createKey(service, await createMerchant(service));
    const token = await tokenFor(creds);
    assert.equal(
      (await admin(service, 'PATCH', `/admin/v1/api-keys/${creds.keyId}`, { scopes: ['members:write'] })).status,
      200,
    );
    assert.equal(
      (
        await admin(service, 'PATCH', `/admin/v1/api-keys/${creds.keyId}`, {
          expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        })
      ).status,
      200,
    );
    assert.equal((await read(token)).status, 404);
  });

  it('decides which key changes end the tokens (pure)', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const later = new Date('2030-01-02T00:00:00Z');
    const earlier = new Date('2029-12-31T00:00:00Z');
    const working = { disabled: false, expires_at: null };
    assert.equal(stopsTokens(working, { disabled: true }, now), true, 'disable');
    assert.equal(stopsTokens(working, { expiresAt: later }, now), false, 'a later expiry');
    assert.equal(stopsTokens(working, {}, now), false, 'scopes or allow-list only');
    assert.equal(stopsTokens({ disabled: true, expires_at: null }, { disabled: false }, now), true, 're-enable');
    assert.equal(
      stopsTokens({ disabled: false, expires_at: earlier }, { expiresAt: null }, now),
      true,
      'lifting a passed expiry',
    );
    assert.equal(stopsTokens({ disabled: false, expires_at: later.toISOString() }, { disabled: false }, now), false);
  });

  /** `res` is the 400 invalid_fields that names expires_at as in the past. */
  function assertExpiryInThePast(res: { status: number; body: any }) {
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.code, 'invalid_fields');
    assert.deepEqual(res.body.fields, [{ key: 'expires_at', reason: 'in_the_past' }]);
  }

  it('refuses an expires_at that has already passed, on create and on PATCH', async () => {
    const merchantId = await createMerchant(service);
    const past = new Date(Date.now() - 60_000).toISOString();
    const created = await admin(service, 'POST', `/admin/v1/merchants/${merchantId}/api-keys`, {
      environment: 'sandbox',
      scopes: [],
      expires_at: past,
    });
    assertExpiryInThePast(created);
    const keys = await service.ctx.db
      .selectFrom('api_keys')
      .select('id')
      .where('merchant_id', '=', merchantId)
      .execute();
    assert.deepEqual(keys, [], 'no key was created');

    const creds = await createKey(service, merchantId);
    const patched = await admin(service, 'PATCH', `/admin/v1/api-keys/${creds.keyId}`, {
      expires_at: past,
      disabled: true,
    });
    assertExpiryInThePast(patched);
    const row = await service.ctx.db
      .selectFrom('api_keys')
      .select(['disabled', 'expires_at'])
      .where('id', '=', creds.keyId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { disabled: false, expires_at: null }, 'nothing of the refused patch was applied');
    assert.equal(
      (await admin(service, 'PATCH', `/admin/v1/api-keys/${creds.keyId}`, { expires_at: null })).status,
      200,
      'null (never) is fine',
    );
  });
});
