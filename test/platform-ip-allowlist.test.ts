import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningService } from '../src/server.js';
import { compileEntry, isAllowed } from '../src/platform/http/ip-allowlist.js';
import { rawRequest } from './support/raw-http.js';
import { baseUrlFor, clientFor, createKey, createMerchant, useTestService, type Env } from './support/service.js';

describe('IP allow-list notation', () => {
  const cases: Array<[string, string, boolean]> = [
    ['203.0.113.7', '203.0.113.7', true],
    ['203.0.113.7', '203.0.113.8', false],
    ['203.0.113.*', '203.0.113.250', true],
    ['203.0.113.*', '203.0.114.1', false],
    ['10.0.0.0/8', '10.200.3.4', true],
    ['10.0.0.0/8', '11.0.0.1', false],
    ['172.16.0.0/16', '172.16.99.1', true],
    ['172.16.0.0/16', '172.17.0.1', false],
    ['192.168.1.0/24', '192.168.1.77', true],
    ['192.168.1.0/24', '192.168.2.77', false],
    ['192.168.1.0/28', '192.168.1.1', false],
    ['192.168.1.1/32', '192.168.1.1', false],
    ['192.168.*.*', '192.168.1.1', false],
    ['192.168.1.0/12', '192.168.1.1', false],
    ['2001:db8::1', '2001:db8::1', true],
    ['2001:db8::1', '2001:0db8:0000:0000:0000:0000:0000:0001', true],
    ['2001:db8::1', '2001:db8::2', false],
    ['2001:db8::/64', '2001:db8::1', false],
    ['not an ip', '1.2.3.4', false],
    ['127.0.0.1', '::ffff:127.0.0.1', true],
  ];
  for (const [entry, ip, expected] of cases) {
    it(`${entry} ${expected ? 'admits' : 'refuses'} ${ip}`, () => {
      assert.equal(compileEntry(entry)(ip.startsWith('::ffff:') ? ip.slice(7) : ip), expected);
      assert.equal(isAllowed(entry, ip), expected);
    });
  }
  it('reads one entry per line and ignores blank lines', () => {
    assert.equal(isAllowed('1.1.1.1\n\n  10.0.0.0/8 \r\n', '10.1.1.1'), true);
    assert.equal(isAllowed('', '10.1.1.1'), false);
  });
});

/** A key of the merchant holding members:write alone, with the allow-list `ipAllowlist`. */
const membersKey = (service: RunningService, merchantId: string, environment: Env, ipAllowlist: string) =>
  createKey(service, merchantId, { environment, scopes: ['members:write'], ip_allowlist: ipAllowlist });

describe('IP allow-list over HTTP', () => {
  let service: RunningService;
  let proxied: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));
  useTestService({ config: { trustedProxies: ['127.0.0.1'] }, merchant: false }, (s) => ({ service: proxied } = s));

  it('admits production calls from a listed address and refuses others without echoing the list', async () => {
    const merchantId = await createMerchant(service);
    const listed = await membersKey(service, merchantId, 'production', '127.0.0.*');
    const ok = await clientFor(service, listed).requestRaw({ method: 'GET', path: '/v1/members/x' });
    assert.equal(ok.body.code, 'member_not_found');
    const unlisted = await membersKey(service, merchantId, 'production', '198.51.100.0/24\n127.0.0.0/28');
    const refused = await clientFor(service, unlisted).requestRaw({
      method: 'POST',
      path: '/v1/connect/token',
      auth: false,
      sign: false,
      headers: { 'x-client-id': unlisted.clientId, 'x-api-key': unlisted.apiKey },
    });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'ip_not_allowed');
    assert.doesNotMatch(refused.rawBody, /198\.51|127\.0/);
  });

  it('refuses live tokens at once when the list changes', async () => {
    const merchantId = await createMerchant(service);
    const creds = await membersKey(service, merchantId, 'production', '127.0.0.1');
    const client = clientFor(service, creds);
    await client.getToken();
    const { admin } = await import('./support/service.js');
    await admin(service, 'PATCH', `/admin/v1/api-keys/${creds.keyId}`, { ip_allowlist: '198.51.100.7' });
    const res = await client.requestRaw({ method: 'GET', path: '/v1/members/x' });
    assert.equal(res.body.code, 'ip_not_allowed');
  });

  it('does not apply the list to sandbox keys', async () => {
    const merchantId = await createMerchant(service);
    const creds = await membersKey(service, merchantId, 'sandbox', '198.51.100.7');
    const res = await clientFor(service, creds).requestRaw({ method: 'GET', path: '/v1/members/x' });
    assert.equal(res.body.code, 'member_not_found');
  });

  it('believes X-Forwarded-For only from a configured trusted proxy', async () => {
    for (const [svc, expectCode] of [
      [service, 'member_not_found'],
      [proxied, 'ip_not_allowed'],
    ] as const) {
      const merchantId = await createMerchant(svc);
      const creds = await membersKey(svc, merchantId, 'production', '127.0.0.1');
      const token = await clientFor(svc, creds).getToken();
      const res = await rawRequest(`${svc.publicUrl}/v1/members/x`, {
        headers: {
          host: new URL(baseUrlFor(svc, 'production')).host,
          authorization: `Bearer ${token}`,
          'x-forwarded-for': '198.51.100.9',
        },
      });
      assert.equal(res.body.code, expectCode);
    }
  });
});
