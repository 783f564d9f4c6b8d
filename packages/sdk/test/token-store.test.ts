import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TokenResponse, TokenStore } from '../src/index.js';
import { errorBody, makeClient, startStub } from './helpers.js';

function memoryStore(
  initial?: TokenResponse,
): TokenStore & { saved: TokenResponse[]; current: TokenResponse | undefined } {
  const s = {
    saved: [] as TokenResponse[],
    current: initial,
    load: () => s.current,
    save: (t: TokenResponse) => {
      s.saved.push(t);
      s.current = t;
    },
  };
  return s;
}

test('tokenStore: a second client reuses the stored token instead of exchanging the key again', async (t) => {
  const stub = await startStub({ handle: () => ({ body: { ok: true } }) });
  t.after(() => stub.close());
  const store = memoryStore();
  const first = makeClient(stub, { tokenStore: store }).client;
  await first.request({ method: 'GET', path: '/v1/assets' });
  first.close();
  assert.equal(stub.tokenRequests.length, 1);
  assert.equal(store.saved.length, 1);
  const second = makeClient(stub, { tokenStore: store }).client;
  await second.request({ method: 'GET', path: '/v1/assets' });
  second.close();
  assert.equal(stub.tokenRequests.length, 1, 'no second exchange');
  assert.equal(stub.requests[1]!.headers['authorization'], `Bearer ${store.saved[0]!.auth_token}`);
  assert.equal(second.tokenInfo()?.auth_token, store.saved[0]!.auth_token);
});

test(
  'tokenStore: a stored token close to expiry, or one the server refuses, ' + 'is replaced by a new exchange',
  async (t) => {
    let refuse = 'tok_stale_but_unexpired';
    const stub = await startStub({
      handle: (r) =>
        r.headers['authorization'] === `Bearer ${refuse}`
          ? { status: 401, body: errorBody('invalid_token', 'authentication_error') }
          : { body: { ok: true } },
    });
    t.after(() => stub.close());
    const nowS = Math.floor(Date.now() / 1000);
    const nearExpiry = memoryStore({ auth_token: 'tok_old', expired_at: nowS + 30, token_type: 'Bearer', scopes: [] });
    const a = makeClient(stub, { tokenStore: nearExpiry }).client;
    await a.request({ method: 'GET', path: '/v1/assets' });
    a.close();
    assert.equal(stub.tokenRequests.length, 1, 'within the 60 s margin: exchanged');
    assert.equal(nearExpiry.current?.auth_token, 'tok_1');

    const revoked = memoryStore({ auth_token: refuse, expired_at: nowS + 1200, token_type: 'Bearer', scopes: [] });
    const b = makeClient(stub, { tokenStore: revoked }).client;
    await b.request({ method: 'GET', path: '/v1/assets' });
    b.close();
    assert.equal(stub.tokenRequests.length, 2, 'refused: exchanged once');
    assert.equal(revoked.current?.auth_token, 'tok_2');
    refuse = '';
    // A store that throws never fails a call.
    const broken = makeClient(stub, {
      tokenStore: {
        load: () => {
          throw new Error('unreadable');
        },
        save: () => {
          throw new Error('read-only');
        },
      },
    }).client;
    await broken.request({ method: 'GET', path: '/v1/assets' });
    broken.close();
  },
);
