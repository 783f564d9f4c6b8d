import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  accountDelaySeconds,
  can,
  loginAllowed,
  loginFailuresPerDeviceMax,
  loginFailuresPerIpMax,
  needsTouch,
  normaliseEmail,
  passwordProblem,
  permissions,
  sessionState,
} from '../src/console/rules.js';
import { hashPassword, needsRehash, verifyPassword } from '../src/console/password.js';
import { compileEntry, describeEntry } from '../src/platform/http/ip-allowlist.js';
import { parseForm, ConsoleFormError, formFieldsMax } from '../src/console/form.js';
import { base32, matchTotp, openSecret, sealSecret, stepAt, totpCode } from '../src/console/totp.js';

/** The console's pure rules: roles, session timeouts, the sign-in throttle, passwords, the allow-list preview. */

test(
  'a viewer may change nothing; a developer the developer tools; ' + "withdrawals and the audit log are the owner's",
  () => {
    for (const permission of Object.keys(permissions) as (keyof typeof permissions)[]) {
      assert.equal(can('viewer', permission), false, permission);
      assert.equal(can('owner', permission), true, permission);
    }
    assert.equal(can('developer', 'keys.write'), true);
    assert.equal(can('developer', 'webhooks.write'), true);
    assert.equal(can('developer', 'sandbox.write'), true);
    assert.equal(can('developer', 'withdrawals.write'), false);
    assert.equal(can('developer', 'audit.read'), false);
  },
);

test('sessions: idle and absolute timeouts, each at its exact edge', () => {
  const limits = { idleSeconds: 1800, maxSeconds: 43_200 };
  const t0 = new Date('2026-11-23T00:00:00Z');
  const at = (s: number) => new Date(t0.getTime() + s * 1000);
  assert.equal(sessionState({ created_at: t0, last_seen_at: t0 }, at(1799), limits), 'alive');
  assert.equal(sessionState({ created_at: t0, last_seen_at: t0 }, at(1800), limits), 'idle');
  assert.equal(sessionState({ created_at: t0, last_seen_at: at(43_000) }, at(43_199), limits), 'alive');
  assert.equal(
    sessionState({ created_at: t0, last_seen_at: at(43_199) }, at(43_200), limits),
    'expired',
    'used a second ago, but past the lifetime',
  );
  assert.equal(needsTouch(t0, at(59), 1800), false);
  assert.equal(needsTouch(t0, at(60), 1800), true);
  // A short idle timeout: recorded every half of it, so a session used every 3 s of an 8 s timeout lives on.
  assert.equal(needsTouch(t0, at(3), 8), false);
  assert.equal(needsTouch(t0, at(4), 8), true);
  let seen = t0;
  for (let s = 3; s <= 30; s += 3) {
    assert.equal(
      sessionState({ created_at: t0, last_seen_at: seen }, at(s), { idleSeconds: 8, maxSeconds: 3600 }),
      'alive',
      `used at ${s} s`,
    );
    if (needsTouch(seen, at(s), 8)) seen = at(s);
  }
});

test(
  'the sign-in throttle: a known browser on its own failures; others per client and with a growing delay per ' +
    'account, never a lock',
  () => {
    const now = new Date('2026-11-23T12:00:00Z');
    const ago = (s: number) => new Date(now.getTime() - s * 1000);
    // A known browser: its own failures only, the bound exclusive.
    assert.equal(loginAllowed({ kind: 'device', device: loginFailuresPerDeviceMax - 1 }, now), true);
    assert.equal(loginAllowed({ kind: 'device', device: loginFailuresPerDeviceMax }, now), false);
    // Elsewhere: the client address, exclusive.
    const unknown = (byIp: number, byAccount: number, last?: Date) =>
      loginAllowed({ kind: 'unknown', byIp, byAccount, lastAccountFailure: last }, now);
    assert.equal(unknown(loginFailuresPerIpMax - 1, 0), true);
    assert.equal(unknown(loginFailuresPerIpMax, 0), false);
    // The account: 5 free failures, then 30 s after the last one, doubling, at most 15 minutes.
    assert.deepEqual(
      [0, 4, 5, 6, 7, 8, 9, 10, 11, 50, 10_000].map(accountDelaySeconds),
      [0, 0, 30, 60, 120, 240, 480, 900, 900, 900, 900],
    );
    assert.equal(unknown(0, 4, ago(0)), true);
    assert.equal(unknown(0, 5, ago(29.999)), false);
    assert.equal(unknown(0, 5, ago(30)), true);
    assert.equal(unknown(0, 6, ago(59)), false);
    assert.equal(unknown(0, 6, ago(60)), true);
    assert.equal(unknown(0, 500, ago(899)), false);
    assert.equal(
      unknown(0, 500, ago(900)),
      true,
      'however many failures, 15 minutes after the last one an attempt is taken',
    );
  },
);

test('e-mail addresses and new passwords', () => {
  assert.equal(normaliseEmail('  Ada@Example.COM '), 'ada@example.com');
  for (const bad of ['ada', 'ada@', '@example.com', 'a b@example.com', 'ada@example', '<ada>@example.com'])
    assert.equal(normaliseEmail(bad), undefined, bad);
  assert.match(passwordProblem('short', 'short')!, /at least 12/);
  assert.match(passwordProblem('long enough password', 'long enough passw0rd')!, /not the same/);
  assert.equal(passwordProblem('long enough password', 'long enough password'), undefined);
});

test(
  'scrypt hashes: verify the right password only, salted, parameters stored with the hash and raised at the ' +
    'next sign-in',
  async () => {
    const a = await hashPassword('correct horse battery staple', 15);
    const b = await hashPassword('correct horse battery staple', 15);
    assert.match(
      a,
      /^scrypt\$32768\$8\$3\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/,
      "N = 2^15, r = 8, p = 3: OWASP's equivalent of N = 2^17, p = 1",
    );
    assert.equal(needsRehash(a, 15), false);
    assert.equal(needsRehash(a, 16), true, 'a higher work factor later re-hashes');
    assert.equal(needsRehash('scrypt$32768$8$1$AAAA$AAAA', 15), true, "p = 1 is below today's parameters");
    assert.notEqual(a, b, 'a fresh salt each time');
    assert.equal(await verifyPassword('correct horse battery staple', a), true);
    assert.equal(await verifyPassword('correct horse battery stapl', a), false);
    assert.equal(await verifyPassword('x', 'bcrypt$whatever'), false);
    assert.equal(await verifyPassword('x', 'scrypt$999999999$8$1$AAAA$AAAA'), false, 'absurd parameters are not run');
  },
);

test('the allow-list preview says what the matcher does, line by line', () => {
  const cases: [string, string, string[], string[]][] = [
    ['203.0.113.7', 'exactly 203.0.113.7', ['203.0.113.7'], ['203.0.113.8']],
    [
      '198.51.100.*',
      '198.51.100.0 to 198.51.100.255 (256 addresses)',
      ['198.51.100.0', '198.51.100.255'],
      ['198.51.101.1'],
    ],
    ['10.0.0.0/8', '10.0.0.0 to 10.255.255.255 (16,777,216 addresses)', ['10.200.3.4'], ['11.0.0.1']],
    ['10.1.2.3/16', '10.1.0.0 to 10.1.255.255 (65,536 addresses)', ['10.1.99.1'], ['10.2.0.1']],
    ['10.0.0.0/12', 'nothing: only /8, /16 and /24 prefixes are accepted', [], ['10.0.0.1']],
    ['2001:db8::1', 'exactly the IPv6 address 2001:db8::1', ['2001:0db8:0:0:0:0:0:1'], ['2001:db8::2']],
    ['example.com', 'nothing: not an IP address, a.b.c.* or a.b.c.d/8, /16, /24', [], ['93.184.216.34']],
    ['300.1.1.*', 'nothing: not an IP address, a.b.c.* or a.b.c.d/8, /16, /24', [], ['44.1.1.1']],
  ];
  for (const [entry, text, inside, outside] of cases) {
    const d = describeEntry(entry);
    assert.equal(d.text, text, entry);
    assert.equal(d.matches, inside.length > 0, entry);
    for (const ip of inside) assert.equal(compileEntry(entry)(ip), true, `${entry} lets ${ip} through`);
    for (const ip of outside) assert.equal(compileEntry(entry)(ip), false, `${entry} keeps ${ip} out`);
  }
});

test('form bodies: repeated names kept, bounded', () => {
  assert.deepEqual(parseForm('scopes=a&scopes=b&x=1'), { scopes: ['a', 'b'], x: ['1'] });
  assert.throws(
    () => parseForm(Array.from({ length: formFieldsMax + 1 }, (_, i) => `f${i}=1`).join('&')),
    ConsoleFormError,
  );
  assert.throws(() => parseForm(`a=${'x'.repeat(20_000)}`), ConsoleFormError);
});

test(
  'TOTP: the RFC 6238 vectors, a window of one step each side, a code good once, ' + 'secrets sealed to their user',
  () => {
    const rfcSecret = Buffer.from('12345678901234567890');
    for (const [t, code] of [
      [59, '94287082'],
      [1111111109, '07081804'],
      [1234567890, '89005924'],
      [2000000000, '69279037'],
    ] as const) {
      assert.equal(totpCode(rfcSecret, stepAt(t * 1000), 8), code, `T=${t}`);
    }
    assert.equal(base32(Buffer.from('foobar')), 'MZXW6YTBOI');
    const secret = Buffer.alloc(20, 7);
    const now = 1_800_000_000_000;
    const step = stepAt(now);
    assert.equal(matchTotp(secret, totpCode(secret, step), now, null), step);
    assert.equal(matchTotp(secret, totpCode(secret, step - 1), now, null), step - 1, 'the previous step');
    assert.equal(matchTotp(secret, totpCode(secret, step + 1), now, null), step + 1, 'the next step');
    assert.equal(matchTotp(secret, totpCode(secret, step - 2), now, null), undefined, 'two steps old');
    assert.equal(matchTotp(secret, totpCode(secret, step), now, step), undefined, 'a code already used');
    assert.equal(
      matchTotp(secret, totpCode(secret, step).replace(/(...)/, '$1 '), now, null),
      step,
      'spaces typed are ignored',
    );
    assert.equal(matchTotp(secret, 'abcdef', now, null), undefined);
    const key = Buffer.alloc(32, 1);
    const sealed = sealSecret(key, 'cus_a', secret);
    assert.deepEqual(openSecret(key, 'cus_a', sealed), secret);
    assert.doesNotMatch(sealed, new RegExp(base32(secret)));
    assert.throws(() => openSecret(key, 'cus_b', sealed), 'sealed to its user');
  },
);
