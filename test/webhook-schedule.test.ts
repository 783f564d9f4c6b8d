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
import {
  decideClaim,
  decideOutcome,
  failingTooLong,
  normaliseEventTypes,
  planFanOut,
  redeliverAction,
  subscribes,
} from '../src/modules/webhooks/state.js';
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

describe('delivery state machine', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const at = (ms: number) => new Date(now.getTime() + ms);
  const rec = (
    over: Partial<{ status: string; generation: number; next_attempt_at: Date | null; lease_until: Date | null }> = {},
  ) => ({
    status: 'pending',
    generation: 0,
    next_attempt_at: now,
    lease_until: null,
    ...over,
  });

  it('claims only a due, unleased pending or failed record of the job generation, to an enabled endpoint', () => {
    assert.deepEqual(decideClaim(rec(), 'enabled', 0, now), { kind: 'attempt' });
    assert.deepEqual(decideClaim(rec({ status: 'failed' }), 'enabled', 0, now), { kind: 'attempt' });
    assert.deepEqual(decideClaim(undefined, 'enabled', 0, now), { kind: 'stale' });
    for (const status of ['sent', 'dead', 'no_subscriber', 'something_new'])
      assert.deepEqual(decideClaim(rec({ status }), 'enabled', 0, now), { kind: 'stale' }, status);
    assert.deepEqual(
      decideClaim(rec({ generation: 2 }), 'enabled', 1, now),
      { kind: 'stale' },
      'redelivered since: the old job does nothing',
    );
    assert.deepEqual(decideClaim(rec({ next_attempt_at: at(500) }), 'enabled', 0, now), { kind: 'wait', ms: 500 });
    assert.deepEqual(decideClaim(rec({ lease_until: at(1000) }), 'enabled', 0, now), { kind: 'wait', ms: 1010 });
    assert.deepEqual(
      decideClaim(rec({ lease_until: at(-1) }), 'enabled', 0, now),
      { kind: 'attempt' },
      'an expired lease (crashed attempt) is taken over',
    );
    assert.equal(decideClaim(rec(), 'disabled', 0, now).kind, 'endpoint_unavailable');
    assert.equal(decideClaim(rec(), 'deleted', 0, now).kind, 'endpoint_unavailable');
    assert.equal(decideClaim(rec(), undefined, 0, now).kind, 'endpoint_unavailable');
  });

  it('maps an attempt to sent, failed with the next delay, or dead', () => {
    const s = [50, 60];
    assert.deepEqual(decideOutcome({ kind: 'response', httpStatus: 204 }, 1, s, 0), {
      status: 'sent',
      attemptOutcome: 'sent',
      lastHttpStatus: 204,
      error: '',
      endpointGone: false,
    });
    assert.deepEqual(decideOutcome({ kind: 'response', httpStatus: 500 }, 1, s, 0), {
      status: 'failed',
      attemptOutcome: 'failed',
      retryInMs: 50,
      lastHttpStatus: 500,
      error: 'HTTP 500',
      endpointGone: false,
    });
    assert.equal(
      decideOutcome({ kind: 'response', httpStatus: 301 }, 2, s, 0).retryInMs,
      60,
      'redirects are not followed: a failure',
    );
    assert.deepEqual(decideOutcome({ kind: 'network', error: 'ECONNREFUSED' }, 3, s, 503), {
      status: 'dead',
      attemptOutcome: 'failed',
      lastHttpStatus: 503,
      error: 'ECONNREFUSED',
      endpointGone: false,
    });
    assert.equal(decideOutcome({ kind: 'refused', reason: 'private_address' }, 1, s, 0).attemptOutcome, 'refused');
    const gone = decideOutcome({ kind: 'response', httpStatus: 410 }, 1, s, 0);
    assert.equal(gone.status, 'dead');
    assert.equal(gone.endpointGone, true);
  });

  it('disables after the failing window, redelivers only dead, failed and no_subscriber', () => {
    assert.equal(failingTooLong(null, now, 1000), false);
    assert.equal(failingTooLong(at(-999), now, 1000), false);
    assert.equal(failingTooLong(at(-1000), now, 1000), true);
    assert.equal(redeliverAction('dead'), 'requeue');
    assert.equal(redeliverAction('failed'), 'requeue');
    assert.equal(redeliverAction('no_subscriber'), 'bind');
    for (const s of ['sent', 'pending', 'queued', '']) assert.equal(redeliverAction(s), 'refuse', s);
  });

  it('fans out to matching endpoints of the same merchant and environment, or one no_subscriber record', () => {
    const events = [
      { id: 'e1', merchant_id: 'm1', environment: 'sandbox', type: 'withdrawal.settled', created_at: now },
      { id: 'e2', merchant_id: 'm1', environment: 'production', type: 'withdrawal.settled', created_at: now },
      { id: 'e3', merchant_id: 'm2', environment: 'sandbox', type: 'deposit.credited', created_at: now },
    ];
    const endpoints = [
      { id: 'a', merchant_id: 'm1', environment: 'sandbox', status: 'enabled', event_types: ['*'] },
      { id: 'b', merchant_id: 'm1', environment: 'sandbox', status: 'enabled', event_types: ['withdrawal.settled'] },
      { id: 'c', merchant_id: 'm1', environment: 'sandbox', status: 'enabled', event_types: ['deposit.credited'] },
      { id: 'd', merchant_id: 'm2', environment: 'sandbox', status: 'enabled', event_types: ['withdrawal.settled'] },
      { id: 'x', merchant_id: 'm1', environment: 'sandbox', status: 'disabled', event_types: ['*'] },
    ];
    assert.deepEqual(
      planFanOut(events, endpoints).map((p) => `${p.eventId}:${p.endpointId}`),
      ['e1:a', 'e1:b', 'e2:null', 'e3:null'],
    );
    assert.ok(subscribes(['*'], 'qrpay.order.completed'));
    assert.deepEqual(normaliseEventTypes(['withdrawal.settled', 'withdrawal.settled', 'qrpay.order.completed']), {
      ok: true,
      types: ['withdrawal.settled', 'qrpay.order.completed'],
    });
    assert.deepEqual(normaliseEventTypes(['withdrawal.settled', '*']), { ok: true, types: ['*'] });
    assert.deepEqual(normaliseEventTypes([]), { ok: false, reason: 'empty' });
    for (const bad of ['withdrawal', 'Withdrawal.settled', 'withdrawal.', '.x', 'a.b-c', 'a..b']) {
      assert.deepEqual(normaliseEventTypes([bad]), { ok: false, reason: 'invalid_event_type', entry: bad }, bad);
    }
    for (const unknown of ['card.topup.credit', 'withdrawal.setled', 'thing.happened']) {
      assert.deepEqual(
        normaliseEventTypes(['deposit.credited', unknown]),
        { ok: false, reason: 'unknown_event_type', entry: unknown },
        unknown,
      );
    }
  });

  it(
    'judges each event by the endpoints as they were at its time: created, enabled, disabled, resubscribed or ' +
      'deleted after it',
    () => {
      const ev = (id: string, ms: number) => ({
        id,
        merchant_id: 'm1',
        environment: 'sandbox',
        type: 'deposit.credited',
        created_at: at(ms),
      });
      const endpoint = (id: string, status: string, event_types: string[]) => ({
        id,
        merchant_id: 'm1',
        environment: 'sandbox',
        status,
        event_types,
      });
      const change = (
        endpoint_id: string,
        ms: number,
        prev_status: string | null,
        prev_event_types: string[] | null,
      ) => ({ endpoint_id, valid_from: at(ms), prev_status, prev_event_types });
      const current = [
        endpoint('new', 'enabled', ['*']), // created at 100
        endpoint('woke', 'enabled', ['*']), // disabled until 200
        endpoint('slept', 'disabled', ['*']), // enabled until 300
        endpoint('widened', 'enabled', ['*']), // only withdrawals until 400
        endpoint('gone', 'deleted', []), // deleted at 500
        endpoint('old', 'enabled', ['deposit.credited']), // no change since the batch's oldest event
      ];
      const changes = [
        change('new', 100, null, null),
        change('woke', 200, 'disabled', ['*']),
        change('slept', 300, 'enabled', ['*']),
        change('widened', 400, 'enabled', ['withdrawal.settled']),
        change('gone', 500, 'enabled', ['deposit.credited']),
      ];
      const endpoints = current.map((e) => ({ ...e, changes: changes.filter((c) => c.endpoint_id === e.id) }));
      const plan = (ms: number) =>
        planFanOut([ev(`at${ms}`, ms)], endpoints)
          .map((p) => p.endpointId ?? 'no_subscriber')
          .join(' ');
      assert.equal(plan(50), 'slept gone old');
      assert.equal(plan(100), 'new slept gone old', "a change at the event's own time counts as before it");
      assert.equal(plan(150), 'new slept gone old');
      assert.equal(plan(250), 'new woke slept gone old');
      assert.equal(plan(350), 'new woke gone old');
      assert.equal(plan(450), 'new woke widened gone old');
      assert.equal(plan(600), 'new woke widened old');
      assert.equal(
        planFanOut([{ ...ev('w', 50), type: 'withdrawal.settled' }], endpoints)
          .map((p) => p.endpointId ?? 'no_subscriber')
          .join(' '),
        'slept widened',
      );
      assert.equal(
        planFanOut(
          [ev('none', 600)],
          endpoints.filter((e) => e.id === 'gone'),
        )
          .map((p) => p.endpointId ?? 'no_subscriber')
          .join(' '),
        'no_subscriber',
      );
    },
  );
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
