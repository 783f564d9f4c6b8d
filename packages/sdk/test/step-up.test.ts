import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MerchantWalletError, StepUpRequiredError } from '../src/index.js';
import { errorBody, makeClient, signatureValid, startStub } from './helpers.js';

const challenge = {
  challenge_id: 'kyc_0123456789abcdef0123456789abcdef',
  hosted_url: 'https://api-sandbox.example.com/hosted/kyc_0123456789abcdef0123456789abcdef',
  expires_at: 1_767_225_900,
};

test(
  'step_up_required rejects with StepUpRequiredError at once; ' +
    'repeat() resends the same body and key with x-step-up',
  async (t) => {
    const stub = await startStub({
      handle: (r) =>
        r.headers['x-step-up'] === challenge.challenge_id
          ? { status: 201, body: { id: 'wdr_1', status: 'locked' } }
          : { status: 400, body: errorBody('step_up_required', 'invalid_request_error', challenge) },
    });
    const { client } = makeClient(stub, { maxAttempts: 4 });
    t.after(async () => {
      client.close();
      await stub.close();
    });
    const body = { asset: 'USDT', network: 'TRON', address: 'T...', amount: '150' };
    const err = await client.withdrawals.create(body, { onBehalfOf: 'user-42' }).then(
      () => assert.fail('expected a rejection'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof StepUpRequiredError && err instanceof MerchantWalletError);
    assert.equal(stub.requests.length, 1, 'not retried');
    assert.equal(err.code, 'step_up_required');
    assert.equal(err.challengeId, challenge.challenge_id);
    assert.equal(err.hostedUrl, challenge.hosted_url);
    assert.equal(err.expiresAt, challenge.expires_at);
    assert.equal(err.idempotencyKey, stub.requests[0]!.headers['x-idempotency-key']);

    const out = await err.repeat<{ id: string }>();
    assert.equal(out.id, 'wdr_1');
    const [first, second] = stub.requests;
    assert.equal(second!.headers['x-step-up'], challenge.challenge_id);
    assert.equal(second!.headers['x-idempotency-key'], first!.headers['x-idempotency-key']);
    assert.equal(second!.headers['x-on-behalf-of'], 'user-42');
    assert.ok(second!.body.equals(first!.body), 'the same body bytes');
    assert.notEqual(second!.headers['x-nonce'], first!.headers['x-nonce']);
    assert.ok(signatureValid(second!));
  },
);

test('the stepUp write option sends x-step-up with the key given', async (t) => {
  const stub = await startStub({ handle: () => ({ status: 201, body: { id: 'wdr_2' } }) });
  const { client } = makeClient(stub);
  t.after(async () => {
    client.close();
    await stub.close();
  });
  const key = '5f0c6b8e-3a4d-4c1e-9b7a-2d6f8e1c0a93';
  await client.withdrawals.create(
    { asset: 'USDT', network: 'TRON', address: 'T...', amount: '1' },
    { onBehalfOf: 'm', idempotencyKey: key, stepUp: challenge.challenge_id },
  );
  await client.request({ method: 'POST', path: '/v1/anything', body: {}, stepUp: 'kyc_x' });
  assert.equal(stub.requests[0]!.headers['x-step-up'], challenge.challenge_id);
  assert.equal(stub.requests[0]!.headers['x-idempotency-key'], key);
  assert.equal(stub.requests[1]!.headers['x-step-up'], 'kyc_x');
  await client.members.create({ external_member_id: 'x' });
  assert.equal(stub.requests[2]!.headers['x-step-up'], undefined, 'absent unless asked for');
});
