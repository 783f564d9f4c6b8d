/**
 * Hosted-screen tickets' pure rules (src/modules/hosted-screens/rules.ts), without a server:
 * lifetimes, ids, the link's origin and host check, the reference's ticket view, usability.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyRequest } from 'fastify';
import {
  hostedOrigin,
  hostedUrl,
  isTicketHost,
  isUsable,
  newTicketId,
  requestOrigin,
  ticketIdShape,
  ticketStateView,
  ticketTtlSeconds,
  ticketView,
} from '../src/modules/hosted-screens/rules.js';

/** The two fields of a request these rules read. */
const req = (host: string, publicBaseUrl = 'https://api-sandbox.example.com') =>
  ({ host, publicBaseUrl }) as unknown as FastifyRequest;

describe('tickets', () => {
  it('lifetimes: 24 hours for screens, 300 seconds for step-up and the card reveal', () => {
    assert.deepEqual(ticketTtlSeconds, {
      kyc: 86_400,
      profile_update: 86_400,
      card_supplement: 86_400,
      card_reveal: 300,
      step_up: 300,
    });
  });
  it('ids: kyc_ and 32 hex digits, a new one each time', () => {
    const ids = new Set(Array.from({ length: 50 }, newTicketId));
    assert.equal(ids.size, 50);
    for (const id of ids) assert.match(id, ticketIdShape);
    assert.equal(ticketIdShape.test('kyc_' + 'a'.repeat(31)), false);
    assert.equal(ticketIdShape.test('kyc_' + 'A'.repeat(32)), false);
    assert.equal(ticketIdShape.test('xkyc_' + 'a'.repeat(32)), false);
  });
  it('the origin is the configured public base URL, never the Host header', () => {
    assert.equal(
      hostedOrigin(req('evil.example', 'https://api-sandbox.example.com')),
      'https://api-sandbox.example.com',
    );
    assert.equal(requestOrigin, hostedOrigin);
  });
  it("url and view: the reference's three fields, expiry in Unix seconds (rounded down)", () => {
    const t = {
      id: 'kyc_' + '0'.repeat(32),
      public_origin: 'https://api-sandbox.example.com',
      expires_at: new Date('2026-01-01T00:00:00.999Z'),
    };
    assert.equal(hostedUrl(t), `https://api-sandbox.example.com/hosted/${t.id}`);
    assert.deepEqual(ticketView(t), { id: t.id, hosted_url: hostedUrl(t), expires_at: 1_767_225_600 });
    assert.deepEqual(ticketStateView({ ...t, purpose: 'kyc', status: 'open', outcome: null }), {
      id: t.id,
      hosted_url: hostedUrl(t),
      expires_at: 1_767_225_600,
      purpose: 'kyc',
      status: 'open',
      outcome: null,
    });
  });
});

describe('host check', () => {
  const ticket = { public_origin: 'https://api-sandbox.example.com' };
  it("the link's host passes, in any case, with or without its default port", () => {
    assert.equal(isTicketHost(ticket, req('api-sandbox.example.com')), true);
    assert.equal(isTicketHost(ticket, req('API-Sandbox.Example.com')), true);
    assert.equal(isTicketHost(ticket, req('api-sandbox.example.com:443')), true);
  });
  it("another host, another port or another environment is not the ticket's", () => {
    assert.equal(isTicketHost(ticket, req('api.example.com')), false);
    assert.equal(isTicketHost(ticket, req('api-sandbox.example.com:8443')), false);
    assert.equal(isTicketHost(ticket, req('api-sandbox.example.com.evil')), false);
    assert.equal(
      isTicketHost({ public_origin: 'http://api-sandbox.localhost:3000' }, req('api-sandbox.localhost:3000')),
      true,
    );
    assert.equal(
      isTicketHost({ public_origin: 'http://api-sandbox.localhost:3000' }, req('api-sandbox.localhost')),
      false,
    );
  });
  it("an unparsable origin or host is never the ticket's", () => {
    assert.equal(isTicketHost({ public_origin: 'not a url' }, req('api-sandbox.example.com')), false);
    assert.equal(isTicketHost(ticket, req('bad host/x')), false);
  });
});

describe('usability', () => {
  const now = new Date('2026-01-01T00:00:00.000Z');
  it('open and not yet expired; expired at the instant itself', () => {
    assert.equal(isUsable({ status: 'open', expires_at: new Date(now.getTime() + 1) }, now), true);
    assert.equal(isUsable({ status: 'open', expires_at: now }, now), false);
    assert.equal(isUsable({ status: 'open', expires_at: new Date(now.getTime() - 1) }, now), false);
  });
  it('a completed, used or void ticket is not usable, whatever its expiry', () => {
    for (const status of ['completed', 'used', 'void'] as const) {
      assert.equal(isUsable({ status, expires_at: new Date(now.getTime() + 3_600_000) }, now), false, status);
    }
  });
});
