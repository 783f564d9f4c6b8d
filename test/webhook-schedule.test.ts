import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { verifyWebhookSignature } from '@merchant-wallet/sdk';
import {
  attemptOffsets,
  attemptsPerRound,
  defaultWebhookRetryScheduleMs,
  describeDelays,
  parseRetrySchedule,
  retryDelayAfter,
} from '../src/modules/webhooks/schedule.js';
import { addressAllowed, checkUrlShape, classifyAddress, resolveTarget } from '../src/modules/webhooks/ssrf.js';
import { envelope, newSecret, sign, signatureHeader, signingSecrets } from '../src/modules/webhooks/signature.js';

describe('retry schedule', () => {
  it('defaults to 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: 8 attempts, then dead', () => {
    assert.equal(describeDelays(defaultWebhookRetryScheduleMs), '5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h');
    assert.equal(attemptsPerRound(defaultWebhookRetryScheduleMs), 8);
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayAfter(n, defaultWebhookRetryScheduleMs)),
      defaultWebhookRetryScheduleMs,
    );
    assert.equal(retryDelayAfter(8, defaultWebhookRetryScheduleMs), undefined);
    // The last attempt starts 27 h 35 min 5 s after the first.
    assert.equal(attemptOffsets(defaultWebhookRetryScheduleMs).at(-1), ((27 * 60 + 35) * 60 + 5) * 1000);
    assert.throws(() => retryDelayAfter(0, defaultWebhookRetryScheduleMs), RangeError);
  });

  it('is overridable by configuration and refuses nonsense', () => {
    assert.deepEqual(parseRetrySchedule('50,50,50'), [50, 50, 50]);
    assert.deepEqual(parseRetrySchedule(' 10 , 20 '), [10, 20]);
    assert.deepEqual(parseRetrySchedule(undefined), defaultWebhookRetryScheduleMs);
    assert.deepEqual(parseRetrySchedule(''), defaultWebhookRetryScheduleMs);
    for (const bad of ['0', '-5', 'abc', '1,,2', '1.5', Array(21).fill('1').join(','), String(8 * 24 * 3_600_000)]) {
      assert.throws(() => parseRetrySchedule(bad), /WEBHOOK_RETRY_SCHEDULE_MS|whole number/, bad);
    }
  });
});

describe('address checks', () => {
  it('classifies addresses', () => {
    const table: Record<string, string> = {
      '8.8.8.8': 'public',
      '2606:4700::1111': 'public',
      '93.184.216.34': 'public',
      '127.0.0.1': 'loopback',
      '127.255.0.9': 'loopback',
      '::1': 'loopback',
      '::ffff:127.0.0.1': 'loopback',
      '::ffff:7f00:1': 'loopback',
      '10.0.0.1': 'private',
      '172.16.0.1': 'private',
      '172.31.255.255': 'private',
      '192.168.1.1': 'private',
      '100.64.0.1': 'private',
      'fc00::1': 'private',
      'fd12:3456::1': 'private',
      '::ffff:10.1.2.3': 'private',
      '169.254.169.254': 'metadata',
      'fd00:ec2::254': 'metadata',
      '::ffff:169.254.169.254': 'metadata',
      '169.254.1.1': 'link_local',
      'fe80::1': 'link_local',
      '0.0.0.0': 'unspecified',
      '::': 'unspecified',
      '224.0.0.1': 'multicast',
      'ff02::1': 'multicast',
      '255.255.255.255': 'reserved',
      '64:ff9b::a00:1': 'reserved',
      '2002:a00:1::': 'reserved',
      '172.32.0.1': 'public',
      '100.128.0.1': 'public',
    };
    for (const [ip, cls] of Object.entries(table)) assert.equal(classifyAddress(ip), cls, ip);
    assert.ok(addressAllowed('public', false));
    assert.ok(!addressAllowed('loopback', false));
    assert.ok(addressAllowed('loopback', true) && addressAllowed('private', true));
    for (const cls of ['metadata', 'link_local', 'unspecified', 'multicast', 'reserved'] as const)
      assert.ok(!addressAllowed(cls, true), cls);
  });

  it('checks the URL shape: https in production, no credentials', () => {
    assert.deepEqual(checkUrlShape('http://example.com/x', false), { ok: false, reason: 'https_required' });
    assert.equal(checkUrlShape('http://example.com/x', true).ok, true);
    assert.deepEqual(checkUrlShape('ftp://example.com/', true), { ok: false, reason: 'https_required' });
    assert.deepEqual(checkUrlShape('https://user:pw@example.com/', false), {
      ok: false,
      reason: 'credentials_not_allowed',
    });
    assert.deepEqual(checkUrlShape('not a url', false), { ok: false, reason: 'invalid_url' });
    assert.deepEqual(checkUrlShape(`https://example.com/${'x'.repeat(2100)}`, false), {
      ok: false,
      reason: 'too_long',
    });
  });

  it('refuses a host when any of its addresses is internal, and picks the checked address', async () => {
    const fake = (addrs: string[]) => async () =>
      addrs.map((address) => ({ address, family: (address.includes(':') ? 6 : 4) as 4 | 6 }));
    const ok = await resolveTarget('https://hooks.example/x', false, fake(['93.184.216.34', '2606:4700::1111']));
    assert.ok(ok.ok && ok.address.address === '93.184.216.34');
    assert.deepEqual(await resolveTarget('https://rebind.example/', false, fake(['93.184.216.34', '10.0.0.5'])), {
      ok: false,
      reason: 'private_address',
    });
    assert.deepEqual(await resolveTarget('https://meta.example/', true, fake(['169.254.169.254'])), {
      ok: false,
      reason: 'metadata_address',
    });
    assert.deepEqual(await resolveTarget('https://none.example/', false, fake([])), {
      ok: false,
      reason: 'unresolvable',
    });
    assert.deepEqual(
      await resolveTarget('https://fail.example/', false, async () => {
        throw new Error('ENOTFOUND');
      }),
      { ok: false, reason: 'unresolvable' },
    );
    assert.deepEqual(await resolveTarget('https://[::1]:8443/', false), { ok: false, reason: 'loopback_address' });
    assert.deepEqual(
      await resolveTarget('https://2130706433/', false),
      { ok: false, reason: 'loopback_address' },
      'numeric host forms are normalised first',
    );
    const local = await resolveTarget('http://127.0.0.1:9/', true);
    assert.ok(local.ok && local.address.address === '127.0.0.1');
  });
});

describe('signatures', () => {
  const secret = newSecret();
  const body = envelope({
    id: 'evt_1',
    type: 'withdrawal.settled',
    created_at: new Date('2026-01-01T00:00:00Z'),
    merchant_id: 'mch_1',
    livemode: false,
    object: 'withdrawal',
    object_id: 'wdr_1',
    external_member_id: 'ext-1',
    status: 'settled',
    status_version: 2,
  });

  it('makes the secret from 32 random bytes', () => {
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32);
    assert.notEqual(newSecret(), secret);
  });

  it('is byte-compatible with the standardwebhooks package and the SDK', () => {
    const ts = Math.floor(Date.now() / 1000);
    const ours = sign(secret, 'evt_1', ts, body);
    assert.equal(ours, new Webhook(secret).sign('evt_1', new Date(ts * 1000), body));
    const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(ts), 'webhook-signature': ours };
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.ok(verifyWebhookSignature({ secret, headers, body }));
  });

  it('signs with both secrets during a roll; either verifies', () => {
    const old = newSecret();
    const now = new Date();
    const secrets = signingSecrets(
      { secret, previous_secret: old, previous_secret_expires_at: new Date(now.getTime() + 1000) },
      now,
    );
    assert.deepEqual(secrets, [secret, old]);
    assert.deepEqual(
      signingSecrets({ secret, previous_secret: old, previous_secret_expires_at: now }, now),
      [secret],
      'the overlap has a hard edge',
    );
    const ts = Math.floor(now.getTime() / 1000);
    const header = signatureHeader(secrets, 'evt_1', ts, body);
    assert.equal(header.split(' ').length, 2);
    const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(ts), 'webhook-signature': header };
    for (const s of [secret, old]) {
      assert.ok(verifyWebhookSignature({ secret: s, headers, body }));
      assert.doesNotThrow(() => new Webhook(s).verify(body, headers));
    }
    assert.ok(!verifyWebhookSignature({ secret: newSecret(), headers, body }));
  });

  it('builds the reference envelope: ids and status only', () => {
    assert.deepEqual(JSON.parse(body), {
      event_id: 'evt_1',
      event_type: 'withdrawal.settled',
      created_at: '2026-01-01T00:00:00.000Z',
      merchant_id: 'mch_1',
      livemode: false,
      data: { object: 'withdrawal', id: 'wdr_1', external_member_id: 'ext-1', status: 'settled', status_version: 2 },
    });
  });
});
