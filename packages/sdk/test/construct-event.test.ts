import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
// The service's own signing code: what constructEvent accepts is what the server sends.
import { envelope, newSecret, signatureHeader } from '../../../src/modules/webhooks/signature.js';
import {
  constructEvent,
  MerchantWalletClient,
  MerchantWalletError,
  MerchantWalletSignatureVerificationError,
  webhooks,
  type WebhookEvent,
} from '../src/index.js';

const NOW = 1_700_000_000;
const SECRET = newSecret();
const PREVIOUS = newSecret();
const body = envelope({
  id: 'evt_01',
  type: 'qrpay.order.completed',
  created_at: new Date(NOW * 1000),
  merchant_id: 'mch_1',
  livemode: false,
  object: 'qrpay_order',
  object_id: 'qrp_1',
  external_member_id: 'user-42',
  status: 'completed',
  status_version: 2,
});

function headersFor(payload: string | Buffer, ts = NOW, secrets = [SECRET], id = 'evt_01'): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(ts),
    'webhook-signature': signatureHeader(secrets, id, ts, payload),
  };
}

function refused(code: string) {
  return (e: unknown) => {
    assert.ok(e instanceof MerchantWalletSignatureVerificationError, String(e));
    assert.ok(e instanceof MerchantWalletError);
    assert.equal(e.code, code);
    assert.equal(e.type, 'signature_verification_error');
    return true;
  };
}

test(
  'constructEvent: a request signed as the service signs returns the typed event (string, Buffer, Headers, ' +
    'a rolled secret)',
  () => {
    const event: WebhookEvent = constructEvent(body, headersFor(body), SECRET, { now: NOW });
    assert.equal(event.event_id, 'evt_01');
    assert.equal(event.event_type, 'qrpay.order.completed');
    assert.deepEqual(event.data, {
      object: 'qrpay_order',
      id: 'qrp_1',
      external_member_id: 'user-42',
      status: 'completed',
      status_version: 2,
    });
    assert.deepEqual(
      constructEvent(Buffer.from(body), new Headers(headersFor(body)), SECRET, { now: NOW + 299 }),
      event,
    );
    // During a secret roll the header carries both signatures: either secret verifies.
    const rolled = headersFor(body, NOW, [SECRET, PREVIOUS]);
    assert.deepEqual(constructEvent(body, rolled, PREVIOUS, { now: NOW }), event);
    assert.deepEqual(webhooks.constructEvent(body, rolled, SECRET, { now: NOW }), event);
    // The client carries it too (no request is made).
    const client = new MerchantWalletClient({
      baseUrl: 'http://127.0.0.1:9',
      clientId: 'c',
      apiKey: 'k',
      signingKey: 's',
    });
    assert.deepEqual(client.webhooks.constructEvent(body, headersFor(body), SECRET, { now: NOW }), event);
  },
);

test(
  'constructEvent: a tampered body, a wrong secret or a tampered signature throws ' + 'webhook_signature_mismatch',
  () => {
    const h = headersFor(body);
    assert.throws(
      () => constructEvent(body.replace('"completed"', '"failed"'), h, SECRET, { now: NOW }),
      refused('webhook_signature_mismatch'),
    );
    assert.throws(() => constructEvent(body + ' ', h, SECRET, { now: NOW }), refused('webhook_signature_mismatch'));
    assert.throws(
      () => constructEvent(body, h, `whsec_${randomBytes(32).toString('base64')}`, { now: NOW }),
      refused('webhook_signature_mismatch'),
    );
    assert.throws(
      () => constructEvent(body, { ...h, 'webhook-id': 'evt_02' }, SECRET, { now: NOW }),
      refused('webhook_signature_mismatch'),
    );
    const sig = h['webhook-signature']!;
    const flipped = sig.slice(0, -3) + (sig.at(-3) === 'A' ? 'B' : 'A') + sig.slice(-2);
    assert.throws(
      () => constructEvent(body, { ...h, 'webhook-signature': flipped }, SECRET, { now: NOW }),
      refused('webhook_signature_mismatch'),
    );
    assert.throws(
      () => constructEvent(body, { ...h, 'webhook-signature': sig.replace('v1,', 'v2,') }, SECRET, { now: NOW }),
      refused('webhook_signature_mismatch'),
    );
  },
);

test(
  'constructEvent: a stale or future timestamp throws webhook_timestamp_out_of_range, ' + 'even when correctly signed',
  () => {
    assert.throws(
      () => constructEvent(body, headersFor(body, NOW - 301), SECRET, { now: NOW }),
      refused('webhook_timestamp_out_of_range'),
    );
    assert.throws(
      () => constructEvent(body, headersFor(body, NOW + 301), SECRET, { now: NOW }),
      refused('webhook_timestamp_out_of_range'),
    );
    // A replay an hour later with the clock of this machine.
    assert.throws(
      () => constructEvent(body, headersFor(body, Math.floor(Date.now() / 1000) - 3600), SECRET),
      refused('webhook_timestamp_out_of_range'),
    );
    assert.ok(constructEvent(body, headersFor(body, NOW - 3600), SECRET, { now: NOW, toleranceSeconds: 3600 }));
    assert.ok(constructEvent(body, headersFor(body, Math.floor(Date.now() / 1000)), SECRET));
  },
);

test('constructEvent: missing headers, a malformed timestamp or secret, a body that is no event, parsed JSON', () => {
  const h = headersFor(body);
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const { [name]: _dropped, ...rest } = h;
    assert.throws(() => constructEvent(body, rest, SECRET, { now: NOW }), refused('webhook_headers_missing'));
  }
  assert.throws(
    () => constructEvent(body, { ...h, 'webhook-timestamp': '1.7e9' }, SECRET, { now: NOW }),
    refused('webhook_timestamp_invalid'),
  );
  assert.throws(() => constructEvent(body, h, 'whsec_', { now: NOW }), refused('webhook_secret_invalid'));
  const notJson = 'not json';
  assert.throws(
    () => constructEvent(notJson, headersFor(notJson), SECRET, { now: NOW }),
    refused('webhook_body_invalid'),
  );
  const notEvent = '{"hello":1}';
  assert.throws(
    () => constructEvent(notEvent, headersFor(notEvent), SECRET, { now: NOW }),
    refused('webhook_body_invalid'),
  );
  assert.throws(() => constructEvent(JSON.parse(body) as never, h, SECRET, { now: NOW }), TypeError);
});
