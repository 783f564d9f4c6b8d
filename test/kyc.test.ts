import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import {
  admin,
  clientFor,
  createKey,
  newMerchantClient,
  useTestService,
  postgresOnly,
  keyClient,
} from './support/service.js';
import {
  getHostedPage,
  jpegBytes,
  pngBytes,
  postHostedPage,
  testHostedScreenKey,
  type FileInput,
} from './support/hosted.js';
import { eventsAbout } from './support/fixtures.js';

/**
 * KYC profiles and the hosted-screen framework through HTTP (docs/kyc.md, docs/hosted-screens.md):
 * sessions, the screens as a browser without JavaScript uses them, tickets (reuse, expiry by the
 * sandbox clock, other host, revocation), reviews (operator, sandbox helper through the simulated
 * provider), the level drop on update, events, security headers and CSRF.
 *
 * The sandbox clock is moved with `POST /v1/sandbox/clock/advance` (`client.sandbox.advanceClock`).
 */

let service: RunningService;
let client: MerchantWalletClient;
let merchantId: string;
let seq = 0;

useTestService({ config: { hostedScreenKey: testHostedScreenKey } }, (s) => ({ service, client, merchantId } = s));

async function newMember() {
  return client.members.create({ external_member_id: `kyc-${++seq}` });
}
/** A member's KYC profile row. */
const profileOf = (memberId: string) =>
  service.ctx.db.selectFrom('kyc_profiles').selectAll().where('member_id', '=', memberId).executeTakeFirstOrThrow();
/** A new member who sent its KYC details (the sandbox completes the screen): the member and its profile row. */
async function submittedMember() {
  const m = await newMember();
  await client.hostedScreens.sandboxComplete((await client.kyc.createSession({ onBehalfOf: m.id })).id, 'submitted');
  return { m, profile: await profileOf(m.id) };
}
/** A KYC profile row by its id. */
const profileById = (id: string) =>
  service.ctx.db.selectFrom('kyc_profiles').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
/** The provider check job of a profile's first submission, as the queue hands it over (first attempt). */
const checkJob = (profileId: string) => ({
  id: 1n,
  kind: 'kyc.check',
  payload: { profile_id: profileId, submission: 1 },
  attempts: 1,
  max_attempts: 200,
});

const validFields = {
  first_name: 'Ada',
  last_name: "O'Neil-Lovelace",
  birth_date: '1990-03-27',
  nationality: 'GB',
  document_type: 'passport',
  document_number: 'x123 4567',
  address_line1: '12 Analytical Way',
  address_line2: '',
  city: 'London',
  postal_code: 'NW1 2DB',
  address_country: 'GB',
};
const validFiles: FileInput[] = [
  { name: 'document_image', filename: 'passport.png', type: 'image/png', data: pngBytes },
  { name: 'selfie_image', filename: 'me.jpg', type: 'image/jpeg', data: jpegBytes },
];

/** Opens the ticket's page and submits it with `fields` and `files`. */
async function fillIn(
  hostedUrl: string,
  fields: Record<string, string> = validFields,
  files: FileInput[] = validFiles,
) {
  const page = await getHostedPage(service, hostedUrl);
  assert.equal(page.status, 200, page.text);
  return submitPage(hostedUrl, page, fields, files);
}

/** Submits the form of `page` (opened before, at `hostedUrl`) with its CSRF token and cookie. */
function submitPage(
  hostedUrl: string,
  page: { csrfToken?: string; cookie?: string },
  fields: Record<string, string> = validFields,
  files: FileInput[] = validFiles,
) {
  return postHostedPage(service, hostedUrl, {
    fields: { ...fields, csrf_token: page.csrfToken! },
    files,
    cookie: page.cookie,
  });
}

async function eventsOf(objectId: string) {
  return eventsAbout(service, objectId, ['type', 'status', 'status_version', 'object', 'external_member_id']);
}

function assertHostedHeaders(headers: Record<string, unknown>, frameAncestors = "'none'") {
  assert.equal(headers['cache-control'], 'no-store');
  assert.equal(
    headers['content-security-policy'],
    `default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; ` +
      `frame-ancestors ${frameAncestors}`,
  );
  assert.equal(headers['x-content-type-options'], 'nosniff');
  assert.equal(headers['referrer-policy'], 'no-referrer');
}

describe('KYC sessions', () => {
  test('a first-profile ticket: shape, host, 24 hours; no profile until the screen is submitted', async () => {
    const m = await newMember();
    const t = await client.kyc.createSession({ onBehalfOf: m.external_member_id });
    assert.match(t.id, /^kyc_[0-9a-f]{32}$/);
    assert.equal(t.hosted_url, `http://api-sandbox.localhost:${new URL(service.publicUrl).port}/hosted/${t.id}`);
    const now = Math.floor(Date.now() / 1000);
    assert.ok(Math.abs(t.expires_at - (now + 86_400)) <= 5, `expires_at ${t.expires_at}`);
    const member = await client.members.get(m.id);
    assert.equal(member.kyc_profile_status, null);
    assert.equal(member.kyc_level, 0);
    // Still no profile: a second first-profile ticket is fine, an update is not.
    await client.kyc.createSession({ onBehalfOf: m.id });
    await assert.rejects(client.kyc.createProfileSession({ onBehalfOf: m.id }), { status: 404, code: 'not_found' });
  });

  test('profile-sessions without a profile never falls back to creation', async () => {
    const m = await newMember();
    await assert.rejects(client.kyc.createProfileSession({ onBehalfOf: m.external_member_id }), {
      status: 404,
      code: 'not_found',
    });
    assert.equal((await client.members.get(m.id)).kyc_profile_status, null);
    await assert.rejects(
      client.request({ method: 'POST', path: '/v1/kyc/profile-sessions', onBehalfOf: m.id, idempotencyKey: false }),
      { code: 'idempotency_key_required' },
    );
    await assert.rejects(client.request({ method: 'POST', path: '/v1/kyc/profile-sessions' }), {
      code: 'member_context_required',
    });
    await assert.rejects(client.kyc.createProfileSession({ onBehalfOf: 'nobody-here' }), { code: 'member_not_found' });
  });

  test(
    'the KYC screen submitted creates the profile (pending_review, event); then sessions is 409 and the ticket ' +
      'is spent',
    async () => {
      const m = await newMember();
      const t = await client.kyc.createSession({ onBehalfOf: m.id });
      const page = await getHostedPage(service, t.hosted_url);
      assert.equal(page.status, 200);
      assertHostedHeaders(page.headers);
      assert.match(
        String(page.headers['set-cookie']),
        /^mwa_hosted_csrf=[A-Za-z0-9_-]{43}; Path=\/hosted\/; Max-Age=86400; HttpOnly; SameSite=Strict$/,
      );
      assert.match(page.text, /<form method="post" action="\/hosted\/kyc_[0-9a-f]{32}" enctype="multipart\/form-data"/);
      for (const name of [
        'first_name',
        'last_name',
        'birth_date',
        'nationality',
        'document_type',
        'document_number',
        'document_image',
        'address_line1',
        'city',
        'postal_code',
        'address_country',
        'selfie_image',
      ]) {
        assert.match(page.text, new RegExp(`<label for="f-${name}">`), `label of ${name}`);
      }
      assert.doesNotMatch(page.text, /<script/);

      const done = await submitPage(t.hosted_url, page);
      assert.equal(done.status, 200, done.text);
      assertHostedHeaders(done.headers);
      assert.match(done.text, /Details sent/);

      const member = await client.members.get(m.id);
      assert.equal(member.kyc_profile_status, 'pending_review');
      assert.equal(member.kyc_level, 0);
      const profile = await profileOf(m.id);
      assert.equal(profile.document_number, 'X123 4567');
      assert.equal(profile.last_name, "O'Neil-Lovelace");
      assert.deepEqual(await eventsOf(profile.id), [
        {
          type: 'kyc.profile.pending_review',
          status: 'pending_review',
          status_version: 1,
          object: 'kyc_profile',
          external_member_id: m.external_member_id,
        },
      ]);
      await assert.rejects(client.kyc.createSession({ onBehalfOf: m.id }), { status: 409, code: 'duplicate_resource' });

      // Ticket reuse: the page and the form are gone.
      assert.equal((await getHostedPage(service, t.hosted_url)).status, 410);
      const again = await submitPage(t.hosted_url, page);
      assert.equal(again.status, 410);
      assertHostedHeaders(again.headers);
      await assert.rejects(client.hostedScreens.sandboxComplete(t.id, 'submitted'), {
        status: 400,
        code: 'state_invalid',
      });
    },
  );

  test('a second first-profile ticket submitted after the profile exists changes nothing', async () => {
    const m = await newMember();
    const first = await client.kyc.createSession({ onBehalfOf: m.id });
    const second = await client.kyc.createSession({ onBehalfOf: m.id });
    const secondPage = await getHostedPage(service, second.hosted_url);
    assert.equal((await fillIn(first.hosted_url)).status, 200);
    const late = await submitPage(second.hosted_url, secondPage, { ...validFields, first_name: 'Other' });
    assert.equal(late.status, 200);
    assert.match(late.text, /already been sent/);
    assert.equal((await getHostedPage(service, second.hosted_url)).status, 410, 'the late ticket is void');
    const third = await getHostedPage(
      service,
      (await client.kyc.createProfileSession({ onBehalfOf: m.id })).hosted_url,
    );
    assert.match(third.text, /value="Ada"/);
    const profile = await service.ctx.db
      .selectFrom('kyc_profiles')
      .select(['first_name'])
      .where('member_id', '=', m.id)
      .executeTakeFirstOrThrow();
    assert.equal(profile.first_name, 'Ada');
  });

  test('images are stored encrypted, typed by their bytes, and the operator reads them back', async () => {
    const m = await newMember();
    const t = await client.kyc.createSession({ onBehalfOf: m.id });
    assert.equal((await fillIn(t.hosted_url)).status, 200);
    const profile = await profileOf(m.id);
    const stored = await service.ctx.db
      .selectFrom('kyc_images')
      .selectAll()
      .where('member_id', '=', m.id)
      .orderBy('kind')
      .execute();
    assert.deepEqual(
      stored.map((i) => [i.kind, i.content_type, i.size_bytes]),
      [
        ['document', 'image/png', pngBytes.length],
        ['selfie', 'image/jpeg', jpegBytes.length],
      ],
    );
    for (const image of stored) {
      assert.equal(
        Buffer.from(image.ciphertext).includes(
          image.kind === 'document' ? pngBytes.subarray(0, 8) : Buffer.from('test-jpeg-body'),
        ),
        false,
      );
      assert.equal(Buffer.from(image.iv).length, 12);
    }
    const read = await admin(service, 'GET', `/admin/v1/kyc/images/${profile.document_image_id}`);
    assert.equal(read.status, 200);
    assert.deepEqual(Buffer.from(read.body.data_base64, 'base64'), pngBytes);
    assert.equal(read.body.content_type, 'image/png');
  });
});

describe('validation on the page', () => {
  test('errors are shown next to their fields, summarised at the top, with the entered values kept', async () => {
    const m = await newMember();
    const t = await client.kyc.createSession({ onBehalfOf: m.id });
    const big: FileInput = {
      name: 'selfie_image',
      filename: 'big.png',
      type: 'image/png',
      data: Buffer.concat([pngBytes, Buffer.alloc(5 * 1024 * 1024)]),
    };
    const notImage: FileInput = {
      name: 'document_image',
      filename: 'doc.png',
      type: 'image/png',
      data: Buffer.from('%PDF-1.7 not an image'),
    };
    const res = await fillIn(
      t.hosted_url,
      { ...validFields, first_name: '', birth_date: '2020-01-01', city: 'Berlin<script>' },
      [notImage, big],
    );
    assert.equal(res.status, 400);
    assertHostedHeaders(res.headers);
    assert.match(res.text, /<title>Error: Confirm your identity<\/title>/);
    assert.match(res.text, /class="error-summary" role="alert"/);
    assert.match(res.text, /<a href="#f-first_name">Enter your first name<\/a>/);
    assert.match(
      res.text,
      /id="f-first_name" name="first_name" aria-describedby="f-first_name-error" aria-invalid="true"/,
    );
    assert.match(res.text, /You must be at least 18 years old/);
    assert.match(res.text, /The photo of your document must be a JPEG or PNG image/);
    assert.match(res.text, /The photo of your face must be smaller than 5 MB/);
    // What was entered is kept, escaped.
    assert.match(res.text, /name="last_name"[^>]*value="O&#39;Neil-Lovelace"/);
    assert.match(res.text, /value="Berlin&lt;script&gt;"/);
    assert.match(res.text, /<option value="GB" selected>United Kingdom<\/option>/);
    assert.equal((await client.members.get(m.id)).kyc_profile_status, null);
    // The ticket is still open: the corrected form goes through.
    assert.equal((await fillIn(t.hosted_url)).status, 200);
    assert.equal((await client.members.get(m.id)).kyc_profile_status, 'pending_review');
  });
});

describe('tickets', () => {
  test('unknown ticket, or the page asked on another host: 404 without detail', async () => {
    const m = await newMember();
    const t = await client.kyc.createSession({ onBehalfOf: m.id });
    const unknown = await getHostedPage(service, t.hosted_url.replace(/kyc_[0-9a-f]{32}/, `kyc_${'0'.repeat(32)}`));
    assert.equal(unknown.status, 404);
    assertHostedHeaders(unknown.headers);
    const port = new URL(service.publicUrl).port;
    for (const host of [`api.localhost:${port}`, `127.0.0.1:${port}`, `other-sandbox.example:${port}`]) {
      const res = await getHostedPage(service, t.hosted_url, { host });
      assert.equal(res.status, 404, host);
      assert.doesNotMatch(/<main[\s\S]*<\/main>/.exec(res.text)![0], /expired|host|member|revoked/i);
    }
    assert.equal((await getHostedPage(service, t.hosted_url.replace(t.id, 'not-a-ticket'))).status, 404);
  });

  test("a ticket expires by the merchant's sandbox clock", async () => {
    const other = await newMerchantClient(service);
    const m = await other.client.members.create({ external_member_id: 'clock-1' });
    const t = await other.client.kyc.createSession({ onBehalfOf: m.id });
    assert.equal((await getHostedPage(service, t.hosted_url)).status, 200);
    await other.client.sandbox.advanceClock(24 * 3600 - 60);
    assert.equal((await getHostedPage(service, t.hosted_url)).status, 200, 'a minute before expiry');
    await other.client.sandbox.advanceClock(61);
    const gone = await getHostedPage(service, t.hosted_url);
    assert.equal(gone.status, 410);
    assertHostedHeaders(gone.headers);
    await assert.rejects(other.client.hostedScreens.sandboxComplete(t.id, 'submitted'), {
      status: 400,
      code: 'state_invalid',
    });
    // A ticket issued now runs on the moved clock: 24 hours from the merchant's time.
    const fresh = await other.client.kyc.createSession({ onBehalfOf: m.id });
    assert.ok(fresh.expires_at > t.expires_at + 86_000);
    assert.equal((await getHostedPage(service, fresh.hosted_url)).status, 200);
  });

  test("sessions/revoke voids the member's open tickets", async () => {
    const m = await newMember();
    const t = await client.kyc.createSession({ onBehalfOf: m.id });
    const page = await getHostedPage(service, t.hosted_url);
    await client.members.revokeSessions(m.external_member_id);
    assert.equal((await getHostedPage(service, t.hosted_url)).status, 410);
    const post = await submitPage(t.hosted_url, page);
    assert.equal(post.status, 410);
    assert.equal((await client.members.get(m.id)).kyc_profile_status, null);
    // A new ticket works.
    assert.equal((await fillIn((await client.kyc.createSession({ onBehalfOf: m.id })).hosted_url)).status, 200);
  });

  test(
    'sessions/revoke is idempotent: a replay with the same key voids nothing more; the key on another member ' +
      'is 409; no key is 400',
    async () => {
      const m = await newMember();
      const key = randomUUID();
      const revoke = (ext: string, idempotencyKey: string | false = key) =>
        client.requestRaw({
          method: 'POST',
          path: `/v1/members/${encodeURIComponent(ext)}/sessions/revoke`,
          idempotencyKey,
        });
      const first = await revoke(m.external_member_id);
      assert.deepEqual([first.status, first.body], [200, { id: m.external_member_id, revoked: true }]);
      // A link issued after the revocation is not voided by a replay of it (nothing runs twice).
      await client.sandbox.advanceClock(1);
      const t = await client.kyc.createSession({ onBehalfOf: m.id });
      const replay = await revoke(m.external_member_id);
      assert.deepEqual([replay.status, replay.body, replay.headers['x-idempotent-replay']], [200, first.body, 'true']);
      assert.equal((await getHostedPage(service, t.hosted_url)).status, 200, 'the later link still opens');
      const other = await newMember();
      const reused = await revoke(other.external_member_id);
      assert.deepEqual([reused.status, reused.body.code], [409, 'idempotency_key_reused']);
      const keyless = await revoke(m.external_member_id, false);
      assert.deepEqual([keyless.status, keyless.body.code], [400, 'idempotency_key_required']);
      // A new key revokes again.
      assert.equal((await revoke(m.external_member_id, randomUUID())).status, 200);
      assert.equal((await getHostedPage(service, t.hosted_url)).status, 410);
    },
  );

  test('a ticket is bound to its member and merchant', async () => {
    const a = await newMember();
    const b = await newMember();
    for (const m of [a, b])
      await client.hostedScreens.sandboxComplete(
        (await client.kyc.createSession({ onBehalfOf: m.id })).id,
        'submitted',
      );
    // B's update ticket changes B's profile only, whoever opens it.
    const tb = await client.kyc.createProfileSession({ onBehalfOf: b.id });
    assert.equal((await fillIn(tb.hosted_url, { ...validFields, first_name: 'Bea' }, [])).status, 200);
    const names = await service.ctx.db
      .selectFrom('kyc_profiles')
      .select(['member_id', 'first_name'])
      .where('member_id', 'in', [a.id, b.id])
      .execute();
    assert.deepEqual(Object.fromEntries(names.map((n) => [n.member_id, n.first_name])), {
      [a.id]: 'Sandbox',
      [b.id]: 'Bea',
    });
    // Another merchant cannot complete (or see) this merchant's ticket.
    const other = await newMerchantClient(service);
    const ta = await client.kyc.createProfileSession({ onBehalfOf: a.id });
    await assert.rejects(other.client.hostedScreens.sandboxComplete(ta.id, 'submitted'), {
      status: 404,
      code: 'not_found',
    });
    // A suspended member's ticket no longer opens.
    await client.members.suspend(a.id);
    assert.equal((await getHostedPage(service, ta.hosted_url)).status, 410);
  });
});

describe('CSRF and headers', () => {
  test("a POST without the cookie, with another ticket's token, or with a forged token is refused", async () => {
    const m = await newMember();
    const t1 = await client.kyc.createSession({ onBehalfOf: m.id });
    const t2 = await client.kyc.createSession({ onBehalfOf: m.id });
    const p1 = await getHostedPage(service, t1.hosted_url);
    const p2 = await getHostedPage(service, t2.hosted_url, { cookie: p1.cookie });
    assert.equal(p2.headers['set-cookie'], undefined, 'the cookie is reused');
    assert.notEqual(p1.csrfToken, p2.csrfToken, 'the token is bound to the ticket');
    const attempts = [
      { fields: { ...validFields, csrf_token: p1.csrfToken! } },
      { fields: { ...validFields }, cookie: p1.cookie },
      { fields: { ...validFields, csrf_token: p2.csrfToken! }, cookie: p1.cookie },
      { fields: { ...validFields, csrf_token: 'A'.repeat(43) }, cookie: p1.cookie },
      { fields: { ...validFields, csrf_token: p1.csrfToken! }, cookie: `mwa_hosted_csrf=${'B'.repeat(43)}` },
    ];
    for (const a of attempts) {
      const res = await postHostedPage(service, t1.hosted_url, { ...a, files: validFiles });
      assert.equal(res.status, 403);
      assertHostedHeaders(res.headers);
      assert.match(res.text, /The form could not be sent/);
    }
    assert.equal((await client.members.get(m.id)).kyc_profile_status, null);
    const ok = await submitPage(t1.hosted_url, p1);
    assert.equal(ok.status, 200);
  });

  test('the stylesheet and refusals carry the headers; a body that is not a form is a plain 400 page', async () => {
    const css = await getHostedPage(service, `${service.publicUrl}/hosted/assets/screen.css`);
    assert.equal(css.status, 200);
    assert.match(String(css.headers['content-type']), /^text\/css/);
    assertHostedHeaders(css.headers);
    const m = await newMember();
    const t = await client.kyc.createSession({ onBehalfOf: m.id });
    const page = await getHostedPage(service, t.hosted_url);
    const { rawRequest } = await import('./support/raw-http.js');
    const u = new URL(t.hosted_url);
    const json = await rawRequest(`${service.publicUrl}${u.pathname}`, {
      method: 'POST',
      headers: { host: u.host, cookie: page.cookie!, 'content-type': 'application/json' },
      body: '{"csrf_token":"x"}',
    });
    assert.equal(json.status, 400);
    assert.match(String(json.headers['content-type']), /^text\/html/);
    assertHostedHeaders(json.headers);
  });

  test("frame-ancestors come from the merchant's list; origins are validated", async () => {
    const other = await newMerchantClient(service);
    assert.deepEqual((await other.client.hostedScreens.getSettings()).frame_ancestors, []);
    await assert.rejects(
      other.client.hostedScreens.putSettings({
        frame_ancestors: ['https://shop.example', 'https://shop.example/path', '*', 'http://shop.example'],
      }),
      (err: any) => {
        assert.equal(err.code, 'invalid_fields');
        assert.deepEqual(
          err.body.fields.map((f: any) => f.key),
          ['frame_ancestors[1]', 'frame_ancestors[2]', 'frame_ancestors[3]'],
        );
        return true;
      },
    );
    const set = await other.client.hostedScreens.putSettings({
      frame_ancestors: ['https://Shop.Example:443', 'https://*.shop.example', 'http://localhost:3000'],
    });
    assert.deepEqual(set.frame_ancestors, ['https://shop.example', 'https://*.shop.example', 'http://localhost:3000']);
    const m = await other.client.members.create({ external_member_id: 'framed' });
    const t = await other.client.kyc.createSession({ onBehalfOf: m.id });
    const page = await getHostedPage(service, t.hosted_url);
    assertHostedHeaders(page.headers, 'https://shop.example https://*.shop.example http://localhost:3000');
    assert.equal(page.headers['x-frame-options'], undefined);
    // The operator sets the production list (https only there).
    const prod = await admin(service, 'PUT', `/admin/v1/merchants/${other.merchantId}/hosted-screens`, {
      environment: 'production',
      frame_ancestors: ['http://localhost:3000'],
    });
    assert.equal(prod.status, 400);
    assert.equal(prod.body.code, 'invalid_fields');
    const ok = await admin(service, 'PUT', `/admin/v1/merchants/${other.merchantId}/hosted-screens`, {
      environment: 'production',
      frame_ancestors: ['https://shop.example'],
    });
    assert.deepEqual(ok.body, {
      merchant_id: other.merchantId,
      environment: 'production',
      frame_ancestors: ['https://shop.example'],
    });
  });
});

describe('reviews and levels', () => {
  test(
    'sandbox review through the simulated provider: approve, ' + 'then a profile update drops the level to 0',
    async () => {
      const m = await newMember();
      await assert.rejects(client.kyc.sandboxReview(m.id, { decision: 'approved' }), {
        status: 404,
        code: 'not_found',
      });
      const t = await client.kyc.createSession({ onBehalfOf: m.id });
      const completed = await client.hostedScreens.sandboxComplete(t.id, 'submitted');
      assert.equal(completed.status, 'completed');
      assert.equal(completed.purpose, 'kyc');
      const approved = await client.kyc.sandboxReview(m.external_member_id, { decision: 'approved' });
      assert.equal(approved.status, 'approved');
      assert.equal(approved.kyc_level, 1);
      await assert.rejects(client.kyc.sandboxReview(m.id, { decision: 'approved' }), {
        status: 400,
        code: 'state_invalid',
      });
      // The profile a kyc.profile.* event names, read by its data.id alone: status and level, no personal data.
      const event = await service.ctx.db
        .selectFrom('events')
        .select(['object_id', 'status'])
        .where('type', '=', 'kyc.profile.approved')
        .where('object_id', '=', approved.id)
        .executeTakeFirstOrThrow();
      const read = await client.kyc.getProfile(event.object_id);
      assert.deepEqual(read, {
        id: approved.id,
        member_id: m.id,
        status: 'approved',
        status_version: approved.status_version,
        kyc_level: 1,
      });
      assert.deepEqual(
        await client.kyc.getProfile(approved.id.slice(4), { onBehalfOf: m.external_member_id }),
        read,
        'on behalf of its member, prefix optional',
      );
      await assert.rejects(client.kyc.getProfile(approved.id, { onBehalfOf: (await newMember()).id }), {
        status: 404,
        code: 'not_found',
      });
      await assert.rejects((await newMerchantClient(service)).client.kyc.getProfile(approved.id), {
        status: 404,
        code: 'not_found',
      });
      let member = await client.members.get(m.id);
      assert.equal(member.kyc_level, 1);
      assert.equal(member.kyc_profile_status, 'approved');

      // The update screen is pre-filled; images not sent again are kept.
      const u = await client.kyc.createProfileSession({ onBehalfOf: m.id });
      const page = await getHostedPage(service, u.hosted_url);
      assert.match(page.text, /name="first_name"[^>]*value="Sandbox"/);
      assert.match(page.text, /A photo is on record/);
      const before = await profileOf(m.id);
      const res = await submitPage(u.hosted_url, page, validFields, [validFiles[1]!]);
      assert.equal(res.status, 200, res.text);
      const afterUpdate = await profileOf(m.id);
      assert.equal(afterUpdate.document_image_id, before.document_image_id, 'document kept');
      assert.notEqual(afterUpdate.selfie_image_id, before.selfie_image_id, 'selfie replaced');
      assert.equal(
        await service.ctx.db
          .selectFrom('kyc_images')
          .select('id')
          .where('id', '=', before.selfie_image_id)
          .executeTakeFirst(),
        undefined,
        'the old selfie is deleted',
      );
      member = await client.members.get(m.id);
      assert.equal(member.kyc_profile_status, 'pending_review');
      assert.equal(member.kyc_level, 0);
      assert.deepEqual(
        (await eventsOf(before.id)).map((e) => [e.type, e.status_version]),
        [
          ['kyc.profile.pending_review', 1],
          ['kyc.profile.approved', 2],
          ['kyc.profile.pending_review', 3],
        ],
      );

      // Level 2 falls to 0 as well; re-review grants what the reviewer gives.
      const level2 = await client.kyc.sandboxReview(m.id, { decision: 'approved', level: 2 });
      assert.equal(level2.kyc_level, 2);
      await client.hostedScreens.sandboxComplete(
        (await client.kyc.createProfileSession({ onBehalfOf: m.id })).id,
        'submitted',
      );
      member = await client.members.get(m.id);
      assert.deepEqual([member.kyc_level, member.kyc_profile_status], [0, 'pending_review']);
      const rejected = await client.kyc.sandboxReview(m.id, { decision: 'rejected', reason: 'blurred document' });
      assert.deepEqual([rejected.status, rejected.kyc_level], ['rejected', 0]);
      // A rejected profile can be updated too (any status goes back to review).
      await client.hostedScreens.sandboxComplete(
        (await client.kyc.createProfileSession({ onBehalfOf: m.id })).id,
        'submitted',
      );
      assert.equal((await client.members.get(m.id)).kyc_profile_status, 'pending_review');
    },
  );

  test(
    'a profile update stops the businesses level 1 opens (card issuing, ' + 'exchange) until the re-review passes',
    async () => {
      const m = await newMember();
      await client.hostedScreens.sandboxComplete(
        (await client.kyc.createSession({ onBehalfOf: m.id })).id,
        'submitted',
      );
      await client.kyc.sandboxReview(m.id, { decision: 'approved' });
      const virtual = (await client.cards.products()).find((p) => p.form_factor === 'virtual')!;
      // The member holds nothing: past the KYC gate a call is refused for its balance, never for its level.
      const gate = async () => {
        const apply = await client.requestRaw({
          method: 'POST',
          path: '/v1/cards/applications',
          body: { product_id: virtual.id, source_asset: 'USDT' },
          onBehalfOf: m.id,
        });
        const exchange = await client.requestRaw({
          method: 'POST',
          path: '/v1/exchange/orders',
          body: { from_asset: 'USDT', to_asset: 'EUR', from_amount: '10' },
          onBehalfOf: m.id,
        });
        for (const res of [apply, exchange]) {
          if (res.body.code === 'kyc_required')
            assert.deepEqual(
              Object.keys(res.body).sort(),
              ['code', 'message', 'request_id', 'type'],
              'kyc_required carries no level',
            );
        }
        return [apply.body.code, exchange.body.code];
      };
      const opened = await gate();
      assert.ok(!opened.includes('kyc_required'), JSON.stringify(opened));
      const update = await client.kyc.createProfileSession({ onBehalfOf: m.id });
      await client.hostedScreens.sandboxComplete(update.id, 'submitted');
      await assert.rejects(
        client.hostedScreens.sandboxComplete(update.id, 'submitted'),
        { status: 400, code: 'state_invalid' },
        'the update link is single use',
      );
      assert.equal((await getHostedPage(service, update.hosted_url)).status, 410);
      assert.deepEqual(await gate(), ['kyc_required', 'kyc_required']);
      await client.kyc.sandboxReview(m.id, { decision: 'approved' });
      assert.deepEqual(await gate(), opened);
    },
  );

  test(
    'operator review: the queue, approve with a level, reject with a reason, ' + 'the member review of extensions 2',
    async () => {
      const other = await newMerchantClient(service);
      const members = [];
      for (let i = 0; i < 3; i++) {
        const m = await other.client.members.create({ external_member_id: `q-${i}` });
        await other.client.hostedScreens.sandboxComplete(
          (await other.client.kyc.createSession({ onBehalfOf: m.id })).id,
          'submitted',
        );
        members.push(m);
      }
      const queue = async (cursor?: string) =>
        (
          await admin(
            service,
            'GET',
            `/admin/v1/kyc/profiles?environment=sandbox&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
          )
        ).body;
      const waiting = (await queue()).data.filter((p: any) => p.merchant_id === other.merchantId);
      assert.deepEqual(
        waiting.map((p: any) => p.member_id),
        members.map((m) => m.id),
        'oldest first',
      );
      assert.equal(waiting[0].status, 'pending_review');
      assert.equal(waiting[0].first_name, 'Sandbox');
      assert.match(waiting[0].created_at, /^\d{4}-\d\d-\d\dT.*Z$/, 'when the profile was made');
      assert.match(waiting[0].updated_at, /^\d{4}-\d\d-\d\dT.*Z$/);

      const approved = await admin(service, 'POST', `/admin/v1/kyc/profiles/${waiting[0].id}/review`, {
        decision: 'approved',
        level: 2,
      });
      assert.equal(approved.status, 200);
      assert.deepEqual(
        [approved.body.status, approved.body.granted_level, approved.body.review_source],
        ['approved', 2, 'operator'],
      );
      assert.ok(
        Date.parse(approved.body.updated_at) >= Date.parse(waiting[0].updated_at),
        'the review updated the profile',
      );
      assert.equal((await other.client.members.get(members[0]!.id)).kyc_level, 2);
      const rejected = await admin(service, 'POST', `/admin/v1/kyc/profiles/${waiting[1].id}/review`, {
        decision: 'rejected',
        reason: 'document expired',
      });
      assert.deepEqual([rejected.body.status, rejected.body.rejection_reason], ['rejected', 'document expired']);
      const viaMember = await admin(service, 'POST', `/admin/v1/members/${members[2]!.id}/kyc-review`, {
        decision: 'approved',
      });
      assert.deepEqual(viaMember.body, { id: members[2]!.id, kyc_level: 1 });
      assert.equal((await other.client.members.get(members[2]!.id)).kyc_profile_status, 'approved');
      assert.equal((await queue()).data.filter((p: any) => p.merchant_id === other.merchantId).length, 0);
      assert.deepEqual(
        (await eventsOf(waiting[1].id)).map((e) => e.type),
        ['kyc.profile.pending_review', 'kyc.profile.rejected'],
      );
      // The event says nothing but ids and status.
      const evt = await service.ctx.db
        .selectFrom('events')
        .selectAll()
        .where('object_id', '=', waiting[1].id)
        .orderBy('seq', 'desc')
        .executeTakeFirstOrThrow();
      assert.equal(
        JSON.stringify(evt, (_k, v) => (typeof v === 'bigint' ? String(v) : v)).includes('document expired'),
        false,
      );

      // A member without a profile: the level is set directly and no profile appears.
      const plain = await other.client.members.create({ external_member_id: 'no-profile' });
      assert.deepEqual(
        (await admin(service, 'POST', `/admin/v1/members/${plain.id}/kyc-review`, { decision: 'approved', level: 2 }))
          .body,
        { id: plain.id, kyc_level: 2 },
      );
      assert.equal((await other.client.members.get(plain.id)).kyc_profile_status, null);
      await other.client.kyc.createSession({ onBehalfOf: plain.id });
      assert.equal(
        (await admin(service, 'POST', '/admin/v1/kyc/profiles/kyp_missing/review', { decision: 'approved' })).status,
        404,
      );
    },
  );

  test('the provider check job applies a decided verdict and ignores a stale one', async () => {
    const { kycCheckJob } = await import('../src/modules/kyc/workers.js');
    const { profile } = await submittedMember();
    const job = checkJob(profile.id);
    await assert.rejects(
      kycCheckJob(job, service.ctx),
      (err: any) => err.constructor.name === 'RetryLater' && err.delayMs === 60_000,
    );
    const call = { merchantId, environment: 'sandbox' as const };
    assert.equal(
      await service.ctx.upstreams.kyc.sandboxDecide!(call, `${profile.id}:1`, { decision: 'approved', level: 2 }),
      true,
    );
    await kycCheckJob(job, service.ctx);
    const after = await profileById(profile.id);
    assert.deepEqual([after.status, after.granted_level, after.review_source], ['approved', 2, 'provider']);
    assert.match(after.provider_ref ?? '', /^KY[0-9A-F]{16}$/);
    // A verdict on an older submission changes nothing.
    await kycCheckJob(job, service.ctx);
    assert.equal((await eventsOf(profile.id)).length, 2);
  });
});

describe("the provider's outcome-unknown answers", () => {
  test(
    'a timeout or 5xx from the KYC provider changes nothing (no rejection, no level, no event); the check ' +
      'polls again and applies the verdict later',
    async () => {
      const { kycCheckJob } = await import('../src/modules/kyc/workers.js');
      const kyc = service.ctx.upstreams.kyc;
      const { m, profile } = await submittedMember();
      const job = checkJob(profile.id);
      const call = { merchantId, environment: 'sandbox' as const };
      await kyc.submit(call, { requestId: `${profile.id}:1`, memberRef: m.external_member_id } as any);
      assert.equal(await kyc.sandboxDecide!(call, `${profile.id}:1`, { decision: 'rejected', reason: 'x' }), true);
      const unchanged = async () => {
        const row = await profileById(profile.id);
        assert.deepEqual([row.status, row.status_version], ['pending_review', 1]);
        assert.equal((await client.members.get(m.id)).kyc_level, 0);
        assert.deepEqual(
          (await eventsOf(profile.id)).map((e) => e.type),
          ['kyc.profile.pending_review'],
        );
      };
      const answers: { submit?: { kind: string; reason?: string }; verdict?: { kind: string; reason?: string } }[] = [
        { submit: { kind: 'timeout' } },
        { submit: { kind: 'unknown', reason: 'HTTP 503' } },
        { verdict: { kind: 'timeout' } },
        { verdict: { kind: 'unknown', reason: 'HTTP 500' } },
      ];
      const realSubmit = kyc.submit;
      const realVerdict = kyc.verdict;
      try {
        for (const answer of answers) {
          (kyc as any).submit = answer.submit ? async () => answer.submit : realSubmit;
          (kyc as any).verdict = answer.verdict ? async () => answer.verdict : realVerdict;
          await assert.rejects(
            kycCheckJob(job, service.ctx),
            (err: any) => err.constructor.name === 'RetryLater',
            JSON.stringify(answer),
          );
          await unchanged();
          // The sandbox reviewer's call meets the same answer: a timeout is 504 upstream_timeout, a 5xx 502
          // upstream_error; the state kept.
          const timedOut = (answer.submit ?? answer.verdict)!.kind === 'timeout';
          await assert.rejects(
            client.kyc.sandboxReview(m.id, { decision: 'approved' }),
            timedOut ? { status: 504, code: 'upstream_timeout' } : { status: 502, code: 'upstream_error' },
          );
          await unchanged();
        }
      } finally {
        (kyc as any).submit = realSubmit;
        (kyc as any).verdict = realVerdict;
      }
      // The provider answers again: its verdict (recorded before the faults) is applied once.
      await kycCheckJob(job, service.ctx);
      const after = await profileById(profile.id);
      assert.deepEqual([after.status, after.review_source], ['rejected', 'provider']);
    },
  );

  test(
    'sandbox review after a lost answer: another verdict is state_invalid (nothing applied), the same one is ' +
      'applied once',
    async () => {
      const kyc = service.ctx.upstreams.kyc;
      const { m, profile } = await submittedMember();
      const realVerdict = kyc.verdict;
      (kyc as any).verdict = async () => ({ kind: 'timeout' });
      try {
        // The reviewer's decision reaches the provider; reading it back times out.
        await assert.rejects(client.kyc.sandboxReview(m.id, { decision: 'approved', level: 2 }), {
          status: 504,
          code: 'upstream_timeout',
        });
      } finally {
        (kyc as any).verdict = realVerdict;
      }
      const pending = async () => {
        const row = await profileById(profile.id);
        assert.deepEqual([row.status, row.status_version], ['pending_review', 1]);
        assert.equal((await client.members.get(m.id)).kyc_level, 0);
      };
      await assert.rejects(client.kyc.sandboxReview(m.id, { decision: 'rejected' }), {
        status: 400,
        code: 'state_invalid',
      });
      await assert.rejects(
        client.kyc.sandboxReview(m.id, { decision: 'approved' }),
        { status: 400, code: 'state_invalid' },
        'level 1 is not the level 2 decided',
      );
      await pending();
      const applied = await client.kyc.sandboxReview(m.id, { decision: 'approved', level: 2 });
      assert.equal(applied.status, 'approved');
      assert.equal((await client.members.get(m.id)).kyc_level, 2);
      assert.deepEqual(
        (await eventsOf(profile.id)).map((e) => e.type),
        ['kyc.profile.pending_review', 'kyc.profile.approved'],
      );
    },
  );
});

describe('requirements', () => {
  test('defaults per business, either principal, kyc:write; the operator changes them', async () => {
    const m = await newMember();
    const expected = [
      { business: 'card_issuing', min_kyc_level: 1 },
      { business: 'remittance', min_kyc_level: 1 },
      { business: 'exchange', min_kyc_level: 1 },
      { business: 'high_value_transfer', min_kyc_level: 2 },
    ];
    assert.deepEqual(await client.kyc.requirements(), expected);
    assert.deepEqual(await client.kyc.requirements({ onBehalfOf: m.id }), expected);
    const raw: any = await client.request({ method: 'GET', path: '/v1/kyc/requirements' });
    assert.deepEqual([raw.next_cursor, raw.has_more], [null, false]);
    const narrow = await keyClient(service, merchantId, { scopes: ['members:write'] });
    await assert.rejects(narrow.kyc.requirements(), { status: 403, code: 'insufficient_scope' });

    const put = await admin(service, 'PUT', '/admin/v1/kyc/requirements/exchange', {
      environment: 'sandbox',
      min_kyc_level: 2,
    });
    assert.deepEqual(put.body, { business: 'exchange', min_kyc_level: 2 });
    assert.equal((await client.kyc.requirements()).find((r) => r.business === 'exchange')!.min_kyc_level, 2);
    const prod = await admin(service, 'GET', '/admin/v1/kyc/requirements?environment=production');
    assert.equal(prod.body.data.find((r: any) => r.business === 'exchange').min_kyc_level, 1, 'per environment');
    await admin(service, 'PUT', '/admin/v1/kyc/requirements/exchange', { environment: 'sandbox', min_kyc_level: 1 });
    assert.equal(
      (await admin(service, 'PUT', '/admin/v1/kyc/requirements/exchange', { environment: 'sandbox', min_kyc_level: 3 }))
        .status,
      400,
    );
  });
});

describe('sandbox helpers', () => {
  test('outcomes by screen, idempotent replays, 404 on production', async () => {
    const m = await newMember();
    const t = await client.kyc.createSession({ onBehalfOf: m.id });
    await assert.rejects(client.hostedScreens.sandboxComplete(t.id, 'approved'), {
      status: 400,
      code: 'invalid_request',
    });
    const key = crypto.randomUUID();
    const first = await client.hostedScreens.sandboxComplete(t.id, 'submitted', { idempotencyKey: key });
    const replay = await client.hostedScreens.sandboxComplete(t.id, 'submitted', { idempotencyKey: key });
    assert.deepEqual(replay, first);
    await assert.rejects(client.hostedScreens.sandboxComplete(`kyc_${'f'.repeat(32)}`, 'submitted'), {
      status: 404,
      code: 'not_found',
    });

    const prod = await createKey(service, merchantId, { environment: 'production' });
    const prodClient = clientFor(service, prod);
    await assert.rejects(prodClient.hostedScreens.sandboxComplete(t.id, 'submitted'), {
      status: 404,
      code: 'not_found',
    });
    await assert.rejects(prodClient.kyc.sandboxReview(m.id, { decision: 'approved' }), {
      status: 404,
      code: 'not_found',
    });
  });
});

describe('pure rules', () => {
  test('frame-ancestor origins', async () => {
    const { normaliseFrameAncestor, contentSecurityPolicy } =
      await import('../src/modules/hosted-screens/security-headers.js');
    const ok = (v: string, env: 'sandbox' | 'production' = 'production') => {
      const r = normaliseFrameAncestor(v, env);
      return 'origin' in r ? r.origin : r.problem;
    };
    assert.equal(ok('https://Shop.Example.com:443'), 'https://shop.example.com');
    assert.equal(ok('https://shop.example.com:8443'), 'https://shop.example.com:8443');
    assert.equal(ok('https://*.example.com'), 'https://*.example.com');
    assert.equal(ok('http://localhost:3000', 'sandbox'), 'http://localhost:3000');
    assert.equal(ok('http://app.localhost', 'sandbox'), 'http://app.localhost');
    for (const bad of [
      '*',
      'https://*',
      'https://example.com/',
      'https://example.com/path',
      'https://user@example.com',
      "'self'",
      'javascript:alert(1)',
      'https://exa mple.com',
      'https://example.com:0',
      'https://example.com:99999',
      'https://*.*.example.com',
      'https://example.com; script-src *',
    ]) {
      assert.equal(ok(bad), 'not_an_origin', bad);
    }
    assert.equal(ok('http://shop.example.com', 'sandbox'), 'https_required');
    assert.equal(ok('http://localhost:3000'), 'https_required', 'production takes https only');
    assert.equal(contentSecurityPolicy([]).endsWith("frame-ancestors 'none'"), true);
  });

  test('CSRF tokens are bound to the key, the ticket and the cookie', async () => {
    const { csrfToken, verifyCsrf, newCsrfCookieValue, csrfSetCookie, cookieFrom } =
      await import('../src/modules/hosted-screens/csrf.js');
    const key = Buffer.alloc(32, 1);
    const cookie = newCsrfCookieValue();
    const token = csrfToken(key, 'kyc_a', cookie);
    assert.equal(verifyCsrf(key, 'kyc_a', cookie, token), true);
    assert.equal(verifyCsrf(key, 'kyc_b', cookie, token), false);
    assert.equal(verifyCsrf(Buffer.alloc(32, 2), 'kyc_a', cookie, token), false);
    assert.equal(verifyCsrf(key, 'kyc_a', newCsrfCookieValue(), token), false);
    assert.equal(verifyCsrf(key, 'kyc_a', undefined, token), false);
    assert.equal(verifyCsrf(key, 'kyc_a', cookie, undefined), false);
    assert.equal(cookieFrom(`a=1; mwa_hosted_csrf=${cookie}; b=2`, 'mwa_hosted_csrf'), cookie);
    assert.match(
      csrfSetCookie(cookie, { secure: true, embeddable: true }),
      /; HttpOnly; Secure; SameSite=None; Partitioned$/,
    );
    assert.match(csrfSetCookie(cookie, { secure: true, embeddable: false }), /; HttpOnly; Secure; SameSite=Strict$/);
    assert.match(csrfSetCookie(cookie, { secure: false, embeddable: true }), /; HttpOnly; SameSite=Strict$/);
  });

  test('form validation, image signatures, levels and the profile state machine', async () => {
    const rules = await import('../src/modules/kyc/rules.js');
    const { transition } = await import('../src/modules/kyc/state.js');
    const today = new Date('2026-11-23T10:00:00Z');
    assert.equal(rules.ageInYears('2008-11-23', today), 18);
    assert.equal(rules.ageInYears('2008-11-24', today), 17);
    assert.equal(rules.ageInYears('2001-02-29', today), undefined);
    assert.deepEqual(rules.validateProfileFields(rules.normaliseProfileFields(validFields), today), []);
    const problems = rules.validateProfileFields(
      rules.normaliseProfileFields({
        ...validFields,
        nationality: 'XX',
        document_type: 'ticket',
        postal_code: '1'.repeat(21),
        first_name: 'R2D2',
      }),
      today,
    );
    assert.deepEqual(
      problems.map((p) => p.field),
      ['first_name', 'nationality', 'document_type', 'postal_code'],
    );
    assert.equal(rules.sniffImageType(pngBytes), 'image/png');
    assert.equal(rules.sniffImageType(jpegBytes), 'image/jpeg');
    assert.equal(rules.sniffImageType(Buffer.from('GIF89a')), undefined);
    assert.equal(rules.validateImage('selfie_image', undefined, false, 5), undefined);
    assert.equal(
      rules.validateImage('selfie_image', { data: Buffer.alloc(0), tooLarge: true }, true, 5)?.message,
      'The photo of your face must be smaller than 5 MB',
    );
    assert.equal(rules.levelAfterUpdate(1), 0);
    assert.equal(rules.levelAfterUpdate(2), 0);
    assert.equal(rules.levelOnApproval(undefined), 1);
    for (const status of ['pending_review', 'approved', 'rejected'] as const) {
      assert.deepEqual(transition({ status, submissions: 2 }, { kind: 'submit_update' }), { move: 'pending_review' });
      assert.deepEqual(transition({ status, submissions: 2 }, { kind: 'operator_review', decision: 'rejected' }), {
        move: 'rejected',
      });
    }
    // The provider's verdict: (status, submissions, decision, the submission it is on) and what it does.
    const verdicts = [
      ['pending_review', 2, 'approved', 2, { move: 'approved' }],
      ['pending_review', 3, 'approved', 2, { ignore: 'stale_verdict' }],
      ['approved', 2, 'rejected', 2, { ignore: 'stale_verdict' }],
    ] as const;
    for (const [status, submissions, decision, submission, outcome] of verdicts) {
      const verdict = { kind: 'provider_verdict', decision, submission } as const;
      assert.deepEqual(transition({ status, submissions }, verdict), outcome);
    }
  });

  test('images: sealed with the derived key, bound to their row; HOSTED_SCREEN_KEY is validated', async () => {
    const { sealImage, openImage } = await import('../src/modules/kyc/images.js');
    const { deriveKey, parseHostedScreenKey } = await import('../src/platform/auth/keys.js');
    const { loadConfig, ConfigError } = await import('../src/platform/config/config.js');
    const key = deriveKey(testHostedScreenKey, 'kyc/images/v1');
    assert.notDeepEqual(key, deriveKey(testHostedScreenKey, 'hosted-screens/csrf/v1'));
    const binding = { imageId: 'kyi_1', memberId: 'mem_1', kind: 'document' as const };
    const sealed = sealImage(key, binding, pngBytes);
    assert.deepEqual(openImage(key, binding, sealed), pngBytes);
    assert.throws(() => openImage(key, { ...binding, memberId: 'mem_2' }, sealed));
    assert.throws(() => openImage(deriveKey(Buffer.alloc(32, 9), 'kyc/images/v1'), binding, sealed));
    const hex = testHostedScreenKey.toString('hex');
    assert.deepEqual(parseHostedScreenKey(hex), testHostedScreenKey);
    assert.deepEqual(parseHostedScreenKey(testHostedScreenKey.toString('base64')), testHostedScreenKey);
    assert.deepEqual(parseHostedScreenKey(testHostedScreenKey.toString('base64url')), testHostedScreenKey);
    assert.equal(parseHostedScreenKey('too-short'), undefined);
    assert.deepEqual(loadConfig({ HOSTED_SCREEN_KEY: hex }).hostedScreenKey, testHostedScreenKey);
    assert.equal(loadConfig({}).hostedScreenKey, undefined);
    assert.throws(
      () => loadConfig({ HOSTED_SCREEN_KEY: 'abc' }),
      (err: unknown) =>
        err instanceof ConfigError &&
        /HOSTED_SCREEN_KEY must be 32 random bytes/.test(err.message) &&
        !/abc/.test(err.message),
    );
  });
});

// The embedded database has one connection: its transactions never overlap, so lock order shows only on PostgreSQL.
test(
  "lock order (PostgreSQL only): the operator's profile review takes the member first, as a submission does, " +
    'so the two cannot deadlock',
  {
    skip: postgresOnly('the embedded database runs one transaction at a time'),
  },
  async () => {
    const m = await newMember();
    await client.hostedScreens.sandboxComplete((await client.kyc.createSession({ onBehalfOf: m.id })).id, 'submitted');
    const profile = await service.ctx.db
      .selectFrom('kyc_profiles')
      .select('id')
      .where('member_id', '=', m.id)
      .executeTakeFirstOrThrow();
    // A submission of the member holds its row (as submitProfileUpdate does, first of its locks).
    const { default: pg } = await import('pg');
    const holder = new pg.Client({ connectionString: service.ctx.config.databaseUrl });
    const prober = new pg.Client({ connectionString: service.ctx.config.databaseUrl });
    await Promise.all([holder.connect(), prober.connect()]);
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM members WHERE id = $1 FOR UPDATE', [m.id]);
      const review = admin(service, 'POST', `/admin/v1/kyc/profiles/${profile.id}/review`, { decision: 'approved' });
      await new Promise((r) => setTimeout(r, 300));
      // The review waits for the member without holding the profile: the submission could go on and take it.
      await prober.query('BEGIN');
      const probe = await prober.query('SELECT 1 FROM kyc_profiles WHERE id = $1 FOR UPDATE NOWAIT', [profile.id]).then(
        () => 'free',
        (err: { code?: string }) => err.code,
      );
      await prober.query('ROLLBACK');
      assert.equal(
        probe,
        'free',
        'the profile was locked by a review still waiting for its member (55P03: the order that deadlocks)',
      );
      await holder.query('COMMIT');
      assert.equal((await review).status, 200);
    } finally {
      await holder.end();
      await prober.end();
    }
  },
);
