import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import type { RunningService } from '../src/server.js';
import { MemberCache, memberWritesPlugin, ownMemberWriteBypassMs } from '../src/platform/auth/member-cache.js';
import type { ResolvedMember } from '../src/platform/http/request-context.js';
import { newMerchantClient, useTestService } from './support/service.js';

/** The member an `x-on-behalf-of` names, held per process (docs/performance.md, "Request pipeline and the authenticated
 * read"). */

const alice: ResolvedMember = { id: 'mem_a', external_member_id: 'alice', kyc_level: 1, status: 'active' };
const bob: ResolvedMember = { id: 'mem_b', external_member_id: 'bob', kyc_level: 0, status: 'active' };

function listeningCache(now = () => 0) {
  const cache = new MemberCache(now);
  cache.setListening(true);
  const byId = MemberCache.key('m', 'sandbox', 'mem_a');
  const byExternal = MemberCache.key('m', 'sandbox', 'alice');
  const other = MemberCache.key('m', 'sandbox', 'bob');
  cache.put(byId, alice, cache.begin());
  cache.put(byExternal, alice, cache.begin());
  cache.put(other, bob, cache.begin());
  return { cache, byId, byExternal, other };
}

describe('member cache', () => {
  it('holds nothing while no notification connection listens', () => {
    const cache = new MemberCache();
    const key = MemberCache.key('m', 'sandbox', 'alice');
    cache.put(key, alice, cache.begin());
    assert.equal(cache.get(key), undefined);
    cache.setListening(true);
    cache.put(key, alice, cache.begin());
    assert.equal(cache.get(key), alice);
    cache.setListening(false);
    assert.equal(cache.get(key), undefined, 'a lost connection forgets everything and reads per request');
  });

  it('forgets the members a notification names, under every key, and only them', () => {
    const { cache, byId, byExternal, other } = listeningCache();
    cache.onNotify('mem_x,mem_a');
    assert.equal(cache.get(byId), undefined);
    assert.equal(cache.get(byExternal), undefined);
    assert.equal(cache.get(other), bob);
    cache.onNotify('*');
    assert.equal(cache.size, 0);
  });

  it('never stores a read that began before a notification', () => {
    const cache = new MemberCache();
    cache.setListening(true);
    const generation = cache.begin();
    cache.onNotify('mem_zzz');
    cache.put(MemberCache.key('m', 'sandbox', 'alice'), alice, generation);
    assert.equal(cache.size, 0);
  });

  it("answers nothing for a while after this process's own update of members", () => {
    let now = 1_000;
    const { cache, other } = listeningCache(() => now);
    cache.ownWrite();
    assert.equal(cache.get(other), undefined);
    cache.put(other, bob, cache.begin());
    assert.equal(cache.size, 0, 'nothing stored while its own change may not have come back');
    now += ownMemberWriteBypassMs;
    cache.put(other, bob, cache.begin());
    assert.equal(cache.get(other), bob);
  });

  it(
    'sets aside only the members its own update names by id, until that change has surely come back; the ' +
      'others stay answered',
    () => {
      let now = 1_000;
      const { cache, byId, byExternal, other } = listeningCache(() => now);
      cache.ownWriteOf(['mem_a']);
      assert.equal(cache.get(byId), undefined);
      assert.equal(cache.get(byExternal), undefined);
      assert.equal(cache.get(other), bob, 'another member is still answered from memory');
      cache.put(byExternal, alice, cache.begin());
      assert.equal(cache.get(byExternal), undefined, 'not stored while its own change may not have come back');
      now += ownMemberWriteBypassMs;
      cache.put(byExternal, alice, cache.begin());
      assert.equal(cache.get(byExternal), alice);
    },
  );

  it('is told of updates and deletes of members sent through the database handle, not of other statements', () => {
    const cache = new MemberCache();
    const told: string[] = [];
    cache.ownWrite = () => {
      told.push('all');
    };
    cache.ownWriteOf = (ids) => {
      told.push(ids.join(','));
    };
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: {} as never }) }).withPlugin(
      memberWritesPlugin(cache),
    );
    db.selectFrom('members').selectAll().compile();
    db.insertInto('members').values({ id: 'x' }).compile();
    db.updateTable('merchants').set({ status: 'frozen' }).where('id', '=', 'x').compile();
    assert.deepEqual(told, []);
    db.updateTable('members').set({ status: 'suspended' }).where('id', '=', 'x').compile();
    db.updateTable('members as m').set({ kyc_level: 2 }).compile();
    db.deleteFrom('members').where('id', '=', 'y').compile();
    db.updateTable('members')
      .set({ kyc_level: 2 })
      .where('merchant_id', '=', 'm')
      .where('id', 'in', ['p', 'q'])
      .compile();
    db.updateTable('members').set({ kyc_level: 2 }).where('merchant_id', '=', 'm').compile();
    db.updateTable('members')
      .set({ kyc_level: 2 })
      .where((eb) => eb.or([eb('id', '=', 'r'), eb('external_member_id', '=', 's')]))
      .compile();
    assert.deepEqual(told, ['x', 'all', 'y', 'p,q', 'all', 'all']);
  });
});

describe('member cache in the service', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));

  it('forgets a member changed behind the service, straight in the table, on the notification', async () => {
    const { client, merchantId } = await newMerchantClient(service);
    const member = await client.members.create({ external_member_id: `behind-${Date.now()}` });
    const read = () =>
      client.requestRaw({ method: 'GET', path: '/v1/balances', onBehalfOf: member.external_member_id });
    assert.equal((await read()).status, 200);
    const key = MemberCache.key(merchantId, 'sandbox', member.external_member_id);
    assert.equal(service.ctx.memberCache.get(key)?.id, member.id, 'held');
    // Raw SQL, which the plugin does not see: only the notification can carry it.
    await service.ctx.db.executeQuery(
      CompiledQuery.raw('UPDATE members SET status = $1 WHERE id = $2', ['closed', member.id]),
    );
    // Embedded: delivered with the commit. PostgreSQL: on the listening connection, within milliseconds.
    let refused = await read();
    for (const started = Date.now(); refused.status === 200 && Date.now() - started < 1_000;) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      refused = await read();
    }
    assert.notEqual(service.ctx.memberCache.get(key)?.status, 'active', 'the old state is gone');
    assert.equal(refused.status, 404);
    assert.equal(refused.body.code, 'member_not_found');
  });
  // After the test above: this one's suspension makes the process bypass its cache for a while.
  it('reads balances on behalf of a held member, and refuses a member the moment it is suspended', async () => {
    const { client } = await newMerchantClient(service);
    const member = await client.members.create({ external_member_id: `held-${Date.now()}` });
    assert.equal(service.ctx.memberCache.isListening, true);
    const read = (who: string) => client.requestRaw({ method: 'GET', path: '/v1/balances', onBehalfOf: who });
    // Past this process's own write of the member (its creation is an insert: no bypass).
    assert.equal((await read(member.external_member_id)).status, 200);
    assert.equal((await read(member.id)).status, 200);
    const held = service.ctx.memberCache.size;
    assert.ok(held >= 2, 'held under its external id and its id');
    assert.equal((await read(member.external_member_id)).status, 200);
    assert.equal(service.ctx.memberCache.size, held, 'a second read is answered from memory');

    await client.members.suspend(member.id);
    for (const who of [member.external_member_id, member.id]) {
      const refused = await read(who);
      assert.equal(refused.status, 404);
      assert.equal(refused.body.code, 'member_not_found');
    }
  });
});
