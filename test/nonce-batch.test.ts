import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { consumeNonce } from '../src/platform/writes/nonces.js';
import { consumeNonces, type NonceCheck } from '../src/platform/writes/nonce-batch.js';
import { rawRequest, signedPost as signed } from './support/raw-http.js';
import { baseUrlFor, useTestService, type Credentials } from './support/service.js';

/**
 * Nonces of signed requests that arrive together are consumed in one statement
 * (src/platform/writes/nonce-batch.ts, docs/group-commit.md "Nonces in batches"); each request keeps
 * the answer its own statement would have given it.
 */
describe('nonces consumed in batches', () => {
  let service: RunningService;
  let creds: Credentials;
  let token: string;
  let merchantClient: MerchantWalletClient;
  useTestService(
    { config: { rateLimitScale: 1_000 } },
    (setup) => ({ service, creds, client: merchantClient } = setup),
  );
  before(async () => {
    token = await merchantClient.getToken();
  });

  const nowMs = Date.UTC(2031, 0, 1, 12, 0, 0);
  const check = (nonce: string, atMs = nowMs, key?: string): NonceCheck => ({
    use: {
      merchantId: creds.merchantId,
      environment: 'sandbox',
      nonce,
      timestampSeconds: Math.floor(atMs / 1000),
      nowMs: atMs,
    },
    ...(key ? { key: { merchantId: creds.merchantId, environment: 'sandbox' as const, key } } : {}),
  });

  it(
    'answers each nonce as its own statement would: fresh once, ' + 'a repeat in the list or a used nonce refused',
    async () => {
      const [a, b, used] = [randomUUID(), randomUUID(), randomUUID()];
      assert.equal(await consumeNonce(service.ctx.db, check(used).use), true);
      const answers = await consumeNonces(service.ctx.db, [check(a), check(b), check(a), check(used), check(b)]);
      assert.deepEqual(
        answers.map((x) => x.fresh),
        [true, true, false, false, false],
      );
      assert.deepEqual(
        (await consumeNonces(service.ctx.db, [check(b), check(a)])).map((x) => x.fresh),
        [false, false],
      );
      // Another merchant or environment has nonces of its own.
      const other = check(a);
      assert.deepEqual(
        (await consumeNonces(service.ctx.db, [{ ...other, use: { ...other.use, environment: 'production' } }])).map(
          (x) => x.fresh,
        ),
        [true],
      );
    },
  );

  it('takes over an expired nonce only when it has expired for the earliest request of the statement', async () => {
    const nonce = randomUUID();
    assert.deepEqual(
      (await consumeNonces(service.ctx.db, [check(nonce)])).map((x) => x.fresh),
      [true],
    );
    // the timestamp (now, whole seconds) leaves the 300 s tolerance one second later than five minutes from first use
    const expiry = nowMs + 301_000;
    const late = check(nonce, expiry);
    const early = { ...check(randomUUID(), expiry - 1) };
    assert.deepEqual(
      (await consumeNonces(service.ctx.db, [late, early])).map((x) => x.fresh),
      [false, true],
      'one request of the statement is before the expiry',
    );
    assert.deepEqual(
      (await consumeNonces(service.ctx.db, [late])).map((x) => x.fresh),
      [true],
      'expired for every request: taken over',
    );
    assert.deepEqual(
      (await consumeNonces(service.ctx.db, [check(nonce, expiry + 1)])).map((x) => x.fresh),
      [false],
      'and used again from then on',
    );
  });

  it("reads an idempotent request's finished record with its nonce, and nothing for a key without one", async () => {
    const key = randomUUID();
    const body = JSON.stringify({ external_member_id: `nb-${randomUUID()}` });
    const first = await signedPost('/v1/members', body, randomUUID(), key);
    assert.equal(first.status, 201, first.text);
    const [withRecord, without] = await consumeNonces(service.ctx.db, [
      check(randomUUID(), Date.now(), key),
      check(randomUUID(), Date.now(), randomUUID()),
    ]);
    assert.equal(withRecord!.fresh, true);
    assert.equal(withRecord!.record?.status_code, 201);
    assert.equal(JSON.parse(withRecord!.record!.response_body).id, first.body.id);
    assert.deepEqual(without, { fresh: true });
  });

  const signedPost = (path: string, body: string, nonce: string, key = randomUUID()) =>
    signed(
      {
        publicUrl: service.publicUrl,
        host: new URL(baseUrlFor(service, 'sandbox')).host,
        token,
        signingKey: creds.signingKey,
      },
      path,
      body,
      { nonce, key },
    );

  async function nonceMetrics(): Promise<{ statements: number; nonces: number }> {
    const text = await (await fetch(`${service.adminUrl}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    return { statements: value('nonce_batch_statements_total'), nonces: value('nonce_batch_nonces_total') };
  }

  it('over HTTP: signed requests sent together share statements, each answered on its own', async () => {
    // Kept-alive connections first: requests on open connections arrive together, while new
    // connections are accepted one per turn of the event loop. The requests are then written in
    // one tick (node:http, not the SDK's fetch, whose writes may spread over turns of a busy
    // machine's loop), so the server reads them in one poll.
    await Promise.all(
      Array.from({ length: 24 }, () =>
        rawRequest(`${service.publicUrl}/v1/no-such-path`, {
          headers: { host: new URL(baseUrlFor(service, 'sandbox')).host },
        }),
      ),
    );
    // Member creation is a command whose batch consumes its nonce (write-model.md): the signed
    // writes measured here are suspensions, which consume theirs through the nonce batcher.
    const members = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        signedPost('/v1/members', JSON.stringify({ external_member_id: `nb-http-${i}` }), randomUUID()),
      ),
    );
    const before = await nonceMetrics();
    const sent = await Promise.all(
      members.map((m) => signedPost(`/v1/members/${(m.body as { id: string }).id}/suspend`, '', randomUUID())),
    );
    assert.deepEqual(
      sent.map((r) => r.status),
      sent.map(() => 200),
      sent.map((r) => r.text).join('\n'),
    );
    assert.equal(new Set(sent.map((r) => (r.body as { id: string }).id)).size, 24);
    const after = await nonceMetrics();
    assert.equal(after.nonces - before.nonces, 24);
    assert.ok(
      after.statements - before.statements < 24,
      `24 nonces in ${after.statements - before.statements} statements`,
    );
  });

  it(
    'over HTTP: the same signed bytes sent six times at once (new idempotency keys) pass once; the others are ' +
      'nonce_reused',
    async () => {
      const nonce = randomUUID();
      const body = JSON.stringify({ external_member_id: `nb-${randomUUID()}` });
      const sent = await Promise.all(Array.from({ length: 6 }, () => signedPost('/v1/members', body, nonce)));
      assert.deepEqual(sent.map((r) => r.status).sort(), [201, 401, 401, 401, 401, 401]);
      for (const r of sent.filter((x) => x.status === 401)) assert.equal(r.body.code, 'nonce_reused');
    },
  );
});
