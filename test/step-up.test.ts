import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { MerchantWalletError, StepUpRequiredError, type MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { hashStepUpCode, newStepUpCode, stepUpCodeMatches } from '../src/modules/step-up/code.js';
import { expectCode } from './support/expect.js';
import { rawRequest } from './support/raw-http.js';
import {
  admin,
  baseUrlFor,
  createMerchant,
  newMerchantClient,
  useTestService,
  approvedProductionClient,
} from './support/service.js';
import { fundedMember, TRON } from './support/fixtures.js';

/**
 * Strong authentication (step-up) through HTTP and the SDK (docs/step-up.md), on POST
 * /v1/withdrawals above the operator's per-asset threshold. Expiry moves the merchant's sandbox
 * clock with POST /v1/sandbox/clock/advance (`client.sandbox.advanceClock`).
 */

const TRON_OTHER = 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf';
const challengeShape = /^kyc_[0-9a-f]{32}$/;

describe('step-up on POST /v1/withdrawals', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));

  async function setThreshold(merchantId: string, asset: string, amount: string | null, environment = 'sandbox') {
    const res = await admin(service, 'PUT', `/admin/v1/merchants/${merchantId}/step-up-thresholds`, {
      environment,
      action: 'withdrawal.create',
      asset,
      amount,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  }

  /** A merchant whose USDT withdrawals of 50 or more need step-up, and a member holding 1000 USDT. */
  async function setup(options: { threshold?: string | null } = {}) {
    const { client, merchantId, creds } = await newMerchantClient(service);
    if (options.threshold !== null) await setThreshold(merchantId, 'USDT', options.threshold ?? '50');
    const member = await fundedMember(client, '1000');
    return { client, merchantId, creds, member };
  }

  const withdrawal = (amount = '100', address = TRON) => ({ asset: 'USDT', network: 'TRON', address, amount });

  /** The call that must answer step_up_required; its error. */
  async function refused(promise: Promise<unknown>): Promise<StepUpRequiredError> {
    try {
      await promise;
    } catch (err) {
      assert.ok(err instanceof StepUpRequiredError, `expected step_up_required, got ${String(err)}`);
      assert.equal(err.code, 'step_up_required');
      assert.equal(err.status, 400);
      assert.match(err.challengeId, challengeShape);
      return err;
    }
    assert.fail('expected step_up_required, the call passed');
  }

  const completeInSandbox = (client: MerchantWalletClient, challengeId: string, outcome: 'approved' | 'declined') =>
    client.request<any>({
      method: 'POST',
      path: `/v1/sandbox/hosted-screens/${challengeId}/complete`,
      body: { outcome },
    });

  async function codeFor(memberId: string, challengeId: string): Promise<string> {
    const res = await admin(service, 'GET', `/admin/v1/notifier/messages?member_id=${memberId}`);
    assert.equal(res.status, 200);
    const message = res.body.data.find((m: any) => m.reference === challengeId);
    assert.ok(message, `the notifier simulator has a code for ${challengeId}`);
    return message.code;
  }

  const available = async (client: MerchantWalletClient, member: string) =>
    (await client.balances.list({ onBehalfOf: member })).find((b) => b.asset === 'USDT')!.available;

  it(
    'answers the first call 400 step_up_required with challenge_id, hosted_url and expires_at, ' + 'and sends a code',
    async () => {
      const { client, member } = await setup();
      const key = randomUUID();
      const raw = await client.requestRaw({
        method: 'POST',
        path: '/v1/withdrawals',
        body: withdrawal(),
        onBehalfOf: member.external,
        idempotencyKey: key,
      });
      assert.equal(raw.status, 400);
      assert.equal(raw.body.code, 'step_up_required');
      assert.equal(raw.body.type, 'invalid_request_error');
      assert.match(raw.body.challenge_id, challengeShape);
      assert.equal(raw.body.hosted_url, `${baseUrlFor(service, 'sandbox')}/hosted/${raw.body.challenge_id}`);
      const now = Math.floor(Date.now() / 1000);
      assert.ok(
        Number.isInteger(raw.body.expires_at) && Math.abs(raw.body.expires_at - (now + 300)) <= 5,
        `expires_at ${raw.body.expires_at} is 300 s ahead`,
      );
      assert.equal(raw.headers['x-idempotent-replay'], undefined);
      const code = await codeFor(member.id, raw.body.challenge_id);
      assert.match(code, /^[0-9]{6}$/);
      assert.equal(await available(client, member.external), '1000.000000', 'nothing moved');

      // The SDK's error carries the same three fields and the call's idempotency key.
      const e = await refused(
        client.withdrawals.create(withdrawal(), { onBehalfOf: member.external, idempotencyKey: key }),
      );
      assert.equal(e.idempotencyKey, key);
      assert.equal(e.hostedUrl, `${baseUrlFor(service, 'sandbox')}/hosted/${e.challengeId}`);
      assert.ok(e.expiresAt >= raw.body.expires_at);
      assert.notEqual(e.challengeId, raw.body.challenge_id, 'a repeat without a completed challenge gets a new one');
    },
  );

  it(
    'repeats with the same key: a challenge not completed gives a new one; completed, ' + 'the call passes once',
    async () => {
      const { client, member } = await setup();
      const key = randomUUID();
      const body = withdrawal('120');
      const first = await refused(
        client.withdrawals.create(body, { onBehalfOf: member.external, idempotencyKey: key }),
      );
      const second = await refused(
        client.withdrawals.create(body, {
          onBehalfOf: member.external,
          idempotencyKey: key,
          stepUp: first.challengeId,
        }),
      );
      assert.notEqual(second.challengeId, first.challengeId, 'the open challenge does not pass; a new one is issued');

      // The same key with another body is still another request.
      await expectCode(
        client.withdrawals.create(withdrawal('121'), {
          onBehalfOf: member.external,
          idempotencyKey: key,
          stepUp: second.challengeId,
        }),
        'idempotency_key_reused',
        409,
      );

      const completed = await completeInSandbox(client, second.challengeId, 'approved');
      assert.deepEqual(
        { id: completed.id, status: completed.status, outcome: completed.outcome },
        { id: second.challengeId, status: 'completed', outcome: 'approved' },
      );

      const raw = await client.requestRaw({
        method: 'POST',
        path: '/v1/withdrawals',
        body,
        onBehalfOf: member.external,
        idempotencyKey: key,
        headers: { 'x-step-up': second.challengeId },
      });
      assert.equal(raw.status, 201, JSON.stringify(raw.body));
      assert.equal(raw.body.amount, '120.000000');
      assert.equal(raw.headers['x-idempotent-replay'], undefined);
      assert.equal(await available(client, member.external), '879.000000', 'amount plus the 1 USDT fee moved once');

      const replay = await client.requestRaw({
        method: 'POST',
        path: '/v1/withdrawals',
        body,
        onBehalfOf: member.external,
        idempotencyKey: key,
      });
      assert.equal(replay.status, 201);
      assert.equal(replay.headers['x-idempotent-replay'], 'true');
      assert.equal(replay.body.id, raw.body.id);
      assert.equal(await available(client, member.external), '879.000000');
    },
  );

  it('repeats through StepUpRequiredError.repeat() with the same body and key', async () => {
    const { client, member } = await setup();
    const e = await refused(client.withdrawals.create(withdrawal('75'), { onBehalfOf: member.external }));
    await completeInSandbox(client, e.challengeId, 'approved');
    const w = await e.repeat<any>();
    assert.equal(w.status, 'locked');
    assert.equal(w.amount, '75.000000');
  });

  it('does not pass a used challenge again: a new withdrawal with it gets a new challenge', async () => {
    const { client, member } = await setup();
    const e = await refused(client.withdrawals.create(withdrawal(), { onBehalfOf: member.external }));
    await completeInSandbox(client, e.challengeId, 'approved');
    await e.repeat();
    const again = await refused(
      client.withdrawals.create(withdrawal(), { onBehalfOf: member.external, stepUp: e.challengeId }),
    );
    assert.notEqual(again.challengeId, e.challengeId);
    await expectCode(completeInSandbox(client, e.challengeId, 'approved'), 'state_invalid', 400);
  });

  it('binds a challenge to its object: another amount or address does not pass, the original still does', async () => {
    const { client, member } = await setup();
    const e = await refused(client.withdrawals.create(withdrawal('100'), { onBehalfOf: member.external }));
    await completeInSandbox(client, e.challengeId, 'approved');
    const otherAmount = await refused(
      client.withdrawals.create(withdrawal('100.5'), { onBehalfOf: member.external, stepUp: e.challengeId }),
    );
    assert.notEqual(otherAmount.challengeId, e.challengeId);
    await refused(
      client.withdrawals.create(withdrawal('100', TRON_OTHER), { onBehalfOf: member.external, stepUp: e.challengeId }),
    );
    // Another spelling of the same amount is the same object.
    const w = await client.withdrawals.create(withdrawal('100.00'), {
      onBehalfOf: member.external,
      stepUp: e.challengeId,
    });
    assert.equal(w.amount, '100.000000');
  });

  it("does not pass another member's challenge", async () => {
    const { client, member } = await setup();
    const other = await fundedMember(client, '1000');
    const e = await refused(client.withdrawals.create(withdrawal(), { onBehalfOf: member.external }));
    await completeInSandbox(client, e.challengeId, 'approved');
    const theirs = await refused(
      client.withdrawals.create(withdrawal(), { onBehalfOf: other.external, stepUp: e.challengeId }),
    );
    assert.notEqual(theirs.challengeId, e.challengeId);
    // Nor another merchant's.
    const b = await setup();
    await refused(b.client.withdrawals.create(withdrawal(), { onBehalfOf: b.member.external, stepUp: e.challengeId }));
    await expectCode(completeInSandbox(b.client, e.challengeId, 'approved'), 'not_found', 404);
    // The owner's challenge is untouched.
    await e.repeat();
  });

  it("expires a challenge 300 seconds after issue by the merchant's sandbox clock", async () => {
    const { client, member } = await setup();
    const completed = await refused(client.withdrawals.create(withdrawal(), { onBehalfOf: member.external }));
    await completeInSandbox(client, completed.challengeId, 'approved');
    const open = await refused(client.withdrawals.create(withdrawal('60'), { onBehalfOf: member.external }));
    await client.sandbox.advanceClock(301);

    const after = await refused(completed.repeat());
    assert.notEqual(after.challengeId, completed.challengeId);
    assert.ok(
      after.expiresAt >= Math.floor(Date.now() / 1000) + 301 + 295,
      'the new challenge expires by the moved clock',
    );
    await expectCode(completeInSandbox(client, open.challengeId, 'approved'), 'state_invalid', 400);
    const page = await openPage(open.hostedUrl);
    assert.equal(page.status, 410);
  });

  it('a declined challenge never passes', async () => {
    const { client, member } = await setup();
    const e = await refused(client.withdrawals.create(withdrawal(), { onBehalfOf: member.external }));
    const declined = await completeInSandbox(client, e.challengeId, 'declined');
    assert.equal(declined.status, 'void');
    assert.equal(declined.outcome, 'declined');
    await refused(e.repeat());
    await expectCode(completeInSandbox(client, e.challengeId, 'submitted' as any), 'state_invalid', 400);
  });

  it('sessions/revoke voids a completed challenge', async () => {
    const { client, member } = await setup();
    const e = await refused(client.withdrawals.create(withdrawal(), { onBehalfOf: member.external }));
    await completeInSandbox(client, e.challengeId, 'approved');
    await client.members.revokeSessions(member.external);
    const after = await refused(e.repeat());
    assert.notEqual(after.challengeId, e.challengeId);
  });

  it('asks nothing below the threshold, at it asks; no threshold (the default) never asks', async () => {
    const { client, member, merchantId } = await setup();
    const below = await client.withdrawals.create(withdrawal('49.999999'), { onBehalfOf: member.external });
    assert.equal(below.status, 'locked');
    await refused(client.withdrawals.create(withdrawal('50'), { onBehalfOf: member.external }));
    // A threshold on another asset does not touch USDT; removing it turns step-up off.
    await setThreshold(merchantId, 'BTC', '0.1');
    await setThreshold(merchantId, 'USDT', null);
    assert.equal(
      (await client.withdrawals.create(withdrawal('500'), { onBehalfOf: member.external })).status,
      'locked',
    );
    const listed = await admin(
      service,
      'GET',
      `/admin/v1/merchants/${merchantId}/step-up-thresholds?environment=sandbox`,
    );
    assert.deepEqual(listed.body.data, [{ action: 'withdrawal.create', asset: 'BTC', amount: '0.10000000' }]);

    const plain = await setup({ threshold: null });
    assert.equal(
      (await plain.client.withdrawals.create(withdrawal('900'), { onBehalfOf: plain.member.external })).status,
      'locked',
    );
  });

  it('passes or asks each withdrawal of a batch on its own: the others are written beside it', async () => {
    const { client, member } = await setup({ threshold: '500' });
    const e = await refused(client.withdrawals.create(withdrawal('600'), { onBehalfOf: member.external }));
    await completeInSandbox(client, e.challengeId, 'approved');
    // Sent at once, so that they share batches: below the threshold, with the completed challenge,
    // below again, at the threshold without a challenge, below.
    const create = (amount: string, stepUp?: string) =>
      client.requestRaw({
        method: 'POST',
        path: '/v1/withdrawals',
        body: withdrawal(amount),
        onBehalfOf: member.external,
        idempotencyKey: randomUUID(),
        ...(stepUp ? { headers: { 'x-step-up': stepUp } } : {}),
      });
    const answers = await Promise.all([
      create('100'),
      e.repeat().then(
        (w) => ({ status: 201, body: w }),
        (err) => ({ status: err.status, body: err }),
      ),
      create('100'),
      create('500'),
      create('50'),
    ]);
    assert.deepEqual(
      answers.map((a) => a.status),
      [201, 201, 201, 400, 201],
      JSON.stringify(answers.map((a) => a.body)),
    );
    assert.equal(answers[1]!.body.amount, '600.000000');
    assert.equal(answers[3]!.body.code, 'step_up_required');
    assert.notEqual(answers[3]!.body.challenge_id, e.challengeId, 'a new challenge for the one without');
    assert.equal(await available(client, member.external), '146.000000', 'four withdrawals and their 1 USDT fees');
    // The challenge was consumed by its withdrawal: a new one with it is asked again.
    await refused(client.withdrawals.create(withdrawal('600'), { onBehalfOf: member.external, stepUp: e.challengeId }));
  });

  it('checks the request before asking: an invalid withdrawal is refused without a challenge', async () => {
    const { client, member } = await setup();
    await expectCode(
      client.withdrawals.create(withdrawal('100', 'not-an-address'), { onBehalfOf: member.external }),
      'address_not_allowed',
    );
    const messages = await admin(service, 'GET', `/admin/v1/notifier/messages?member_id=${member.id}`);
    assert.deepEqual(messages.body.data, []);
    // A balance refusal after step-up is the key's result; the challenge stays completed for a new key.
    const e = await refused(client.withdrawals.create(withdrawal('5000'), { onBehalfOf: member.external }));
    await completeInSandbox(client, e.challengeId, 'approved');
    await expectCode(e.repeat(), 'insufficient_balance');
    await client.deposits.create({
      member_id: member.external,
      asset: 'USDT',
      amount: '5000',
      tx_hash: `0x${randomUUID()}`,
    });
    const w = await client.withdrawals.create(withdrawal('5000'), {
      onBehalfOf: member.external,
      stepUp: e.challengeId,
    });
    assert.equal(w.status, 'locked');
  });

  it('refuses operator thresholds for unknown actions, assets and merchants', async () => {
    const merchantId = await createMerchant(service);
    const setThreshold = (merchant: string, action: string, asset: string, amount: string) =>
      admin(service, 'PUT', `/admin/v1/merchants/${merchant}/step-up-thresholds`, {
        environment: 'sandbox',
        action,
        asset,
        amount,
      });
    const bad = await setThreshold(merchantId, 'card.fly', 'USDT', '1');
    assert.equal(bad.body.code, 'invalid_request');
    const asset = await setThreshold(merchantId, 'withdrawal.create', 'XXX', '1');
    assert.equal(asset.body.code, 'not_found');
    const places = await setThreshold(merchantId, 'withdrawal.create', 'USDT', '1.0000001');
    assert.equal(places.body.code, 'invalid_request');
    const nobody = await setThreshold('mch_nobody', 'withdrawal.create', 'USDT', '1');
    assert.equal(nobody.status, 404);
  });

  it(
    'refuses operator thresholds for actions that no threshold decides (exchange: its direction; card ' +
      'activation: always)',
    async () => {
      const merchantId = await createMerchant(service);
      for (const action of ['exchange.execute', 'card.activate']) {
        const res = await admin(service, 'PUT', `/admin/v1/merchants/${merchantId}/step-up-thresholds`, {
          environment: 'sandbox',
          action,
          asset: 'USDT',
          amount: '1',
        });
        assert.equal(res.status, 400, `${action}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.code, 'invalid_request');
      }
      const list = await admin(
        service,
        'GET',
        `/admin/v1/merchants/${merchantId}/step-up-thresholds?environment=sandbox`,
      );
      assert.deepEqual(list.body.data, [], 'nothing is kept that would be shown but never read');
    },
  );

  // --- the hosted page ----------------------------------------------------------------------

  interface Page {
    status: number;
    text: string;
    url: URL;
    cookie: string;
    token: string;
  }

  /** GET the hosted page on the host that issued it (connecting to 127.0.0.1). */
  async function openPage(hostedUrl: string): Promise<Page> {
    const url = new URL(hostedUrl);
    const res = await rawRequest(`http://127.0.0.1:${url.port}${url.pathname}`, { headers: { host: url.host } });
    const setCookie = ([] as string[]).concat(res.headers['set-cookie'] ?? [])[0] ?? '';
    return {
      status: res.status,
      text: res.text,
      url,
      cookie: setCookie.split(';')[0]!,
      token: /name="csrf_token" value="([^"]+)"/.exec(res.text)?.[1] ?? '',
    };
  }

  async function postCode(page: Page, code: string) {
    return rawRequest(`http://127.0.0.1:${page.url.port}${page.url.pathname}`, {
      method: 'POST',
      headers: { host: page.url.host, cookie: page.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf_token=${encodeURIComponent(page.token)}&code=${encodeURIComponent(code)}`,
    });
  }

  const wrongCode = (right: string) => (right === '123456' ? '654321' : '123456');

  it('shows the action in plain words and a labelled code field, with no-store and a CSP', async () => {
    const { client, member } = await setup();
    const e = await refused(client.withdrawals.create(withdrawal('100'), { onBehalfOf: member.external }));
    const page = await openPage(e.hostedUrl);
    assert.equal(page.status, 200);
    assert.match(page.text, /<h1>Confirm your withdrawal<\/h1>/);
    assert.match(page.text, /confirm a withdrawal from your wallet/);
    assert.match(page.text, /<label for="f-code">Code<\/label>/);
    assert.match(page.text, /autocomplete="one-time-code"/);
    assert.match(page.text, /Sandbox: the code <strong>000000<\/strong> is always accepted/);
    assert.doesNotMatch(page.text, /100(\.0+)? ?USDT|TJCnKs/, 'no amount or address on the page');
    const res = await rawRequest(`http://127.0.0.1:${page.url.port}${page.url.pathname}`, {
      headers: { host: page.url.host },
    });
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.ok(res.headers['content-security-policy']);
  });

  it('completes on the page with the code the notifier delivered; then the repeat passes', async () => {
    const { client, member } = await setup();
    const e = await refused(client.withdrawals.create(withdrawal('100'), { onBehalfOf: member.external }));
    const code = await codeFor(member.id, e.challengeId);
    const page = await openPage(e.hostedUrl);
    const malformed = await postCode(page, '12ab');
    assert.equal(malformed.status, 400);
    assert.match(malformed.text, /Enter the 6-digit code, numbers only/);
    assert.match(malformed.text, /aria-invalid="true"/);
    const done = await postCode(page, code);
    assert.equal(done.status, 200, done.text);
    assert.match(done.text, /<h1>Confirmed<\/h1>/);
    assert.equal((await e.repeat<any>()).status, 'locked');
    assert.equal((await postCode(page, code)).status, 410, "a used challenge's page is gone");
  });

  it('voids the challenge at the fifth wrong code and the page says so; then even the right code fails', async () => {
    const { client, member } = await setup();
    const e = await refused(client.withdrawals.create(withdrawal('100'), { onBehalfOf: member.external }));
    const code = await codeFor(member.id, e.challengeId);
    const page = await openPage(e.hostedUrl);
    for (let left = 4; left >= 1; left--) {
      const res = await postCode(page, wrongCode(code));
      assert.equal(res.status, 400);
      assert.match(res.text, new RegExp(`That code is not correct\\. You have ${left} attempts? left\\.`));
      assert.match(res.text, /class="field-error"/);
    }
    const fifth = await postCode(page, wrongCode(code));
    assert.equal(fifth.status, 200);
    assert.match(fifth.text, /<h1>Request cancelled<\/h1>/);
    assert.match(fifth.text, /5th wrong code/);
    assert.equal((await postCode(page, code)).status, 410);
    assert.equal((await openPage(e.hostedUrl)).status, 410);
    await expectCode(completeInSandbox(client, e.challengeId, 'approved'), 'state_invalid', 400);
    const after = await refused(e.repeat());
    assert.notEqual(after.challengeId, e.challengeId);
  });

  it('accepts 000000 in the sandbox only', async () => {
    const { client, member } = await setup();
    const e = await refused(client.withdrawals.create(withdrawal('100'), { onBehalfOf: member.external }));
    const page = await openPage(e.hostedUrl);
    assert.equal((await postCode(page, '000000')).status, 200);
    await e.repeat();

    // Production: a key with an IP allow-list and deposits approved by the operator.
    const merchantId = await createMerchant(service);
    const prod = await approvedProductionClient(service, merchantId);
    await setThreshold(merchantId, 'USDT', '50', 'production');
    const m = await fundedMember(prod, '1000');
    const pe = await refused(prod.withdrawals.create(withdrawal('100'), { onBehalfOf: m.external }));
    assert.ok(pe.hostedUrl.startsWith(baseUrlFor(service, 'production')));
    const prodPage = await openPage(pe.hostedUrl);
    assert.doesNotMatch(prodPage.text, /000000/);
    const refusedCode = await postCode(prodPage, '000000');
    assert.equal(refusedCode.status, 400, 'not a code in production');
    assert.match(refusedCode.text, /You have 4 attempts left/);
    assert.equal((await postCode(prodPage, await codeFor(m.id, pe.challengeId))).status, 200);
    assert.equal((await pe.repeat<any>()).status, 'locked');
  });

  it('documents x-step-up and the step_up_required fields in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${service.publicUrl}/v1/openapi.json`)).json()) as any;
    const op = doc.paths['/v1/withdrawals'].post;
    const header = op.parameters.find((p: any) => p.in === 'header' && p.name === 'x-step-up');
    assert.ok(header, 'x-step-up is a documented header');
    assert.equal(header.required, false);
    assert.ok(op.responses['400']['x-error-codes'].includes('step_up_required'));
    assert.match(op.responses['400'].description, /challenge_id/);
    assert.ok(doc.components.schemas.Error.properties.challenge_id);
    assert.ok(doc.components.schemas.Error.properties.hosted_url);
    assert.ok(doc.components.schemas.Error.properties.expires_at);
    assert.equal(
      doc.paths['/v1/withdrawals/{id}/confirm'].post.parameters.find((p: any) => p.name === 'x-step-up'),
      undefined,
    );
  });

  it('keeps the SDK error a MerchantWalletError', async () => {
    const { client, member } = await setup();
    const e = await refused(client.withdrawals.create(withdrawal(), { onBehalfOf: member.external }));
    assert.ok(e instanceof MerchantWalletError);
    assert.equal(e.body['challenge_id'], e.challengeId);
  });
});

describe('step-up codes (pure)', () => {
  it('draws six-digit codes and keeps only a salted hash that matches the code alone', async () => {
    const code = newStepUpCode();
    assert.match(code, /^[0-9]{6}$/);
    const hash = await hashStepUpCode(code);
    assert.match(hash, /^scrypt\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
    assert.ok(!hash.includes(code));
    assert.notEqual(await hashStepUpCode(code), hash, 'salted');
    assert.equal(await stepUpCodeMatches(code, hash), true);
    assert.equal(await stepUpCodeMatches(code === '000001' ? '000002' : '000001', hash), false);
    assert.equal(await stepUpCodeMatches(code, null), false);
    assert.equal(await stepUpCodeMatches(code, 'sha256$x$y'), false);
  });
});
