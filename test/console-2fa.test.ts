import { afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningService } from '../src/server.js';
import { admin, createMerchant, useTestService } from './support/service.js';
import { testHostedScreenKey } from './support/hosted.js';
import {
  consoleClient,
  consolePassword,
  inviteConsoleUser,
  signedInConsole,
  type ConsoleBrowser,
  authenticatorSecret,
} from './support/console.js';
import { stepAt, totpCode } from '../src/console/totp.js';
import {
  newRecoveryCode,
  newRecoveryCodes,
  normaliseRecoveryCode,
  recoveryCodeHash,
  recoveryCodesPerSet,
} from '../src/console/recovery.js';
import { sha256Hex } from '../src/platform/ids.js';
import { rowById } from './support/fixtures.js';

/**
 * The console's second factor beyond TOTP itself (docs/console.md "Recovery codes"): recovery
 * codes shown once, stored as hashes, each good once at sign-in, under the sign-in throttle; a
 * new set after the password or a code; the operator's reset; the password change that ends
 * other sessions; sign-in answers that do not tell whether an address has an account. In a
 * browser: console-browser.test.ts.
 */

describe('recovery codes, pure', () => {
  test('a set is 10 distinct codes of 16 Crockford base32 characters in groups of four; typing is forgiving', () => {
    const codes = newRecoveryCodes();
    assert.equal(codes.length, recoveryCodesPerSet);
    assert.equal(new Set(codes).size, codes.length);
    for (const c of codes) assert.match(c, /^[0-9a-hjkmnp-tv-z]{4}(-[0-9a-hjkmnp-tv-z]{4}){3}$/);
    const code = '0a1b-2c3d-4e5f-6g7h';
    assert.equal(normaliseRecoveryCode(code), '0a1b2c3d4e5f6g7h');
    assert.equal(
      normaliseRecoveryCode(' 0A1B 2C3D-4E5F 6G7H '),
      '0a1b2c3d4e5f6g7h',
      'case, spaces and hyphens do not count',
    );
    assert.equal(
      normaliseRecoveryCode('Oa1b-2c3d-4e5f-6g7h'.replace('1', 'l')),
      '0a1b2c3d4e5f6g7h',
      'o is read as 0, l and i as 1',
    );
    assert.equal(normaliseRecoveryCode('123456'), undefined, 'a TOTP code is not a recovery code');
    assert.equal(normaliseRecoveryCode('0a1b-2c3d-4e5f-6g7'), undefined);
    assert.equal(normaliseRecoveryCode('0a1b-2c3d-4e5f-6g7u'), undefined, 'u is not in the alphabet');
  });

  test('the hash is of the user and the code: the same code of two users hashes apart; never the code itself', () => {
    const code = newRecoveryCode();
    const a = recoveryCodeHash('cus_a', code)!;
    assert.match(a, /^[0-9a-f]{64}$/);
    assert.notEqual(a, recoveryCodeHash('cus_b', code));
    assert.equal(a, recoveryCodeHash('cus_a', code.toUpperCase().replace(/-/g, ' ')));
    assert.notEqual(a, sha256Hex(code));
    assert.equal(recoveryCodeHash('cus_a', 'nope'), undefined);
  });
});

describe('recovery codes, operator reset, password change over HTTP', () => {
  let service: RunningService;
  let merchantId: string;

  useTestService({ config: { hostedScreenKey: testHostedScreenKey }, merchant: false }, (s) => ({ service } = s));
  before(async () => {
    merchantId = await createMerchant(service, 'Second factor merchant');
  });

  const account = '/console/sandbox/account';
  const db = () => service.ctx.db;
  // A test's sign-in failures would throttle, or be counted by, the next.
  afterEach(() => db().deleteFrom('console_login_failures').execute());

  /** Turns TOTP on from the account page: the secret and the codes shown once. */
  async function enableTotp(jar: ConsoleBrowser) {
    await jar.submit(`${account}/totp/start`, {}, account);
    const key = /id="totp-key">([A-Z2-7 ]+)</.exec((await jar.request('GET', account)).body)![1]!.replace(/ /g, '');
    const secret = authenticatorSecret(key);
    const on = await jar.submit(
      `${account}/totp/confirm`,
      { password: consolePassword, code: totpCode(secret, stepAt(Date.now())) },
      account,
    );
    assert.equal(on.status, 200);
    return { secret, codes: codesOf(on.body), page: on.body };
  }

  /** A user `<name>@example.com` of the merchant's console signed in with role `role`: its address, jar and id. */
  async function signedIn(name: string, role: 'owner' | 'developer' | 'viewer') {
    const email = `${name}@example.com`;
    const { jar, userId } = await signedInConsole(service, merchantId, email, role);
    return { email, jar, userId };
  }

  /** A user signed in (`signedIn`) with TOTP turned on: its address, jar, id, secret and codes. */
  async function withTotp(name: string, role: 'owner' | 'developer' | 'viewer') {
    const user = await signedIn(name, role);
    return { ...user, ...(await enableTotp(user.jar)) };
  }
  /** How many of the user's recovery codes are stored; `used`: how many of them were used. */
  const storedCodes = async (userId: string, used = false) => {
    let q = db().selectFrom('console_recovery_codes').select('code_hash').where('user_id', '=', userId);
    if (used) q = q.where('used_at', 'is not', null);
    return (await q.execute()).length;
  };
  /** How many sign-in failures are counted against `email`. */
  const failuresOf = async (email: string) =>
    (await db().selectFrom('console_login_failures').select('id').where('email', '=', email).execute()).length;
  const codesOf = (body: string) =>
    [...body.matchAll(/<li><code class="value">([^<]+)<\/code><\/li>/g)].map((m) => m[1]!);

  /** A current TOTP code the server takes (the last step used is forgotten first: no waiting for the next step). */
  async function currentCode(userId: string, secret: Buffer): Promise<string> {
    await db().updateTable('console_users').set({ totp_last_step: null }).where('id', '=', userId).execute();
    return totpCode(secret, stepAt(Date.now()));
  }

  /** The password step of a sign-in, in a new browser unless `jar` is given. */
  async function passwordStep(email: string, jar = consoleClient(service)) {
    return { jar, res: await jar.submit('/console/sign-in', { email, password: consolePassword }) };
  }

  /** Password, then the second step with `code`; answers the second step's response. */
  async function signInWith(email: string, code: string, opts: { recovery?: boolean; jar?: ConsoleBrowser } = {}) {
    const { jar, res: first } = await passwordStep(email, opts.jar);
    assert.equal(first.location, '/console/two-step', `password step of ${email}: ${first.status}`);
    const path = opts.recovery === false ? '/console/two-step' : '/console/two-step?recovery=1';
    const res = await jar.submit(path, { code });
    return { jar, res };
  }

  /** Where a sign-in with the app's current code lands. */
  const appSignInLocation = async (email: string, userId: string, secret: Buffer) =>
    (await signInWith(email, await currentCode(userId, secret), { recovery: false })).res.location;

  /** The user's sign-in failures counted 16 minutes ago: past the throttle's window. */
  const ageOutFailures = (email: string) =>
    db()
      .updateTable('console_login_failures')
      .set({ failed_at: new Date(Date.now() - 16 * 60_000) })
      .where('email', '=', email)
      .execute();

  const userRow = (userId: string) => rowById(service, 'console_users', userId);

  const auditOf = (userId: string, action: string) =>
    db()
      .selectFrom('console_audit')
      .select(['environment', 'user_email', 'object_id', 'detail'])
      .where('user_id', '=', userId)
      .where('action', '=', action)
      .orderBy('seq')
      .execute();

  test(
    'turning TOTP on shows 10 recovery codes once, stored only as hashes; one signs in once, in place of the ' +
      "app's code; audited",
    async () => {
      const { email, jar, userId, codes, page, secret } = await withTotp('recover', 'developer');
      assert.equal(codes.length, 10);
      assert.match(page, /shown only once/);
      const stored = await db()
        .selectFrom('console_recovery_codes')
        .selectAll()
        .where('user_id', '=', userId)
        .execute();
      assert.equal(stored.length, 10);
      for (const c of codes)
        assert.ok(stored.every((s) => !s.code_hash.includes(c.replace(/-/g, '')) && s.used_at === null));
      assert.deepEqual(new Set(stored.map((s) => s.code_hash)), new Set(codes.map((c) => recoveryCodeHash(userId, c))));
      const again = await jar.request('GET', account);
      assert.deepEqual(codesOf(again.body), [], 'the codes are not shown again');
      assert.match(again.body, /id="recovery-left">10 unused recovery codes\./);

      // The second step offers the recovery form on a link of its own.
      const { jar: browser } = await passwordStep(email);
      const form = await browser.request('GET', '/console/two-step?recovery=1');
      assert.match(form.body, /<label for="f-code">Recovery code<\/label>/);
      assert.match((await browser.request('GET', '/console/two-step')).body, /href="\/console\/two-step\?recovery=1"/);
      // Typed in capitals with spaces, it still signs in; the account page says so.
      const typed = codes[3]!.toUpperCase().replace(/-/g, ' ');
      const ok = await browser.submit('/console/two-step?recovery=1', { code: typed });
      assert.deepEqual([ok.status, ok.location], [303, '/console/sandbox/account?recovered=1']);
      const landed = await browser.request('GET', ok.location!);
      assert.equal(landed.status, 200);
      assert.match(landed.body, /You signed in with a recovery code/);
      assert.match(landed.body, /id="recovery-left">9 unused recovery codes\./);

      // Used once: the same code is refused, from the TOTP form as well.
      const reused = await signInWith(email, codes[3]!);
      assert.equal(reused.res.status, 401);
      assert.match(reused.res.body, /recovery code is not right, or was used already/);
      assert.equal(reused.jar.cookies.has('mwa_console_session'), false);
      assert.equal((await signInWith(email, codes[3]!, { recovery: false })).res.status, 401);
      // Another code works; the app's code still does too.
      assert.equal(
        (await signInWith(email, codes[4]!, { recovery: false })).res.location,
        '/console/sandbox/account?recovered=1',
      );
      assert.equal(await appSignInLocation(email, userId, secret), '/console/sandbox');

      const used = await auditOf(userId, 'user.recovery_code_use');
      assert.deepEqual(
        used.map((a) => [a.environment, a.user_email, a.object_id, a.detail]),
        [
          ['sandbox', email, userId, 'signed in with a recovery code; 9 left'],
          ['production', email, userId, 'signed in with a recovery code; 9 left'],
          ['sandbox', email, userId, 'signed in with a recovery code; 8 left'],
          ['production', email, userId, 'signed in with a recovery code; 8 left'],
        ],
      );
      assert.equal((await auditOf(userId, 'user.totp_enable'))[0]!.detail, '10 recovery codes made');
    },
  );

  test(
    'the two-step cookie is spent by the sign-in it leads to: presented again (a copy of it) it goes back to ' +
      'the password, even with a fresh code',
    async () => {
      const { email, userId, secret, codes } = await withTotp('two-step-once', 'viewer');
      const { jar: browser } = await passwordStep(email);
      const pending = browser.cookies.get('mwa_console_two_step')!;
      assert.ok(pending, 'the password step leaves a two-step cookie');
      const copy = consoleClient(service);
      copy.cookies.set('mwa_console_two_step', pending);
      const csrfOfCopy = await copy.csrfOf('/console/two-step');
      const done = await browser.submit('/console/two-step', { code: await currentCode(userId, secret) });
      assert.equal(done.location, '/console/sandbox');
      // Within its five minutes, with a code the server would take: back to the password.
      const again = await copy.request('POST', '/console/two-step', {
        csrf_token: csrfOfCopy,
        code: await currentCode(userId, secret),
      });
      assert.deepEqual([again.status, again.location], [303, '/console/sign-in?ended=1']);
      assert.equal(copy.cookies.has('mwa_console_session'), false);
      assert.equal(copy.cookies.has('mwa_console_two_step'), false, 'the spent cookie is cleared');
      // A recovery code does not get through either, and is not spent.
      const viaRecovery = await copy.request('POST', '/console/two-step?recovery=1', {
        csrf_token: csrfOfCopy,
        code: codes[0]!,
      });
      assert.equal(viaRecovery.location, '/console/sign-in?ended=1');
      assert.equal(await storedCodes(userId, true), 0);
      // A new password step makes a new cookie, which works.
      assert.equal(await appSignInLocation(email, userId, secret), '/console/sandbox');
    },
  );

  test('signing in again from a browser that still holds a session ends that session', async () => {
    const { email, jar } = await signedIn('sign-in-again', 'viewer');
    const old = jar.cookies.get('mwa_console_session')!;
    const copy = consoleClient(service);
    copy.cookies.set('mwa_console_session', old);
    assert.equal((await copy.request('GET', '/console/sandbox')).status, 200, 'the old session works before');
    const res = await jar.submit('/console/sign-in', { email, password: consolePassword });
    assert.equal(res.location, '/console/sandbox');
    assert.notEqual(jar.cookies.get('mwa_console_session'), old);
    assert.equal((await jar.request('GET', '/console/sandbox')).status, 200);
    const after = await copy.request('GET', '/console/sandbox');
    assert.equal(after.location, '/console/sign-in', 'the old session is gone');
    assert.equal(
      (
        await db()
          .selectFrom('console_sessions')
          .select('token_hash')
          .where('token_hash', '=', sha256Hex(old))
          .execute()
      ).length,
      0,
    );
  });

  test(
    'the sign-in throttle counts wrong recovery codes: after 5, even a right code is refused (429) and nothing ' +
      'is spent',
    async () => {
      const { email, userId, codes, secret } = await withTotp('guess-recovery', 'viewer');
      const browser = consoleClient(service);
      for (let i = 0; i < 5; i++) {
        const wrong = await signInWith(email, newRecoveryCode(), { jar: browser });
        assert.equal(wrong.res.status, 401, `guess ${i + 1}`);
      }
      const right = await browser.submit('/console/two-step?recovery=1', { code: codes[0]! });
      assert.equal(right.status, 429);
      assert.match(right.body, /Too many failed attempts/);
      const app = await browser.submit('/console/two-step', { code: await currentCode(userId, secret) });
      assert.equal(app.status, 429, "the app's code too");
      assert.equal(await storedCodes(userId, true), 0);
      // Once the failures age out, the code signs in.
      await ageOutFailures(email);
      assert.equal((await signInWith(email, codes[0]!)).res.status, 303);
    },
  );

  test(
    'turning TOTP off counts wrong codes in the sign-in throttle: after 5, even a right code is refused (429); ' +
      'a used code is not taken again',
    async () => {
      const { email, jar, userId, secret } = await withTotp('disable-guess', 'viewer');
      const post = async (code: string) => jar.submit(`${account}/totp/disable`, { code }, account);
      const failures = () => failuresOf(email);
      const isOn = async () => (await userRow(userId)).totp_secret !== null;
      // A code already taken (the set-up's own step) does not turn it off, and counts.
      const setUpStep = Number((await userRow(userId)).totp_last_step);
      const replay = await post(totpCode(secret, setUpStep));
      assert.equal(replay.status, 400, 'the code of the set-up is not taken again');
      assert.equal(await failures(), 1);
      for (let i = 0; i < 4; i++) {
        const now = totpCode(secret, stepAt(Date.now()));
        const wrong = await post(now === '000000' ? '111111' : '000000');
        assert.equal(wrong.status, 400, `guess ${i + 2}`);
      }
      assert.equal(await failures(), 5);
      const right = await post(await currentCode(userId, secret));
      assert.equal(right.status, 429);
      assert.match(right.body, /Too many failed attempts/);
      assert.equal(await isOn(), true, 'still on');
      assert.equal(await failures(), 5, 'the refused attempt is taken back');
      assert.equal((await auditOf(userId, 'user.totp_disable')).length, 0);
      // Once the failures age out, a current code turns it off; its step is recorded and the same code is not taken
      // again.
      await ageOutFailures(email);
      const code = await currentCode(userId, secret);
      const off = await post(code);
      assert.equal(off.status, 200);
      assert.match(off.body, /Two-step sign-in is off/);
      assert.equal(await isOn(), false);
      assert.equal(await storedCodes(userId), 0);
      assert.equal((await auditOf(userId, 'user.totp_disable')).length, 1);
    },
  );

  test('a code used at sign-in does not turn TOTP off (the step is taken)', async () => {
    const { email, jar, userId, secret } = await withTotp('disable-replay', 'viewer');
    const code = await currentCode(userId, secret);
    // The step recorded by the code's use (here: its use at sign-in) makes a replay fail.
    assert.equal((await signInWith(email, code, { recovery: false })).res.location, '/console/sandbox');
    const replay = await jar.submit(`${account}/totp/disable`, { code }, account);
    assert.equal(replay.status, 400);
    const user = await userRow(userId);
    assert.ok(user.totp_secret !== null && user.totp_last_step !== null);
  });

  test(
    'a new set of recovery codes: after the password or an app code (a wrong one counts as a failure), the old ' +
      'set stops working; audited',
    async () => {
      const { email, jar, userId } = await signedIn('regenerate', 'owner');
      const page = '/console/production/account/recovery-codes';
      const off = await jar.request('GET', page);
      assert.match(off.body, /Recovery codes come with two-step sign-in/);
      assert.equal((await jar.submit(page, { password: consolePassword })).status, 400);
      const { codes: first, secret } = await enableTotp(jar);

      assert.equal(
        (await jar.request('POST', page, { password: consolePassword })).status,
        403,
        'the CSRF field is required',
      );
      // A hand-made set-up while the factor is on makes no new secret and no new codes.
      await jar.submit(`${account}/totp/start`, {}, account);
      const pending = await userRow(userId);
      assert.equal(pending.totp_pending_secret, null);
      assert.equal(
        (
          await jar.submit(
            `${account}/totp/confirm`,
            { password: consolePassword, code: await currentCode(userId, secret) },
            account,
          )
        ).status,
        400,
      );
      const wrong = await jar.submit(page, { password: 'not the password at all' });
      assert.equal(wrong.status, 401);
      assert.deepEqual(codesOf(wrong.body), []);
      assert.equal(await failuresOf(email), 1, 'counted in the throttle');
      const wrongCode = await jar.submit(page, {
        code: '000000' === totpCode(secret, stepAt(Date.now())) ? '111111' : '000000',
      });
      assert.equal(wrongCode.status, 401);

      const byPassword = await jar.submit(page, { password: consolePassword });
      assert.equal(byPassword.status, 201);
      const second = codesOf(byPassword.body);
      assert.equal(second.length, 10);
      assert.equal(second.filter((c) => first.includes(c)).length, 0);
      assert.equal((await signInWith(email, first[0]!)).res.status, 401, 'the old set no longer works');
      const byCode = await jar.submit(page, { code: await currentCode(userId, secret) });
      assert.equal(byCode.status, 201);
      const third = codesOf(byCode.body);
      assert.equal((await signInWith(email, second[0]!)).res.status, 401);
      assert.equal((await signInWith(email, third[0]!)).res.status, 303);
      assert.equal(await storedCodes(userId), 10);
      const made = await auditOf(userId, 'user.recovery_codes_new');
      assert.equal(made.length, 4, "two sets, each in both environments' logs");
      // Owners read them in either environment's audit log.
      for (const env of ['sandbox', 'production'])
        assert.match((await jar.request('GET', `/console/${env}/audit`)).body, /user\.recovery_codes_new/);
      // Turning TOTP off deletes the codes.
      await jar.submit(`${account}/totp/disable`, { code: await currentCode(userId, secret) }, account);
      assert.equal(await storedCodes(userId), 0);
    },
  );

  test(
    'operator reset of the second factor: TOTP and recovery codes gone, every session ended, audited as the ' +
      'operator; the password alone signs in',
    async () => {
      const { email, jar, userId, codes } = await withTotp('lost-phone', 'developer');
      const other = (await signInWith(email, codes[0]!)).jar;
      assert.equal((await other.request('GET', '/console/sandbox')).status, 200);
      const listed = await admin(service, 'GET', `/admin/v1/merchants/${merchantId}/console-users`);
      assert.equal(listed.body.data.find((u: any) => u.id === userId).two_step, true);

      const noToken = await fetch(`${service.adminUrl}/admin/v1/console-users/${userId}/second-factor/reset`, {
        method: 'POST',
      });
      assert.equal(noToken.status, 401);
      assert.equal((await admin(service, 'POST', '/admin/v1/console-users/cus_nope/second-factor/reset')).status, 404);
      const reset = await admin(service, 'POST', `/admin/v1/console-users/${userId}/second-factor/reset`);
      assert.equal(reset.status, 200);
      assert.deepEqual(
        [reset.body.id, reset.body.email, reset.body.status, reset.body.two_step, reset.body.sessions_ended],
        [userId, email, 'active', false, 2],
      );
      for (const j of [jar, other])
        assert.equal((await j.request('GET', '/console/sandbox')).location, '/console/sign-in', 'the session is gone');
      const { totp_secret, totp_pending_secret, totp_last_step } = await userRow(userId);
      assert.deepEqual(
        { totp_secret, totp_pending_secret, totp_last_step },
        { totp_secret: null, totp_pending_secret: null, totp_last_step: null },
      );
      assert.equal(await storedCodes(userId), 0);
      const lines = await auditOf(userId, 'operator.second_factor_reset');
      assert.deepEqual(
        lines.map((a) => [a.environment, a.user_email, a.object_id]),
        [
          ['sandbox', 'operator', userId],
          ['production', 'operator', userId],
        ],
      );
      assert.equal(
        lines[0]!.detail,
        `${email}: two-step sign-in turned off, 9 unused recovery codes deleted, 2 sessions ended`,
      );

      const { res: signed } = await passwordStep(email);
      assert.equal(signed.location, '/console/sandbox', 'no second step any more');
      // Repeatable: a user without a second factor is answered the same, its sessions end.
      const again = await admin(service, 'POST', `/admin/v1/console-users/${userId}/second-factor/reset`);
      assert.deepEqual([again.status, again.body.two_step, again.body.sessions_ended], [200, false, 1]);
      assert.equal(
        (await auditOf(userId, 'operator.second_factor_reset'))[2]!.detail,
        `${email}: two-step sign-in was off, 0 unused recovery codes deleted, 1 sessions ended`,
      );
    },
  );

  test(
    'password change: the current password is checked (under the throttle); every other session ends, this one ' +
      'stays; audited',
    async () => {
      const { email, jar, userId } = await signedIn('new-password', 'viewer');
      const { jar: elsewhere } = await passwordStep(email);
      assert.equal((await elsewhere.request('GET', '/console/sandbox')).status, 200);
      const page = '/console/sandbox/account/password';
      assert.match((await jar.request('GET', account)).body, /href="\/console\/sandbox\/account\/password"/);
      const newPassword = 'another long passphrase';
      const post = async (form: Record<string, string>) => jar.submit(page, { ...form });
      assert.equal(
        (
          await jar.request('POST', page, {
            current: consolePassword,
            password: newPassword,
            confirmation: newPassword,
          })
        ).status,
        403,
      );
      assert.equal((await post({ current: consolePassword, password: 'short', confirmation: 'short' })).status, 400);
      assert.equal(
        (await post({ current: consolePassword, password: newPassword, confirmation: `${newPassword}!` })).status,
        400,
      );
      const wrong = await post({
        current: 'not the password at all',
        password: newPassword,
        confirmation: newPassword,
      });
      assert.equal(wrong.status, 401);
      assert.equal(await failuresOf(email), 1);
      assert.equal((await elsewhere.request('GET', '/console/sandbox')).status, 200, 'a refused change ends nothing');

      const done = await post({ current: consolePassword, password: newPassword, confirmation: newPassword });
      assert.equal(done.status, 200);
      assert.match(done.body, /Your password is changed\. 1 other session ended\./);
      assert.equal((await jar.request('GET', '/console/sandbox')).status, 200, 'this browser stays signed in');
      assert.equal(
        (await elsewhere.request('GET', '/console/sandbox')).location,
        '/console/sign-in',
        'the session is gone',
      );
      const old = consoleClient(service);
      assert.equal((await old.submit('/console/sign-in', { email, password: consolePassword })).status, 401);
      assert.equal((await old.submit('/console/sign-in', { email, password: newPassword })).status, 303);
      assert.deepEqual(
        (await auditOf(userId, 'user.password_change')).map((a) => [a.environment, a.detail]),
        [
          ['sandbox', '1 other sessions ended'],
          ['production', '1 other sessions ended'],
        ],
      );
    },
  );

  test(
    'turning TOTP on or off ends every other session of the user (one opened with the password alone stays no ' +
      'longer); this browser stays',
    async () => {
      const { email, jar, userId } = await signedIn('totp-sessions', 'viewer');
      const elsewhere = async () => {
        const { jar: other } = await passwordStep(email);
        assert.equal((await other.request('GET', '/console/sandbox')).status, 200);
        return other;
      };
      const before = await elsewhere();
      const { secret } = await enableTotp(jar);
      assert.equal(
        (await before.request('GET', '/console/sandbox')).location,
        '/console/sign-in',
        'the password-only session is gone',
      );
      assert.equal((await jar.request('GET', '/console/sandbox')).status, 200);

      const { jar: second } = await signInWith(email, await currentCode(userId, secret), { recovery: false });
      assert.equal((await second.request('GET', '/console/sandbox')).status, 200);
      const off = await jar.submit(`${account}/totp/disable`, { code: await currentCode(userId, secret) }, account);
      assert.match(off.body, /Two-step sign-in is off/);
      assert.equal(
        (await second.request('GET', '/console/sandbox')).location,
        '/console/sign-in',
        'the other session is gone',
      );
      assert.equal((await jar.request('GET', '/console/sandbox')).status, 200);
      assert.deepEqual(
        (await auditOf(userId, 'user.totp_disable')).map((a) => a.detail),
        ['1 other sessions ended'],
      );
    },
  );

  test(
    'sign-in answers the same for an unknown address, a wrong password, ' + 'a disabled user and one still invited',
    async () => {
      await signedInConsole(service, merchantId, 'known@example.com', 'viewer');
      const { userId: disabledId } = await signedInConsole(service, merchantId, 'gone@example.com', 'viewer');
      await admin(service, 'PATCH', `/admin/v1/console-users/${disabledId}`, { disabled: true });
      await inviteConsoleUser(service, merchantId, 'invited@example.com', 'viewer');
      const answer = async (email: string, password: string) => {
        const jar = consoleClient(service);
        const res = await jar.submit('/console/sign-in', { email, password });
        return {
          status: res.status,
          body: res.body.replace(/value="[^"]*"/g, 'value=""'),
          session: jar.cookies.has('mwa_console_session'),
        };
      };
      const cases = [
        ['nobody@example.com', consolePassword],
        ['known@example.com', 'not the password at all'],
        ['gone@example.com', consolePassword],
        ['invited@example.com', consolePassword],
      ] as const;
      const answers = [];
      for (const [email, password] of cases) answers.push(await answer(email, password));
      for (const a of answers) assert.deepEqual(a, answers[0], 'one answer whatever the address');
      assert.equal(answers[0]!.status, 401);
      assert.equal(answers[0]!.session, false);
      assert.match(answers[0]!.body, /The e-mail address or the password is not right/);
      const failures = await db().selectFrom('console_login_failures').select('email').orderBy('id').execute();
      assert.deepEqual(
        failures.map((f) => f.email),
        cases.map(([email]) => email),
        'each counts once in the throttle',
      );
    },
  );
});
