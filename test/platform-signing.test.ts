import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { signRequest } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { rawRequest, signedHeaders, type SigningOptions } from './support/raw-http.js';
import { baseUrlFor, newMerchantClient, type Credentials, useTestService } from './support/service.js';

describe('request signing', () => {
  let service: RunningService;
  let creds: Credentials;
  let token: string;
  let host: string;
  useTestService({ merchant: false }, (s) => ({ service } = s));
  before(async () => {
    const m = await newMerchantClient(service);
    creds = m.creds;
    token = await m.client.getToken();
    host = new URL(baseUrlFor(service, 'sandbox')).host;
  });

  const now = () => String(Math.floor(Date.now() / 1000));

  /** A signed POST /v1/members built by hand so each rule can be broken on purpose. */
  async function post(opts: SigningOptions & { path?: string; body?: string; omit?: string[] }) {
    const path = opts.path ?? '/v1/members';
    const body = opts.body ?? JSON.stringify({ external_member_id: `sig-${randomUUID()}` });
    const headers = signedHeaders({ host, token, signingKey: creds.signingKey }, path, body, opts);
    for (const h of opts.omit ?? []) delete headers[h];
    return rawRequest(`${service.publicUrl}${path}`, { method: 'POST', headers, body });
  }

  it('accepts the exact five-segment Base64 HMAC-SHA256 signature over the raw bytes', async () => {
    const body = '{ "external_member_id" :  "spaced-body" }';
    const timestamp = now();
    const nonce = randomUUID();
    const bodyHash = createHash('sha256').update(body).digest('hex');
    const expected = createHmac('sha256', creds.signingKey)
      .update(`POST\n/v1/members\n${timestamp}\n${nonce}\n${bodyHash}`)
      .digest('base64');
    assert.equal(expected.length, 44);
    const res = await post({ body, timestamp, nonce, signature: expected });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  });

  it('refuses a hex signature', async () => {
    const timestamp = now();
    const nonce = randomUUID();
    const body = JSON.stringify({ external_member_id: 'hex' });
    const hex = createHmac('sha256', creds.signingKey)
      .update(`POST\n/v1/members\n${timestamp}\n${nonce}\n${createHash('sha256').update(body).digest('hex')}`)
      .digest('hex');
    const res = await post({ body, timestamp, nonce, signature: hex });
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'invalid_signature');
  });

  it('refuses a body re-serialised after signing', async () => {
    const signedBody = JSON.stringify({ external_member_id: 'reser' });
    const res = await post({ signedBody, body: JSON.stringify({ external_member_id: 'reser' }, null, 2) });
    assert.equal(res.body.code, 'invalid_signature');
  });

  it('refuses a signature that omitted the query string, and accepts one over the path as sent', async () => {
    const withQuery = '/v1/members?b=2&a=1';
    const omitted = await post({ path: withQuery, signedPath: '/v1/members' });
    assert.equal(omitted.body.code, 'invalid_signature');
    const reordered = await post({ path: withQuery, signedPath: '/v1/members?a=1&b=2' });
    assert.equal(reordered.body.code, 'invalid_signature');
    const exact = await post({ path: withQuery });
    assert.equal(exact.status, 201, JSON.stringify(exact.body));
  });

  it('answers timestamp_out_of_range for a timestamp in milliseconds or too far away', async () => {
    const ms = await post({ timestamp: String(Date.now()) });
    assert.equal(ms.status, 401);
    assert.equal(ms.body.code, 'timestamp_out_of_range');
    const old = await post({ timestamp: String(Math.floor(Date.now() / 1000) - 301) });
    assert.equal(old.body.code, 'timestamp_out_of_range');
    const edge = await post({ timestamp: String(Math.floor(Date.now() / 1000) - 295) });
    assert.equal(edge.status, 201);
  });

  it('answers invalid_signature when any signing header is missing or the timestamp is not numeric', async () => {
    for (const h of ['x-timestamp', 'x-nonce', 'x-signature']) {
      const res = await post({ omit: [h] });
      assert.equal(res.status, 401, h);
      assert.equal(res.body.code, 'invalid_signature', h);
    }
    const nonNumeric = await post({ timestamp: 'yesterday' });
    assert.equal(nonNumeric.body.code, 'invalid_signature');
  });

  it('refuses a signature made with the api key instead of the signing key', async () => {
    const timestamp = now();
    const nonce = randomUUID();
    const body = JSON.stringify({ external_member_id: 'wrong-key' });
    const signature = signRequest({
      method: 'POST',
      pathWithQuery: '/v1/members',
      timestamp,
      nonce,
      rawBody: body,
      signingKey: creds.apiKey,
    });
    const res = await post({ body, timestamp, nonce, signature });
    assert.equal(res.body.code, 'invalid_signature');
  });

  it('refuses a reused nonce, and does not consume a nonce whose signature failed', async () => {
    const nonce = randomUUID();
    const bad = await post({ nonce, signature: 'A'.repeat(43) + '=' });
    assert.equal(bad.body.code, 'invalid_signature');
    const first = await post({ nonce });
    assert.equal(first.status, 201, 'the failed attempt did not use up the nonce');
    const again = await post({ nonce });
    assert.equal(again.status, 401);
    assert.equal(again.body.code, 'nonce_reused');
  });

  it('signs DELETE and other writes with the hash of the empty body', async () => {
    // An unknown path is 404 before any signing; a real write with an empty body needs the empty-string hash.
    const timestamp = now();
    const nonce = randomUUID();
    const wrongEmptyHash = createHmac('sha256', creds.signingKey)
      .update(`POST\n/v1/members/sig-none/suspend\n${timestamp}\n${nonce}\n`)
      .digest('base64');
    const headers = {
      host,
      authorization: `Bearer ${token}`,
      'x-idempotency-key': randomUUID(),
      'x-timestamp': timestamp,
      'x-nonce': nonce,
      'x-signature': wrongEmptyHash,
    };
    const res = await rawRequest(`${service.publicUrl}/v1/members/sig-none/suspend`, { method: 'POST', headers });
    assert.equal(res.body.code, 'invalid_signature');
    const good = signRequest({
      method: 'POST',
      pathWithQuery: '/v1/members/sig-none/suspend',
      timestamp,
      nonce: `${nonce}x`,
      rawBody: '',
      signingKey: creds.signingKey,
    });
    const ok = await rawRequest(`${service.publicUrl}/v1/members/sig-none/suspend`, {
      method: 'POST',
      headers: { ...headers, 'x-nonce': `${nonce}x`, 'x-signature': good },
    });
    assert.equal(ok.body.code, 'member_not_found', 'signature accepted, then the member lookup answers');
  });

  it('does not require a signature on GET', async () => {
    const res = await rawRequest(`${service.publicUrl}/v1/members/nobody`, {
      headers: { host, authorization: `Bearer ${token}` },
    });
    assert.equal(res.body.code, 'member_not_found');
  });
});
