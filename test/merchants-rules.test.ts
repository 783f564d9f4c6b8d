/**
 * Merchants' and API keys' pure rules (src/modules/merchants/rules.ts), without a server:
 * restricted scopes, the production allow-list, a key's expiry, and when a change ends its tokens.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  merchantStatuses,
  requireAllowlist,
  requireFutureExpiry,
  splitScopes,
  stopsTokens,
} from '../src/modules/merchants/rules.js';
import { ApiError } from '../src/platform/errors.js';

const fieldsOf = (fn: () => void) => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError);
    assert.equal(err.code, 'invalid_fields');
    return (err.extras as { fields: unknown }).fields;
  }
  assert.fail('expected invalid_fields');
};

describe('scopes', () => {
  const asked = ['members:read', 'deposits:write', 'cards:secure', 'members:read', 'nonsense', 42];
  it('sandbox: every known scope at once, duplicates and unknown keys dropped', () => {
    assert.deepEqual(splitScopes('sandbox', asked), {
      scopes: ['members:read', 'deposits:write', 'cards:secure'],
      pending: [],
    });
  });
  it('production: restricted scopes wait for approval', () => {
    assert.deepEqual(splitScopes('production', asked), {
      scopes: ['members:read'],
      pending: ['deposits:write', 'cards:secure'],
    });
    assert.deepEqual(splitScopes('production', []), { scopes: [], pending: [] });
  });
  it('statuses', () => {
    assert.deepEqual([...merchantStatuses], ['active', 'suspended', 'frozen', 'closed']);
  });
});

describe('allow-list', () => {
  it('a production key needs a non-empty one; blank lines do not count', () => {
    assert.deepEqual(
      fieldsOf(() => requireAllowlist('production', '')),
      [{ key: 'ip_allowlist', reason: 'required' }],
    );
    assert.deepEqual(
      fieldsOf(() => requireAllowlist('production', ' \n\r\n  ')),
      [{ key: 'ip_allowlist', reason: 'required' }],
    );
    assert.doesNotThrow(() => requireAllowlist('production', '203.0.113.7'));
  });
  it('a sandbox key needs none', () => {
    assert.doesNotThrow(() => requireAllowlist('sandbox', ''));
  });
});

describe('expiry', () => {
  const now = new Date('2026-05-01T12:00:00.000Z');
  it('at or before now is refused; a millisecond later or none is fine', () => {
    assert.deepEqual(
      fieldsOf(() => requireFutureExpiry(now, now)),
      [{ key: 'expires_at', reason: 'in_the_past' }],
    );
    assert.deepEqual(
      fieldsOf(() => requireFutureExpiry(new Date(now.getTime() - 1), now)),
      [{ key: 'expires_at', reason: 'in_the_past' }],
    );
    assert.doesNotThrow(() => requireFutureExpiry(new Date(now.getTime() + 1), now));
    assert.doesNotThrow(() => requireFutureExpiry(null, now));
  });
});

describe('stopsTokens', () => {
  const now = new Date('2026-05-01T12:00:00.000Z');
  const past = new Date(now.getTime() - 1000);
  const future = new Date(now.getTime() + 1000);
  const live = { disabled: false, expires_at: null };
  it('a change that keeps a live key live does not', () => {
    assert.equal(stopsTokens(live, {}, now), false);
    assert.equal(stopsTokens(live, { expiresAt: future }, now), false);
    assert.equal(stopsTokens({ disabled: false, expires_at: future.toISOString() }, { expiresAt: null }, now), false);
  });
  it('disabling or expiring a live key does', () => {
    assert.equal(stopsTokens(live, { disabled: true }, now), true);
    assert.equal(stopsTokens(live, { expiresAt: past }, now), true);
    assert.equal(stopsTokens(live, { expiresAt: now }, now), true, 'expiring now is expired');
  });
  it('a key stopped before stays stopped: re-enabling or lifting a passed expiry does not revive its tokens', () => {
    assert.equal(stopsTokens({ disabled: true, expires_at: null }, { disabled: false }, now), true);
    assert.equal(stopsTokens({ disabled: false, expires_at: past.toISOString() }, { expiresAt: null }, now), true);
    assert.equal(stopsTokens({ disabled: false, expires_at: past }, { expiresAt: future }, now), true);
  });
});
