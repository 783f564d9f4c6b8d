import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { RunningService } from '../src/server.js';
import { routeKeys } from '../src/platform/routes/route-access.js';
import { newMerchantClient, useTestService } from './support/service.js';
import { postMember } from './support/fixtures.js';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';

describe("a route's keys, worked out at registration", () => {
  it('the endpoint: the pattern with the decoded parameters put back, each encoded as one segment', () => {
    const topup = routeKeys('POST', '/v1/cards/:id/topups/:topup_id', true);
    assert.equal(topup.rateBucket, 'orders');
    assert.equal(topup.endpoint!({ id: 'crd_1', topup_id: 'ctu_2' }), 'POST /v1/cards/crd_1/topups/ctu_2');
    assert.equal(topup.endpoint!({ id: 'a/b c', topup_id: 'x' }), 'POST /v1/cards/a%2Fb%20c/topups/x');
    const deposits = routeKeys('POST', '/v1/deposits', true);
    assert.deepEqual([deposits.rateBucket, deposits.endpoint!({})], ['deposits', 'POST /v1/deposits']);
    assert.equal(routeKeys('POST', '/v1/members/:id/suspend', true).rateBucket, 'members_write');
    assert.equal(routeKeys('GET', '/v1/members/:id', false).rateBucket, 'reads');
    assert.equal(
      routeKeys('GET', '/v1/members/:id', false).endpoint,
      undefined,
      'built only for routes that take a key',
    );
    assert.throws(() => routeKeys('POST', '/v1/files/*', true), /plain :name parameters/);
  });
});

describe('idempotency', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));

  /** POST `path` with no body under idempotency key `key`, answered raw. */
  const postTo = (client: MerchantWalletClient, path: string, key: string, options: { onBehalfOf?: string } = {}) =>
    client.requestRaw({ method: 'POST', path, idempotencyKey: key, ...options });
  /** The endpoint the merchant's idempotency record under `key` was stored for. */
  const storedEndpoint = async (merchantId: string, key: string) =>
    (
      await service.ctx.db
        .selectFrom('idempotency_keys')
        .select('endpoint')
        .where('merchant_id', '=', merchantId)
        .where('key', '=', key)
        .executeTakeFirstOrThrow()
    ).endpoint;
  const countMembers = async (merchantId: string, externalId: string) => {
    const row = await service.ctx.db
      .selectFrom('members')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('merchant_id', '=', merchantId)
      .where('external_member_id', '=', externalId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };

  it('requires a key where the endpoint lists one, and checks only its shape', async () => {
    const { client } = await newMerchantClient(service);
    const none = await postMember(client, 'a', false);
    assert.equal(none.status, 400);
    assert.equal(none.body.code, 'idempotency_key_required');
    const bad = await postMember(client, 'a', 'not-a-uuid');
    assert.equal(bad.body.code, 'idempotency_key_invalid');
    const v1Shape = await postMember(client, 'a', 'aaaaaaaa-bbbb-1ccc-8ddd-eeeeeeeeeeee');
    assert.equal(v1Shape.status, 201, 'any 8-4-4-4-12 hex shape is accepted');
  });

  it('replays the first result with X-Idempotent-Replay and makes no second effect', async () => {
    const { client, merchantId } = await newMerchantClient(service);
    const key = randomUUID();
    const first = await postMember(client, 'replay', key);
    assert.equal(first.status, 201);
    assert.equal(first.headers['x-idempotent-replay'], undefined);
    const second = await postMember(client, 'replay', key);
    assert.equal(second.status, 201);
    assert.equal(second.headers['x-idempotent-replay'], 'true');
    assert.deepEqual(second.body, first.body);
    assert.equal(await countMembers(merchantId, 'replay'), 1);
  });

  it('compares bodies by content: key order and white space do not make another body', async () => {
    const { client } = await newMerchantClient(service);
    const key = randomUUID();
    const first = await client.requestRaw({
      method: 'POST',
      path: '/v1/members',
      rawBody: '{"external_member_id":"order","profile":{"country":"SG","first_name":"A"}}',
      idempotencyKey: key,
    });
    assert.equal(first.status, 201);
    const second = await client.requestRaw({
      method: 'POST',
      path: '/v1/members',
      rawBody: '{ "profile": {"first_name":"A","country":"SG"}, "external_member_id": "order" }',
      idempotencyKey: key,
    });
    assert.equal(second.headers['x-idempotent-replay'], 'true');
  });

  it('replays errors too', async () => {
    const { client } = await newMerchantClient(service);
    await client.members.create({ external_member_id: 'dup' });
    const key = randomUUID();
    const first = await postMember(client, 'dup', key);
    assert.equal(first.status, 409);
    assert.equal(first.body.code, 'duplicate_resource');
    const second = await postMember(client, 'dup', key);
    assert.equal(second.status, 409);
    assert.equal(second.headers['x-idempotent-replay'], 'true');
    assert.equal(second.body.request_id, first.body.request_id, 'the first result, as it was');
    assert.equal(
      second.headers['x-request-id'],
      second.body.request_id,
      'the header names the request the envelope names',
    );
    const invalid = randomUUID();
    const v1 = await postMember(client, 'bad id!', invalid);
    assert.equal(v1.body.code, 'invalid_request');
    const v2 = await postMember(client, 'bad id!', invalid);
    assert.equal(v2.headers['x-idempotent-replay'], 'true');
  });

  it('answers idempotency_key_reused for another body or another endpoint, and keeps the first result', async () => {
    const { client } = await newMerchantClient(service);
    const key = randomUUID();
    const first = await postMember(client, 'k1', key);
    assert.equal(first.status, 201);
    const otherBody = await postMember(client, 'k2', key);
    assert.equal(otherBody.status, 409);
    assert.equal(otherBody.body.code, 'idempotency_key_reused');
    assert.equal(otherBody.body.type, 'idempotency_error');
    const otherEndpoint = await postTo(client, '/v1/members/k1/suspend', key);
    assert.equal(otherEndpoint.body.code, 'idempotency_key_reused');
    const original = await postMember(client, 'k1', key);
    assert.equal(original.headers['x-idempotent-replay'], 'true');
    assert.equal(original.status, 201);
  });

  it("one endpoint for every spelling of a path: the router decodes it, and so does the key's record", async () => {
    const { client, merchantId } = await newMerchantClient(service);
    const key = randomUUID();
    const body = { external_member_id: 'spelled' };
    const first = await client.requestRaw({ method: 'POST', path: '/v1/%6dembers', body, idempotencyKey: key });
    assert.equal(first.status, 201, first.rawBody);
    for (const path of ['/v1/members', '/v1/%6D%65mbers']) {
      const again = await client.requestRaw({ method: 'POST', path, body, idempotencyKey: key });
      assert.equal(again.status, 201, `${path}: ${again.rawBody}`);
      assert.equal(again.headers['x-idempotent-replay'], 'true', path);
      assert.deepEqual(again.body, first.body, path);
    }
    assert.equal(await countMembers(merchantId, 'spelled'), 1);
    // Stored as the path the SDK sends: records written before and after agree.
    assert.equal(await storedEndpoint(merchantId, key), 'POST /v1/members');

    // With a parameter: the decoded value is the endpoint's (an escaped id is the same member), another id is another
    // endpoint.
    const other = await client.members.create({ external_member_id: 'spelled-2' });
    const id = first.body.id as string;
    const suspendKey = randomUUID();
    const suspended = await postTo(
      client,
      `/v1/members/%${id.charCodeAt(0).toString(16)}${id.slice(1)}/suspend`,
      suspendKey,
    );
    assert.equal(suspended.status, 200, suspended.rawBody);
    const replay = await postTo(client, `/v1/members/${id}/suspend`, suspendKey);
    assert.equal(replay.headers['x-idempotent-replay'], 'true', replay.rawBody);
    const otherMember = await postTo(client, `/v1/members/${other.id}/suspend`, suspendKey);
    assert.equal(otherMember.status, 409);
    assert.equal(otherMember.body.code, 'idempotency_key_reused');
    // An escaped slash stays inside its segment: `a%2Fb` is not the path a/b.
    const slashKey = randomUUID();
    const slashed = await postTo(client, '/v1/members/x%2Fy/suspend', slashKey);
    assert.equal(slashed.status, 404, slashed.rawBody);
    assert.equal(await storedEndpoint(merchantId, slashKey), 'POST /v1/members/x%2Fy/suspend');
  });

  it('a deposit (a grouped write) sent as /v1/deposits and as /v1/%64eposits is one endpoint', async () => {
    const { client } = await newMerchantClient(service);
    const member = await client.members.create({ external_member_id: 'spelled-deposit' });
    const key = randomUUID();
    const body = { member_id: member.id, asset: 'USDT', amount: '1', tx_hash: `0x${randomUUID().replace(/-/g, '')}` };
    const first = await client.requestRaw({ method: 'POST', path: '/v1/deposits', body, idempotencyKey: key });
    assert.equal(first.status, 201, first.rawBody);
    const escaped = await client.requestRaw({ method: 'POST', path: '/v1/%64eposits', body, idempotencyKey: key });
    assert.equal(escaped.status, 201, escaped.rawBody);
    assert.equal(escaped.headers['x-idempotent-replay'], 'true');
    assert.deepEqual(escaped.body, first.body);
  });

  it(
    'on behalf of another member, the same key and body is another request: idempotency_key_reused, not the ' +
      "first member's result",
    async () => {
      const { client } = await newMerchantClient(service);
      for (const m of ['obo-a', 'obo-b']) await client.members.create({ external_member_id: m });
      const key = randomUUID();
      const first = await postTo(client, '/v1/kyc/sessions', key, { onBehalfOf: 'obo-a' });
      assert.equal(first.status, 201, JSON.stringify(first.body));
      const other = await postTo(client, '/v1/kyc/sessions', key, { onBehalfOf: 'obo-b' });
      assert.equal(other.status, 409, JSON.stringify(other.body));
      assert.equal(other.body.code, 'idempotency_key_reused');
      // The member named either way is one member: its own retry replays.
      const internalA = (await client.members.get('obo-a')).id;
      const again = await postTo(client, '/v1/kyc/sessions', key, { onBehalfOf: internalA });
      assert.equal(again.status, 201);
      assert.equal(again.headers['x-idempotent-replay'], 'true');
      assert.equal(again.body.id, first.body.id);
    },
  );

  it('keys are per merchant: another merchant may use the same key', async () => {
    const a = await newMerchantClient(service);
    const b = await newMerchantClient(service);
    const key = randomUUID();
    assert.equal((await postMember(a.client, 'x', key)).status, 201);
    const other = await postMember(b.client, 'x', key);
    assert.equal(other.status, 201);
    assert.equal(other.headers['x-idempotent-replay'], undefined);
  });

  it(
    'makes one effect for parallel requests with one key; ' + 'the others replay or are told it is in progress',
    async () => {
      const { client, merchantId } = await newMerchantClient(service);
      const key = randomUUID();
      const results = await Promise.all(Array.from({ length: 12 }, () => postMember(client, 'parallel', key)));
      const statuses = results.map((r) => r.status);
      assert.ok(
        statuses.every((s) => s === 201 || s === 409),
        statuses.join(','),
      );
      for (const r of results.filter((x) => x.status === 409)) assert.equal(r.body.code, 'idempotency_in_progress');
      const fresh = results.filter((r) => r.status === 201 && r.headers['x-idempotent-replay'] === undefined);
      assert.equal(fresh.length, 1, 'exactly one request ran the effect');
      assert.equal(await countMembers(merchantId, 'parallel'), 1);
      const after = await postMember(client, 'parallel', key);
      assert.equal(after.headers['x-idempotent-replay'], 'true');
      assert.equal(after.body.id, fresh[0]!.body.id);
    },
  );

  it('treats a key older than 24 hours as new', async () => {
    const { client, merchantId } = await newMerchantClient(service);
    const key = randomUUID();
    const first = await postMember(client, 'old-key', key);
    assert.equal(first.status, 201);
    await sql`UPDATE idempotency_keys SET created_at = now() - interval '24 hours 1 second' WHERE merchant_id =
      ${merchantId} AND key = ${key}`.execute(service.ctx.db);
    const again = await postMember(client, 'old-key-2', key);
    assert.equal(again.status, 201, 'a new body is fine: the old record no longer counts');
    assert.equal(again.headers['x-idempotent-replay'], undefined);
    const replay = await postMember(client, 'old-key-2', key);
    assert.equal(replay.headers['x-idempotent-replay'], 'true');
  });
});
