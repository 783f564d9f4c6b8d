import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningService } from '../src/server.js';
import { expectCode } from './support/expect.js';
import { admin, newMerchantClient, useTestService } from './support/service.js';
import { rowById } from './support/fixtures.js';

describe('members', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));

  it('creates a member with the contract fields and reads it by either id', async () => {
    const { client } = await newMerchantClient(service);
    const m = (await client.members.create({
      external_member_id: 'Ab_1.2:3-x',
      profile: { first_name: 'Ada', country: 'SG' },
    })) as any;
    assert.match(m.id, /^mem_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(m.external_member_id, 'Ab_1.2:3-x');
    assert.equal(m.status, 'active');
    assert.equal(m.kyc_level, 0);
    assert.ok(!Number.isNaN(Date.parse(m.created_at)));
    assert.deepEqual(m.profile, { first_name: 'Ada', country: 'SG' });
    assert.deepEqual(await client.members.get(m.id), m);
    assert.deepEqual(await client.members.get('Ab_1.2:3-x'), m);
  });

  it(
    "answers every profile field it was given (each one declared by the answer's schema, or the serializer " +
      'would drop it)',
    async () => {
      const { client } = await newMerchantClient(service);
      const profile = {
        email: 'ada@example.com',
        phone: '+6591234567',
        first_name: 'Ada',
        last_name: 'Lovelace',
        date_of_birth: '1990-12-10',
        country: 'SG',
      };
      const m = (await client.members.create({ external_member_id: 'full-profile', profile })) as any;
      assert.deepEqual(m.profile, profile);
      assert.deepEqual(((await client.members.get(m.id)) as any).profile, profile);
    },
  );

  it('checks the external id: 1 to 64 of A-Z a-z 0-9 _ . : -', async () => {
    const { client } = await newMerchantClient(service);
    for (const bad of ['', 'a b', 'é', 'x'.repeat(65), 'a/b', 'a@b']) {
      await expectCode(client.members.create({ external_member_id: bad }), 'invalid_request', 400);
    }
    const longest = (await client.members.create({ external_member_id: 'x'.repeat(64) })) as any;
    assert.equal(longest.external_member_id.length, 64);
  });

  it(
    "refuses an external id in the service's own id form (mem_<uuid>): it would name another member in " +
      'x-on-behalf-of',
    async () => {
      const { client } = await newMerchantClient(service);
      const first = (await client.members.create({ external_member_id: 'plain' })) as any;
      await expectCode(client.members.create({ external_member_id: first.id }), 'invalid_request', 400);
      await expectCode(
        client.members.create({ external_member_id: 'mem_00000000-0000-4000-8000-000000000000' }),
        'invalid_request',
        400,
      );
      // In any letter case (sessions/revoke, which takes only external ids, refuses the form in any case too).
      await expectCode(client.members.create({ external_member_id: first.id.toUpperCase() }), 'invalid_request', 400);
      // Only that form: other ids that start alike are the merchant's to choose.
      for (const ok of ['mem_1', `${first.id}x`]) {
        assert.equal(((await client.members.create({ external_member_id: ok })) as any).external_member_id, ok);
      }
      assert.equal(((await client.members.get(first.id)) as any).external_member_id, 'plain');
    },
  );

  it('answers duplicate_resource for an external id already used by this merchant in this environment', async () => {
    const { client } = await newMerchantClient(service);
    await client.members.create({ external_member_id: 'twice' });
    await expectCode(client.members.create({ external_member_id: 'twice' }), 'duplicate_resource', 409);
    const other = await newMerchantClient(service);
    await other.client.members.create({ external_member_id: 'twice' });
  });

  it("hides other merchants' members", async () => {
    const a = await newMerchantClient(service);
    const b = await newMerchantClient(service);
    const m = (await a.client.members.create({ external_member_id: 'mine' })) as any;
    await expectCode(b.client.members.get(m.id), 'member_not_found', 404);
    await expectCode(b.client.members.suspend(m.id), 'member_not_found', 404);
    await expectCode(b.client.members.revokeSessions('mine'), 'member_not_found', 404);
  });

  it('suspends a member: on-behalf-of calls then answer member_not_found', async () => {
    const { client } = await newMerchantClient(service);
    const m = (await client.members.create({ external_member_id: 'to-suspend' })) as any;
    await client.balances.list({ onBehalfOf: 'to-suspend' });
    assert.deepEqual(await client.members.suspend('to-suspend'), { id: m.id, status: 'suspended' });
    assert.deepEqual(
      await client.members.suspend(m.id),
      { id: m.id, status: 'suspended' },
      'suspending again is harmless',
    );
    await expectCode(client.balances.list({ onBehalfOf: m.id }), 'member_not_found', 404);
    await expectCode(client.balances.list({ onBehalfOf: 'to-suspend' }), 'member_not_found', 404);
  });

  it(
    'suspending a member voids its hosted-screen links: ' + 'the sandbox helper cannot complete one for it either',
    async () => {
      const { client } = await newMerchantClient(service);
      const m = (await client.members.create({ external_member_id: 'suspended-kyc' })) as any;
      const ticket = await client.kyc.createSession({ onBehalfOf: m.id });
      await client.members.suspend(m.id);
      // The page refuses a suspended member's link (410); the helper acts as the member on that page would.
      await expectCode(client.hostedScreens.sandboxComplete(ticket.id, 'submitted'), 'state_invalid', 400);
      const profile = await service.ctx.db
        .selectFrom('kyc_profiles')
        .select('id')
        .where('member_id', '=', m.id)
        .executeTakeFirst();
      assert.equal(profile, undefined, 'no KYC profile is made for a suspended member');
    },
  );

  it('the sandbox KYC reviewer does not find a suspended member either', async () => {
    const { client } = await newMerchantClient(service);
    const m = (await client.members.create({ external_member_id: 'suspended-review' })) as any;
    await client.hostedScreens.sandboxComplete((await client.kyc.createSession({ onBehalfOf: m.id })).id, 'submitted');
    await client.members.suspend(m.id);
    await expectCode(client.kyc.sandboxReview(m.id, { decision: 'approved' }), 'member_not_found', 404);
    const row = await service.ctx.db
      .selectFrom('kyc_profiles')
      .select('status')
      .where('member_id', '=', m.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.status, 'pending_review', 'nothing reviewed');
  });

  it(
    'x-on-behalf-of takes mem_<uuid> or the external id; a bare uuid, an e-mail or a phone is not recognised; ' +
      'blank is no member',
    async () => {
      const { client } = await newMerchantClient(service);
      const m = (await client.members.create({
        external_member_id: 'obo-forms',
        profile: { email: 'obo@example.com', phone: '+6591234568' },
      })) as any;
      for (const ok of [m.id, 'obo-forms']) await client.balances.list({ onBehalfOf: ok });
      for (const other of [m.id.slice('mem_'.length), 'obo@example.com', '+6591234568']) {
        await expectCode(client.balances.list({ onBehalfOf: other }), 'member_not_found', 404);
        await expectCode(client.kyc.createSession({ onBehalfOf: other }), 'member_not_found', 404);
      }
      await expectCode(client.kyc.createProfileSession({ onBehalfOf: '' }), 'member_context_required', 400);
      const blank = await client.requestRaw({ method: 'POST', path: '/v1/kyc/profile-sessions', onBehalfOf: '   ' });
      assert.deepEqual([blank.status, blank.body.code], [400, 'member_context_required']);
    },
  );

  it('revokes sessions by external id only', async () => {
    const { client } = await newMerchantClient(service);
    const m = (await client.members.create({ external_member_id: 'signed-in' })) as any;
    assert.deepEqual(await client.members.revokeSessions('signed-in'), { id: 'signed-in', revoked: true });
    await expectCode(client.members.revokeSessions(m.id), 'member_not_found', 404);
    await expectCode(client.members.revokeSessions('nobody'), 'member_not_found', 404);
    const row = await rowById(service, 'members', m.id);
    assert.ok(row.sessions_revoked_at, 'every session and hosted link issued before now is void');
  });

  it('sets the KYC level through the operator review', async () => {
    const { client } = await newMerchantClient(service);
    const m = (await client.members.create({ external_member_id: 'kyc' })) as any;
    const approved = await admin(service, 'POST', `/admin/v1/members/${m.id}/kyc-review`, {
      decision: 'approved',
      level: 2,
    });
    assert.deepEqual(approved.body, { id: m.id, kyc_level: 2 });
    assert.equal(((await client.members.get('kyc')) as any).kyc_level, 2);
    const rejected = await admin(service, 'POST', `/admin/v1/members/${m.id}/kyc-review`, { decision: 'rejected' });
    assert.equal(rejected.body.kyc_level, 0);
    const bad = await admin(service, 'POST', `/admin/v1/members/${m.id}/kyc-review`, { decision: 'maybe' });
    assert.equal(bad.body.code, 'invalid_request');
    const unknown = await admin(
      service,
      'POST',
      '/admin/v1/members/mem_00000000-0000-4000-8000-000000000000/kyc-review',
      { decision: 'approved' },
    );
    assert.equal(unknown.status, 404);
  });
});
