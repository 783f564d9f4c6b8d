import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, scryptSync } from 'node:crypto';
import { sql } from 'kysely';
import type { RunningService } from '../src/server.js';
import { admin, createKey, createMerchant, useTestService } from './support/service.js';
import { rowById } from './support/fixtures.js';
import { testHostedScreenKey } from './support/hosted.js';
import {
  consoleClient,
  consolePassword,
  type ConsoleBrowser,
  consoleUserWithPassword,
  inviteConsoleUser,
  signedInConsole,
  authenticatorSecret,
} from './support/console.js';
import { stepAt, totpCode } from '../src/console/totp.js';
import { consoleCleanupTicker } from '../src/console/workers.js';

/**
 * The merchant console over HTTP: invites, sign-in, CSRF, session timeouts, the sign-in throttle,
 * roles checked on the server, secure cookies and headers. Page flows in a browser:
 * console-browser.test.ts.
 */

let service: RunningService;
let merchantId: string;

// The loopback is a trusted proxy: a test browser can appear from another address (x-forwarded-for).
useTestService(
  { config: { hostedScreenKey: testHostedScreenKey, trustedProxies: ['127.0.0.1'] }, merchant: false },
  (s) => ({ service } = s),
);
before(async () => {
  merchantId = await createMerchant(service, 'Console merchant');
});

test('operator invites: the user, the link once, a re-invite replaces the link; list and role change', async () => {
  const first = await inviteConsoleUser(service, merchantId, 'Ada@Example.com', 'developer');
  assert.match(first.invite_path, /^\/console\/invite\/[A-Za-z0-9_-]{43}$/);
  const again = await inviteConsoleUser(service, merchantId, 'ada@example.com', 'viewer');
  assert.equal(again.id, first.id);
  const jar = consoleClient(service);
  assert.equal((await jar.request('GET', first.invite_path)).status, 410, 'the replaced link is dead');
  assert.equal((await jar.request('GET', again.invite_path)).status, 200);
  const list = await admin(service, 'GET', `/admin/v1/merchants/${merchantId}/console-users`);
  const ada = list.body.data.find((u: any) => u.id === first.id);
  assert.deepEqual([ada.email, ada.role, ada.status], ['ada@example.com', 'viewer', 'invited']);
  const bad = await admin(service, 'POST', `/admin/v1/merchants/${merchantId}/console-users`, {
    email: 'not an address',
    role: 'owner',
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.code, 'invalid_fields');
  const unknown = await admin(service, 'POST', '/admin/v1/merchants/mch_nope/console-users', {
    email: 'x@example.com',
    role: 'owner',
  });
  assert.equal(unknown.status, 404);
  // A short password is refused; a good one is set and spends the link.
  assert.equal(
    (await jar.request('POST', again.invite_path, { password: 'short', confirmation: 'short' })).status,
    400,
  );
  assert.equal(
    (await jar.request('POST', again.invite_path, { password: consolePassword, confirmation: consolePassword })).status,
    200,
  );
  assert.equal(
    (await jar.request('POST', again.invite_path, { password: consolePassword, confirmation: consolePassword })).status,
    410,
  );
  const role = await admin(service, 'PATCH', `/admin/v1/console-users/${first.id}`, { role: 'developer' });
  assert.deepEqual([role.status, role.body.role, role.body.status], [200, 'developer', 'active']);
});

test(
  'sign-in: a session cookie that is HttpOnly and SameSite=Strict; the stored session is only a hash; pages ' +
    'carry the CSP',
  async () => {
    await consoleUserWithPassword(service, merchantId, 'cookie@example.com', 'owner');
    const jar = consoleClient(service);
    const csrf = await jar.csrfOf('/console/sign-in');
    const res = await fetch(`${service.publicUrl}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: [...jar.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      },
      body: new URLSearchParams({
        csrf_token: csrf,
        email: 'cookie@example.com',
        password: consolePassword,
      }).toString(),
    });
    assert.equal(res.status, 303);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('mwa_console_session='))!;
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    assert.match(cookie, /Path=\/console/);
    const token = cookie.split(';')[0]!.split('=')[1]!;
    const stored = await service.ctx.db.selectFrom('console_sessions').select('token_hash').execute();
    assert.ok(stored.length > 0 && stored.every((s) => s.token_hash !== token && /^[0-9a-f]{64}$/.test(s.token_hash)));
    const page = await fetch(`${service.publicUrl}/console/sandbox`, {
      headers: { cookie: `mwa_console_session=${token}` },
    });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-security-policy')!, /default-src 'none'.*frame-ancestors 'none'/);
    assert.doesNotMatch(page.headers.get('content-security-policy')!, /script-src/);
    assert.equal(page.headers.get('cache-control'), 'no-store');
    // Without a session: to the sign-in page.
    const anonymous = await consoleClient(service).request('GET', '/console/sandbox/keys');
    assert.deepEqual([anonymous.status, anonymous.location], [303, '/console/sign-in']);
  },
);

test(
  "CSRF: a change without the field, with another session's field, or with the sign-in field is refused (403) " +
    'and changes nothing',
  async () => {
    const { jar } = await signedInConsole(service, merchantId, 'csrf@example.com', 'owner');
    const { jar: other } = await signedInConsole(service, merchantId, 'csrf-other@example.com', 'owner');
    const form = { scopes: 'balances:read', ip_allowlist: '', expires: '' };
    const count = async () =>
      (await service.ctx.db.selectFrom('api_keys').select('id').where('merchant_id', '=', merchantId).execute()).length;
    const before = await count();
    assert.equal((await jar.request('POST', '/console/sandbox/keys', form)).status, 403);
    assert.equal(
      (
        await jar.request('POST', '/console/sandbox/keys', {
          ...form,
          csrf_token: await other.csrfOf('/console/sandbox/keys'),
        })
      ).status,
      403,
    );
    assert.equal(
      (
        await jar.request('POST', '/console/sandbox/keys', {
          ...form,
          csrf_token: await jar.csrfOf('/console/sign-in'),
        })
      ).status,
      403,
    );
    assert.equal(await count(), before);
    const ok = await jar.request('POST', '/console/sandbox/keys', {
      ...form,
      csrf_token: await jar.csrfOf('/console/sandbox/keys'),
    });
    assert.equal(ok.status, 201);
    assert.equal(await count(), before + 1);
    // A JSON body is no form: even carrying the right token it is refused.
    const json = await fetch(`${service.publicUrl}/console/sandbox/keys`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json', cookie: [...jar.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      body: JSON.stringify({
        ...form,
        csrf_token: [await jar.csrfOf('/console/sandbox/keys')],
        scopes: ['balances:read'],
      }),
    });
    assert.equal(json.status, 403);
    assert.equal(await count(), before + 1);
    // The sign-in form has its own double submit.
    const fresh = consoleClient(service);
    assert.equal(
      (await fresh.request('POST', '/console/sign-in', { email: 'csrf@example.com', password: consolePassword }))
        .status,
      403,
    );
  },
);

test(
  'timeouts: an idle session and one past the absolute lifetime end (the row is deleted); sign-out everywhere ' +
    'ends all',
  async () => {
    const idleSeconds = service.ctx.config.consoleSessionIdleSeconds;
    const maxSeconds = service.ctx.config.consoleSessionMaxSeconds;
    const { jar, userId } = await signedInConsole(service, merchantId, 'timeout@example.com', 'developer');
    assert.equal((await jar.request('GET', '/console/sandbox')).status, 200);
    // Time passes for the session: its timestamps are moved back (sessions run on real time).
    const ago = (s: number) => new Date(Date.now() - s * 1000);
    await service.ctx.db
      .updateTable('console_sessions')
      .set({ last_seen_at: ago(idleSeconds - 5) })
      .where('user_id', '=', userId)
      .execute();
    assert.equal((await jar.request('GET', '/console/sandbox')).status, 200, 'used just within the idle timeout');
    await service.ctx.db
      .updateTable('console_sessions')
      .set({ last_seen_at: ago(idleSeconds + 1) })
      .where('user_id', '=', userId)
      .execute();
    const idle = await jar.request('GET', '/console/sandbox');
    assert.deepEqual([idle.status, idle.location], [303, '/console/sign-in?ended=1']);
    assert.equal(
      (await service.ctx.db.selectFrom('console_sessions').select('token_hash').where('user_id', '=', userId).execute())
        .length,
      0,
    );

    // Absolute: in use a minute ago, but signed in longer ago than the lifetime.
    const again = consoleClient(service);
    await again.submit('/console/sign-in', { email: 'timeout@example.com', password: consolePassword });
    await service.ctx.db
      .updateTable('console_sessions')
      .set({ created_at: ago(maxSeconds + 1), last_seen_at: ago(30) })
      .where('user_id', '=', userId)
      .execute();
    assert.equal((await again.request('GET', '/console/sandbox')).location, '/console/sign-in?ended=1');

    // Everywhere: two browsers, one signs out everywhere, both are out.
    const a = consoleClient(service);
    const b = consoleClient(service);
    for (const jarX of [a, b])
      await jarX.submit('/console/sign-in', { email: 'timeout@example.com', password: consolePassword });
    assert.equal((await b.request('GET', '/console/sandbox')).status, 200);
    const out = await a.submit('/console/sign-out-everywhere', {}, '/console/sandbox/account');
    assert.equal(out.location, '/console/sign-in?out=1');
    assert.equal((await b.request('GET', '/console/sandbox')).status, 303);
    assert.equal((await a.request('GET', '/console/sandbox')).status, 303);
  },
);

test(
  'sign-in throttle: after 5 failures for an address from an unknown browser even the right password is ' +
    'refused (429) for 30 s',
  async () => {
    const email = 'throttle@example.com';
    await consoleUserWithPassword(service, merchantId, email, 'viewer');
    const jar = consoleClient(service);
    const attempt = async (password: string) => jar.submit('/console/sign-in', { email, password });
    for (let i = 0; i < 5; i++) assert.equal((await attempt('wrong password here')).status, 401);
    assert.equal((await attempt(consolePassword)).status, 429);
    assert.equal(jar.cookies.has('mwa_console_session'), false);
    // The failures are rows in the database, shared by every process; once they age out, sign-in works.
    await service.ctx.db
      .updateTable('console_login_failures')
      .set({ failed_at: new Date(Date.now() - 16 * 60_000) })
      .where('email', '=', email)
      .execute();
    assert.equal((await attempt(consolePassword)).status, 303);
    // An unknown address answers like a wrong password.
    assert.equal(
      (await jar.submit('/console/sign-in', { email: 'nobody@example.com', password: 'whatever it is' })).status,
      401,
    );
  },
);

test('sign-in throttle: guesses sent together are counted before they are checked (at most 5 are tried)', async () => {
  const email = 'burst@example.com';
  await consoleUserWithPassword(service, merchantId, email, 'viewer');
  const jar = consoleClient(service);
  const csrf = await jar.csrfOf('/console/sign-in');
  const answers = await Promise.all(
    Array.from({ length: 20 }, () =>
      jar.request('POST', '/console/sign-in', { csrf_token: csrf, email, password: 'wrong password here' }),
    ),
  );
  const tried = answers.filter((a) => a.status === 401).length;
  assert.ok(tried <= 5, `${tried} guesses were checked`);
  assert.equal(answers.filter((a) => a.status === 429).length, 20 - tried, 'the others are refused unchecked');
  const rows = await service.ctx.db
    .selectFrom('console_login_failures')
    .select('id')
    .where('email', '=', email)
    .execute();
  assert.equal(rows.length, tried, 'a refused guess leaves no failure behind; each checked one stays');
  assert.equal(
    (await jar.request('POST', '/console/sign-in', { csrf_token: csrf, email, password: consolePassword })).status,
    tried === 5 ? 429 : 303,
  );
});

const signInAs = async (jar: ConsoleBrowser, email: string, password: string) =>
  jar.submit('/console/sign-in', { email, password });
const moveFailuresBack = (email: string, seconds: number) =>
  service.ctx.db
    .updateTable('console_login_failures')
    .set({ failed_at: sql`failed_at - make_interval(secs => ${seconds})` })
    .where('email', '=', email)
    .execute();

test(
  "sign-in throttle: a stranger's failures do not keep the person out of a browser that signed in before (its " +
    'device cookie)',
  async () => {
    const email = 'known-browser@example.com';
    const { jar } = await signedInConsole(service, merchantId, email, 'viewer');
    assert.match(jar.cookies.get('mwa_console_device') ?? '', /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    await jar.submit('/console/sign-out', {}, '/console/sandbox/account');
    // A guesser, from three addresses: 5 failures, then even the right password is refused.
    for (let i = 0; i < 5; i++)
      assert.equal(
        (await signInAs(consoleClient(service, { forwardedFor: `198.51.100.${i % 3}` }), email, 'wrong password here'))
          .status,
        401,
      );
    assert.equal(
      (await signInAs(consoleClient(service, { forwardedFor: '198.51.100.9' }), email, consolePassword)).status,
      429,
    );
    // The person's browser is not locked out, even behind the guesser's address.
    const own = consoleClient(service, { forwardedFor: '198.51.100.0' });
    own.cookies.set('mwa_console_device', jar.cookies.get('mwa_console_device')!);
    assert.equal((await signInAs(own, email, consolePassword)).status, 303);
    // A device cookie of another account, or a forged one, makes a browser no better than a stranger.
    const { jar: otherAccount } = await signedInConsole(service, merchantId, 'known-browser-2@example.com', 'viewer');
    for (const value of [otherAccount.cookies.get('mwa_console_device')!, `${'A'.repeat(22)}.${'B'.repeat(43)}`]) {
      const pretender = consoleClient(service, { forwardedFor: '203.0.113.50' });
      pretender.cookies.set('mwa_console_device', value);
      assert.equal((await signInAs(pretender, email, consolePassword)).status, 429);
    }
    // A known browser's own failures are bounded too (5), and hold back no one else.
    for (let i = 0; i < 5; i++) assert.equal((await signInAs(own, email, 'wrong password here')).status, 401);
    assert.equal((await signInAs(own, email, consolePassword)).status, 429);
    const rows = await service.ctx.db
      .selectFrom('console_login_failures')
      .select(['device_hash'])
      .where('email', '=', email)
      .execute();
    assert.equal(rows.filter((r) => r.device_hash !== null).length, 5);
    assert.ok(
      rows.every((r) => r.device_hash === null || /^[0-9a-f]{64}$/.test(r.device_hash)),
      'only a hash of the cookie is kept',
    );
  },
);

test(
  'sign-in throttle: from unknown browsers an account waits 30 s after 5 failures, then twice as long after ' +
    'each; never a lock, whatever the addresses',
  async () => {
    const email = 'delay@example.com';
    await consoleUserWithPassword(service, merchantId, email, 'viewer');
    let n = 0;
    const stranger = () => consoleClient(service, { forwardedFor: `198.18.0.${++n}` });
    for (let i = 0; i < 5; i++) assert.equal((await signInAs(stranger(), email, 'wrong password here')).status, 401);
    assert.equal((await signInAs(stranger(), email, 'wrong password here')).status, 429, 'a new address does not help');
    await moveFailuresBack(email, 31);
    assert.equal(
      (await signInAs(stranger(), email, 'wrong password here')).status,
      401,
      '30 s after the last failure one more attempt is checked',
    );
    assert.equal((await signInAs(stranger(), email, consolePassword)).status, 429);
    await moveFailuresBack(email, 45);
    assert.equal(
      (await signInAs(stranger(), email, consolePassword)).status,
      429,
      'after the sixth failure the wait is 60 s',
    );
    await moveFailuresBack(email, 16);
    assert.equal(
      (await signInAs(stranger(), email, consolePassword)).status,
      303,
      'and then the right password signs in',
    );
  },
);

test(
  "sign-in throttle: 20 failures from one address over many accounts stop that address's unknown browsers, not " +
    'a known browser behind it',
  async () => {
    const office = '203.0.113.7';
    const { jar } = await signedInConsole(service, merchantId, 'office@example.com', 'viewer');
    for (let i = 0; i < 20; i++)
      assert.equal(
        (
          await signInAs(
            consoleClient(service, { forwardedFor: office }),
            `nobody-${i}@example.com`,
            'wrong password here',
          )
        ).status,
        401,
      );
    assert.equal(
      (await signInAs(consoleClient(service, { forwardedFor: office }), 'office@example.com', consolePassword)).status,
      429,
    );
    const known = consoleClient(service, { forwardedFor: office });
    known.cookies.set('mwa_console_device', jar.cookies.get('mwa_console_device')!);
    assert.equal((await signInAs(known, 'office@example.com', consolePassword)).status, 303);
    assert.equal(
      (await signInAs(consoleClient(service, { forwardedFor: '203.0.113.8' }), 'office@example.com', consolePassword))
        .status,
      303,
      'another address is not held back',
    );
  },
);

test(
  "a password hash made with weaker scrypt parameters (p = 1) is replaced by one with today's at the next " + 'sign-in',
  async () => {
    const email = 'rehash@example.com';
    const { userId } = await signedInConsole(service, merchantId, email, 'viewer');
    const salt = randomBytes(16);
    const old = [
      'scrypt',
      1024,
      8,
      1,
      salt.toString('base64url'),
      scryptSync(consolePassword.normalize('NFKC'), salt, 32, { N: 1024, r: 8, p: 1 }).toString('base64url'),
    ].join('$');
    await service.ctx.db.updateTable('console_users').set({ password_hash: old }).where('id', '=', userId).execute();
    const hashOf = async () => (await rowById(service, 'console_users', userId)).password_hash!;
    assert.equal(
      (await signInAs(consoleClient(service, { forwardedFor: '198.18.1.1' }), email, 'not the password at all')).status,
      401,
    );
    assert.equal(await hashOf(), old, 'a wrong password changes nothing');
    assert.equal((await signInAs(consoleClient(service), email, consolePassword)).status, 303);
    const now = await hashOf();
    assert.match(now, /^scrypt\$1024\$8\$3\$/);
    assert.equal(
      (await signInAs(consoleClient(service), email, consolePassword)).status,
      303,
      'and the password still signs in',
    );
    assert.equal(await hashOf(), now, 'a current hash is kept');
  },
);

test('a viewer reads every page but every change is refused on the server (403), whatever the form', async () => {
  const { jar } = await signedInConsole(service, merchantId, 'viewer@example.com', 'viewer');
  const key = await createKey(service, merchantId);
  for (const path of [
    '/console/sandbox',
    '/console/sandbox/keys',
    `/console/sandbox/keys/${key.keyId}`,
    '/console/sandbox/webhooks',
    '/console/sandbox/deliveries',
    '/console/sandbox/api-log',
    '/console/sandbox/members',
    '/console/sandbox/withdrawals',
    '/console/sandbox/deposits',
    '/console/sandbox/tools',
    '/console/production/keys',
  ]) {
    const page = await jar.request('GET', path);
    assert.equal(page.status, 200, path);
    assert.doesNotMatch(
      page.body,
      /Disable key|Create key|Add endpoint|Advance clock/,
      `${path} offers no change to a viewer`,
    );
  }
  const csrf = await jar.csrfOf('/console/sandbox/keys');
  const changes: [string, Record<string, string>][] = [
    ['/console/sandbox/keys', { scopes: 'balances:read' }],
    [`/console/sandbox/keys/${key.keyId}/allowlist`, { intent: 'save', ip_allowlist: '10.0.0.1' }],
    [`/console/sandbox/keys/${key.keyId}/disable`, {}],
    [`/console/sandbox/keys/${key.keyId}/rotate`, { overlap_seconds: '0' }],
    ['/console/sandbox/webhooks', { url: 'http://127.0.0.1:9/hook', event_types: '*' }],
    ['/console/sandbox/withdrawals/wdr_x/confirm', {}],
    ['/console/sandbox/tools/reset', {}],
    ['/console/sandbox/tools/clock', { seconds: '60' }],
  ];
  for (const [path, form] of changes) {
    const res = await jar.request('POST', path, { ...form, csrf_token: csrf });
    assert.equal(res.status, 403, path);
    assert.match(res.body, /Your role \(viewer\) cannot make this change/);
  }
  const row = await service.ctx.db
    .selectFrom('api_keys')
    .select(['disabled', 'ip_allowlist'])
    .where('id', '=', key.keyId)
    .executeTakeFirstOrThrow();
  assert.deepEqual(row, { disabled: false, ip_allowlist: '' });
  assert.equal((await jar.request('GET', '/console/sandbox/audit')).status, 403, "the audit log is the owner's");
});

test("a disabled user's sessions end at once; an unknown environment or key is a 404 page", async () => {
  const { jar, userId } = await signedInConsole(service, merchantId, 'disabled@example.com', 'owner');
  assert.equal((await jar.request('GET', '/console/staging/keys')).status, 404);
  const keysBefore = (
    await service.ctx.db.selectFrom('api_keys').select('id').where('merchant_id', '=', merchantId).execute()
  ).length;
  const staging = await jar.submit('/console/staging/keys', { scopes: 'balances:read' }, '/console/sandbox/keys');
  assert.equal(staging.status, 404, 'a change in an unknown environment is not made in the sandbox');
  assert.equal(
    (await service.ctx.db.selectFrom('api_keys').select('id').where('merchant_id', '=', merchantId).execute()).length,
    keysBefore,
  );
  assert.equal((await jar.request('GET', '/console/sandbox/keys/key_nope')).status, 404);
  const other = await createMerchant(service, 'Someone else');
  const foreign = await createKey(service, other);
  assert.equal(
    (await jar.request('GET', `/console/sandbox/keys/${foreign.keyId}`)).status,
    404,
    "another merchant's key is not found",
  );
  await admin(service, 'PATCH', `/admin/v1/console-users/${userId}`, { disabled: true });
  assert.equal((await jar.request('GET', '/console/sandbox')).status, 303);
});

test(
  'two-step sign-in: set up with the password and a first code, then sign-in asks for a code; a wrong or ' +
    'reused code is refused; turned off with a code',
  async () => {
    const email = 'totp@example.com';
    const { jar, userId } = await signedInConsole(service, merchantId, email, 'developer');
    const account = '/console/sandbox/account';
    await jar.submit(`${account}/totp/start`, {}, account);
    const page = await jar.request('GET', account);
    const key = /id="totp-key">([A-Z2-7 ]+)</.exec(page.body)![1]!.replace(/ /g, '');
    const secret = authenticatorSecret(key);
    // Steps are counted from the one the set-up is confirmed in (s0); the test runs well within
    // 30 s, so real time stays at s0 or s0 + 1 and both codes below are within the window.
    const s0 = stepAt(Date.now());
    const code = (offsetSteps = 0) => totpCode(secret, s0 + offsetSteps);
    assert.equal(
      (await jar.submit(`${account}/totp/confirm`, { password: consolePassword, code: code(7) }, account)).status,
      400,
    );
    // A session alone does not turn it on (someone at an unattended browser): the password is asked again.
    const noPassword = await jar.submit(`${account}/totp/confirm`, { code: code() }, account);
    assert.equal(noPassword.status, 400);
    assert.match(noPassword.body, /not your password/);
    const wrongPassword = await jar.submit(
      `${account}/totp/confirm`,
      { password: 'not the password at all', code: code() },
      account,
    );
    assert.equal(wrongPassword.status, 400);
    assert.equal((await rowById(service, 'console_users', userId)).totp_secret, null);
    assert.equal(
      (await service.ctx.db.selectFrom('console_login_failures').select('id').where('email', '=', email).execute())
        .length,
      2,
      'each wrong password counts in the throttle',
    );
    await service.ctx.db.deleteFrom('console_login_failures').where('email', '=', email).execute();
    const on = await jar.submit(`${account}/totp/confirm`, { password: consolePassword, code: code() }, account);
    assert.equal(on.status, 200);
    assert.match(on.body, /Two-step sign-in is on/);
    const stored = await rowById(service, 'console_users', userId);
    assert.ok(
      stored.totp_secret && !stored.totp_secret.includes(key) && stored.totp_pending_secret === null,
      'the secret is stored sealed',
    );

    // Sign in again: the password leads to the code page, not to a session.
    const browser = consoleClient(service);
    const first = await browser.submit('/console/sign-in', { email, password: consolePassword });
    assert.equal(first.location, '/console/two-step');
    assert.equal(browser.cookies.has('mwa_console_session'), false);
    assert.equal((await browser.request('GET', '/console/sandbox')).status, 303, 'no session before the code');
    const wrong = await browser.submit('/console/two-step', { code: code(5) });
    assert.equal(wrong.status, 401);
    // The code of the step used to confirm the set-up (or an older one) is not accepted again; the next step's is.
    const used = await browser.submit('/console/two-step', { code: code() });
    assert.equal(used.status, 401, 'a code is good once');
    const ok = await browser.submit('/console/two-step', { code: code(1) });
    assert.equal(ok.location, '/console/sandbox');
    assert.equal((await browser.request('GET', '/console/sandbox')).status, 200);
    // Without the signed two-step cookie the code page sends back to sign-in.
    assert.equal((await consoleClient(service).request('GET', '/console/two-step')).location, '/console/sign-in');

    const off = await browser.submit(`${account}/totp/disable`, { code: code(1) }, account);
    assert.equal(off.status, 400, 'the code just used does not turn it off');
    await service.ctx.db
      .updateTable('console_users')
      .set({ totp_last_step: null })
      .where('email', '=', email)
      .execute();
    const off2 = await browser.submit(
      `${account}/totp/disable`,
      { code: totpCode(secret, stepAt(Date.now())) },
      account,
    );
    assert.match(off2.body, /Two-step sign-in is off/);
    const plain = consoleClient(service);
    assert.equal(
      (await plain.submit('/console/sign-in', { email, password: consolePassword })).location,
      '/console/sandbox',
    );
  },
);

test(
  'housekeeping deletes sessions past a timeout and sign-in failures out of the longest window (24 hours), and ' +
    'keeps the rest',
  async () => {
    const { userId } = await signedInConsole(service, merchantId, 'cleanup@example.com', 'viewer');
    const { userId: liveUser } = await signedInConsole(service, merchantId, 'cleanup-live@example.com', 'viewer');
    await service.ctx.db
      .updateTable('console_sessions')
      .set({ last_seen_at: new Date(Date.now() - (service.ctx.config.consoleSessionIdleSeconds + 1) * 1000) })
      .where('user_id', '=', userId)
      .execute();
    await service.ctx.db
      .insertInto('console_login_failures')
      .values([
        { email: 'old@example.com', client_ip: '192.0.2.1', failed_at: new Date(Date.now() - 25 * 3600_000) },
        { email: 'new@example.com', client_ip: '192.0.2.1', failed_at: new Date(Date.now() - 23 * 3600_000) },
      ])
      .execute();
    await consoleCleanupTicker.run(service.ctx);
    const sessions = await service.ctx.db
      .selectFrom('console_sessions')
      .select('user_id')
      .where('user_id', 'in', [userId, liveUser])
      .execute();
    assert.deepEqual(
      sessions.map((s) => s.user_id),
      [liveUser],
    );
    const failures = await service.ctx.db
      .selectFrom('console_login_failures')
      .select('email')
      .where('client_ip', '=', '192.0.2.1')
      .execute();
    assert.deepEqual(
      failures.map((f) => f.email),
      ['new@example.com'],
    );
  },
);
