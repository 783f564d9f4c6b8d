import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { signWebhook, verifyWebhookSignature } from '../src/index.js';

const keyBytes = randomBytes(24);
const SECRET = `whsec_${keyBytes.toString('base64')}`;
const OTHER_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const NOW = 1_700_000_000;
const body = JSON.stringify({
  event_id: 'evt_1',
  event_type: 'qrpay.order.completed',
  created_at: '2023-11-14T22:13:20Z',
  merchant_id: 'mch_1',
  livemode: false,
  data: { object: 'qrpay_order', id: 'qr_1', external_member_id: 'u1', status: 'completed', status_version: 2 },
});

/** Independent implementation of the Standard Webhooks signature. */
function sign(secretBytes: Buffer, id: string, ts: number, payload: string): string {
  return `v1,${createHmac('sha256', secretBytes).update(`${id}.${ts}.${payload}`).digest('base64')}`;
}

function headers(sig: string, ts = NOW, id = 'evt_1') {
  return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': sig };
}

test('valid signature is accepted', () => {
  const sig = sign(keyBytes, 'evt_1', NOW, body);
  assert.equal(signWebhook({ secret: SECRET, id: 'evt_1', timestamp: NOW, body }), sig);
  assert.equal(verifyWebhookSignature({ secret: SECRET, headers: headers(sig), body, now: NOW }), true);
  // now given in milliseconds is accepted too
  assert.equal(verifyWebhookSignature({ secret: SECRET, headers: headers(sig), body, now: NOW * 1000 + 5 }), true);
  // header names in any case, array values, and a Headers-like object
  assert.equal(
    verifyWebhookSignature({
      secret: SECRET,
      headers: { 'Webhook-Id': 'evt_1', 'WEBHOOK-TIMESTAMP': String(NOW), 'webhook-signature': [sig] },
      body,
      now: NOW,
    }),
    true,
  );
  const h = new Headers(headers(sig));
  assert.equal(verifyWebhookSignature({ secret: SECRET, headers: h, body, now: NOW }), true);
});

test('tampered body is rejected', () => {
  const sig = sign(keyBytes, 'evt_1', NOW, body);
  assert.equal(
    verifyWebhookSignature({
      secret: SECRET,
      headers: headers(sig),
      body: body.replace('completed', 'refunded'),
      now: NOW,
    }),
    false,
  );
  assert.equal(verifyWebhookSignature({ secret: SECRET, headers: headers(sig), body: body + ' ', now: NOW }), false);
  // Re-serialised JSON (different whitespace) is not the raw body.
  assert.equal(
    verifyWebhookSignature({
      secret: SECRET,
      headers: headers(sig),
      body: JSON.stringify(JSON.parse(body), null, 2),
      now: NOW,
    }),
    false,
  );
});

test('tampered id or timestamp is rejected', () => {
  const sig = sign(keyBytes, 'evt_1', NOW, body);
  assert.equal(verifyWebhookSignature({ secret: SECRET, headers: headers(sig, NOW, 'evt_2'), body, now: NOW }), false);
  assert.equal(verifyWebhookSignature({ secret: SECRET, headers: headers(sig, NOW + 1), body, now: NOW }), false);
});

test('wrong secret is rejected', () => {
  const sig = sign(keyBytes, 'evt_1', NOW, body);
  assert.equal(verifyWebhookSignature({ secret: OTHER_SECRET, headers: headers(sig), body, now: NOW }), false);
  assert.equal(verifyWebhookSignature({ secret: 'whsec_', headers: headers(sig), body, now: NOW }), false);
  assert.equal(verifyWebhookSignature({ secret: 'whsec_!!notbase64!!', headers: headers(sig), body, now: NOW }), false);
});

test('several space-separated signatures: one valid is enough; none valid is rejected', () => {
  const good = sign(keyBytes, 'evt_1', NOW, body);
  const other = sign(randomBytes(24), 'evt_1', NOW, body);
  assert.equal(verifyWebhookSignature({ secret: SECRET, headers: headers(`${other} ${good}`), body, now: NOW }), true);
  assert.equal(verifyWebhookSignature({ secret: SECRET, headers: headers(`${good} ${other}`), body, now: NOW }), true);
  assert.equal(verifyWebhookSignature({ secret: SECRET, headers: headers(`v1a,xyz ${other}`), body, now: NOW }), false);
  // Only v1 entries count: the right MAC under another version tag is refused.
  assert.equal(
    verifyWebhookSignature({ secret: SECRET, headers: headers(good.replace('v1,', 'v2,')), body, now: NOW }),
    false,
  );
});

test('too old or too far in the future timestamp is rejected (default tolerance 300 s)', () => {
  const old = NOW - 301;
  const sigOld = sign(keyBytes, 'evt_1', old, body);
  assert.equal(verifyWebhookSignature({ secret: SECRET, headers: headers(sigOld, old), body, now: NOW }), false);
  const edge = NOW - 300;
  assert.equal(
    verifyWebhookSignature({
      secret: SECRET,
      headers: headers(sign(keyBytes, 'evt_1', edge, body), edge),
      body,
      now: NOW,
    }),
    true,
  );
  const future = NOW + 301;
  assert.equal(
    verifyWebhookSignature({
      secret: SECRET,
      headers: headers(sign(keyBytes, 'evt_1', future, body), future),
      body,
      now: NOW,
    }),
    false,
  );
  assert.equal(
    verifyWebhookSignature({ secret: SECRET, headers: headers(sigOld, old), body, now: NOW, toleranceSeconds: 600 }),
    true,
  );
  // With the real clock, a signature from 2023 is far too old.
  assert.equal(verifyWebhookSignature({ secret: SECRET, headers: headers(sigOld, old), body }), false);
});

test('missing or malformed headers are rejected without throwing', () => {
  const sig = sign(keyBytes, 'evt_1', NOW, body);
  assert.equal(
    verifyWebhookSignature({
      secret: SECRET,
      headers: { 'webhook-id': 'evt_1', 'webhook-timestamp': String(NOW) },
      body,
      now: NOW,
    }),
    false,
  );
  assert.equal(
    verifyWebhookSignature({
      secret: SECRET,
      headers: { 'webhook-signature': sig, 'webhook-timestamp': String(NOW) },
      body,
      now: NOW,
    }),
    false,
  );
  assert.equal(
    verifyWebhookSignature({ secret: SECRET, headers: headers(sig, 'abc' as unknown as number), body, now: NOW }),
    false,
  );
  assert.equal(verifyWebhookSignature({ secret: SECRET, headers: headers('garbage'), body, now: NOW }), false);
});
