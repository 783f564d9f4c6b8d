/**
 * Tenant isolation of the whole public API. Every route that names an object (a path parameter)
 * is probed by three intruders, each of which must get the reference's not-found answer for
 * merchant A's objects (of A's sandbox member X): another merchant (B), A's own production side
 * (the environment is decided by the host), and A's other member Y acting on-behalf-of. The route
 * list is the one the service registers, so a new route fails the coverage test until it is probed.
 * Then the lists, the ids carried in bodies, headers and queries, the idempotency keys, nonces and
 * rate-limit windows, the webhook records, tokens and hosted-screen tickets on the other host, the
 * operator paths on the public listener, the merchant console, and the sandbox tools and clock.
 * The objects are made in support/isolation-world.ts, the probes are in support/isolation-probes.ts.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient, RawResult } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import type { RouteAccess } from '../src/platform/routes/route-access.js';
import { admin, baseUrlFor, useTestService } from './support/service.js';
import { getHostedPage, postHostedPage } from './support/hosted.js';
import { signedInConsole } from './support/console.js';
import { rawRequest } from './support/raw-http.js';
import { fanOut } from '../src/modules/webhooks/fan-out.js';
import { payNow } from './support/emv.js';
import { buildWorld, fund, party, type Member, type Party, type World } from './support/isolation-world.js';
import { ghostOf, ownedIds, probes } from './support/isolation-probes.js';
import { sepa } from './support/fixtures.js';
import { registeredPublicRoutes, type PublicRoute } from './support/declared-routes.js';

const notFoundCodes = ['not_found', 'resource_not_found', 'member_not_found'];
const objectRoute = (r: PublicRoute) => !r.hidden && r.access.scope !== 'public' && r.url.includes('/:');

interface Intruder {
  name: string;
  client: MerchantWalletClient;
  member: Member;
  sameMerchant: boolean;
}

/** The ways an intruder may call a route: as the merchant, on behalf of its member, or both. */
function callers(access: RouteAccess, intruder: Intruder): (string | undefined)[] {
  const principal = access.principal ?? 'merchant';
  // A's own merchant principal may see every member's objects: only other merchants' is a leak.
  const asMerchant = intruder.sameMerchant ? [] : [undefined];
  if (principal === 'merchant') return asMerchant;
  if (principal === 'member') return [intruder.member.external];
  return [...asMerchant, intruder.member.external];
}

const describeCall = (r: RawResult) => `${r.status} ${r.rawBody.slice(0, 300)}`;

describe('tenant isolation audit', () => {
  let service: RunningService;
  let world: World;
  let routes: PublicRoute[];
  let intruders: Intruder[];
  useTestService({ config: { simulatorConfirmDelayMs: 0 }, merchant: false }, (s) => ({ service } = s));
  before(async () => {
    world = await buildWorld(service);
    routes = await registeredPublicRoutes(service);
    intruders = [
      { name: 'merchant B', client: world.b.client, member: world.b.member, sameMerchant: false },
      { name: 'A on production', client: world.aProd.client, member: world.aProd.member, sameMerchant: false },
      { name: 'A acting for member Y', client: world.a.client, member: world.y, sameMerchant: true },
    ];
  });

  it('every public route that names an object has a probe (and every probe a route)', () => {
    const named = routes.filter(objectRoute).map((r) => `${r.method} ${r.url}`);
    assert.deepEqual(
      named.filter((r) => !probes[r]),
      [],
      'routes without an isolation probe: add one to `probes`',
    );
    assert.deepEqual(
      Object.keys(probes).filter((p) => !named.includes(p)),
      [],
      'probes of routes that no longer exist',
    );
  });

  it(
    'the owner reaches every probed object (so that a not-found below means isolation, ' + 'not a wrong probe)',
    async () => {
      const { a, objects } = world;
      for (const r of routes.filter((r) => objectRoute(r) && r.method === 'GET')) {
        for (const probe of probes[`${r.method} ${r.url}`]!(objects)) {
          const onBehalfOf =
            r.access.principal === 'member' || r.access.principal === 'either' ? objects.member.external : undefined;
          const res = await a.client.requestRaw({ method: 'GET', path: probe.path, onBehalfOf });
          assert.equal(res.status, 200, `${r.method} ${probe.path} as its owner: ${describeCall(res)}`);
        }
      }
    },
  );

  it('another merchant, the other environment and another member get not-found on every object route', async () => {
    const leaks: string[] = [];
    for (const intruder of intruders) {
      for (const r of routes.filter(objectRoute)) {
        for (const [i, probe] of probes[`${r.method} ${r.url}`]!(world.objects).entries()) {
          for (const onBehalfOf of callers(r.access, intruder)) {
            const ask = (call: { path: string; body?: unknown }) =>
              intruder.client.requestRaw({
                method: r.method as 'GET',
                path: call.path,
                body: call.body,
                onBehalfOf,
                idempotencyKey: r.access.idempotency && r.access.idempotency !== 'none' ? randomUUID() : false,
              });
            const res = await ask(probe);
            if (res.status !== 404 || !notFoundCodes.includes(res.body?.code)) {
              leaks.push(
                `${intruder.name}${onBehalfOf ? ' (on behalf)' : ''}: ${r.method} ${probe.path} → ${describeCall(res)}`,
              );
            }
            // Nor may the words tell A's object from one that does not exist.
            const ghost = probes[`${r.method} ${r.url}`]!(ghostOf(world.objects))[i]!;
            const none = await ask(ghost);
            if (
              none.status !== res.status ||
              none.body?.code !== res.body?.code ||
              none.body?.message !== res.body?.message
            ) {
              leaks.push(
                `${intruder.name}${onBehalfOf ? ' (on behalf)' : ''}: ${r.method} ${probe.path} ` +
                  `→ ${describeCall(res)}; an unknown id → ${describeCall(none)}`,
              );
            }
          }
        }
      }
    }
    assert.deepEqual(leaks, []);
  });

  it(
    "no list shows A's objects to another merchant, the other environment or another member, whatever its " +
      'filters or cursor',
    async () => {
      const { a, objects } = world;
      const ids = ownedIds(objects);
      // The event stream is not a list (it stays open): test/events-stream.test.ts checks that another merchant's
      // stream
      // never carries A's events.
      const lists = routes.filter(
        (r) =>
          r.method === 'GET' &&
          !r.hidden &&
          r.access.scope !== 'public' &&
          !r.url.includes('/:') &&
          r.url !== '/v1/events/stream',
      );
      // A's own lists show every listed object (the check below could see them) and give cursors to reuse.
      const ownerText: string[] = [];
      const cursors: Record<string, string> = {};
      for (const r of lists) {
        for (const onBehalfOf of callers(r.access, {
          name: 'A',
          client: a.client,
          member: objects.member,
          sameMerchant: false,
        })) {
          const res = await a.client.requestRaw({ method: 'GET', path: r.url, query: { limit: 1 }, onBehalfOf });
          ownerText.push(res.rawBody);
          if (res.body?.next_cursor) cursors[r.url] = res.body.next_cursor;
          const all = await a.client.requestRaw({ method: 'GET', path: r.url, query: { limit: 100 }, onBehalfOf });
          ownerText.push(all.rawBody);
        }
      }
      const listed = [
        'deposit',
        'withdrawal',
        'qrPayment',
        'endpoint',
        'delivery',
        'depositAddress',
        'payee',
        'remittance',
        'quote',
        'exchangeOrder',
        'earnOrder',
        'position',
        'card',
        'replacement',
      ] as const;
      assert.deepEqual(
        listed.filter((k) => !ownerText.some((t) => t.includes(`"${objects[k]}"`))),
        [],
        "the owner's lists show these objects",
      );
      assert.ok(Object.keys(cursors).length >= 3, `cursors to reuse: ${Object.keys(cursors).join(', ')}`);

      const filters = [
        {},
        { member_id: objects.member.id },
        { member_id: objects.member.external },
        { card_id: objects.card },
      ];
      const leaks: string[] = [];
      for (const intruder of intruders) {
        for (const r of lists) {
          for (const onBehalfOf of callers(r.access, intruder)) {
            for (const query of [...filters, ...(cursors[r.url] ? [{ cursor: cursors[r.url]! }] : [])]) {
              const res = await intruder.client.requestRaw({
                method: 'GET',
                path: r.url,
                query: { limit: 100, ...query },
                onBehalfOf,
              });
              const seen = ids.filter((id) => res.rawBody.includes(`"${id}"`));
              if (seen.length || res.status >= 500)
                leaks.push(
                  `${intruder.name}${onBehalfOf ? ' (on behalf)' : ''}: GET ${r.url} ${JSON.stringify(query)} ` +
                    `→ ${res.status} shows ${seen.join(', ')}`,
                );
            }
          }
        }
      }
      assert.deepEqual(leaks, []);
    },
  );

  it("an id of A's carried in a body, a header or beside the intruder's own object is not found", async () => {
    const { objects: o, b } = world;
    const member = (i: Intruder) => i.member.external;
    const cases: [Intruder, string, () => Promise<RawResult>][] = [];
    for (const i of intruders) {
      const c = i.client;
      if (!i.sameMerchant) {
        for (const id of [o.member.id, o.member.external]) {
          cases.push([
            i,
            `deposit for A's member ${id}`,
            () =>
              c.requestRaw({
                method: 'POST',
                path: '/v1/deposits',
                body: { member_id: id, asset: 'USDT', amount: '1', tx_hash: `t-${randomUUID()}` },
              }),
          ]);
          cases.push([
            i,
            `x-on-behalf-of A's member ${id}`,
            () => c.requestRaw({ method: 'GET', path: '/v1/balances', onBehalfOf: id }),
          ]);
        }
      }
      cases.push([
        i,
        "remittance to A's payee",
        () =>
          c.requestRaw({
            method: 'POST',
            path: '/v1/remittances',
            body: { payee_id: o.payee, source_asset: 'USDT', source_amount: '10' },
            onBehalfOf: member(i),
          }),
      ]);
      cases.push([
        i,
        "execution of A's locked quote",
        () =>
          c.requestRaw({
            method: 'POST',
            path: '/v1/exchange/orders',
            body: { quote_id: o.quote },
            onBehalfOf: member(i),
          }),
      ]);
    }
    const bi = intruders[0]!;
    cases.push([
      bi,
      "A's top-up under B's card",
      () =>
        b.client.requestRaw({
          method: 'GET',
          path: `/v1/cards/${b.card}/topups/${o.topup}`,
          onBehalfOf: b.member.external,
        }),
    ]);
    for (const follow of ['clearings', 'reversals', 'refunds']) {
      cases.push([
        bi,
        `${follow} of A's authorisation on B's card`,
        () =>
          b.client.requestRaw({
            method: 'POST',
            path: `/v1/sandbox/cards/${b.card}/${follow}`,
            body: { transaction_id: o.transaction },
          }),
      ]);
    }
    const leaks: string[] = [];
    for (const [i, what, call] of cases) {
      const res = await call();
      if (res.status !== 404 || !notFoundCodes.includes(res.body?.code))
        leaks.push(`${i.name}: ${what} → ${describeCall(res)}`);
    }
    assert.deepEqual(leaks, []);
  });

  it("idempotency keys are the merchant's, per environment and member: never another's stored result", async () => {
    const { a, aProd, b, objects: o, y } = world;
    const key = randomUUID();
    const body = { external_member_id: `same-${randomUUID().slice(0, 8)}` };
    const first = await a.client.requestRaw({ method: 'POST', path: '/v1/members', body, idempotencyKey: key });
    assert.equal(first.status, 201, first.rawBody);
    for (const [name, c] of [
      ['merchant B', b.client],
      ['A on production', aProd.client],
    ] as const) {
      const again = await c.requestRaw({ method: 'POST', path: '/v1/members', body, idempotencyKey: key });
      assert.equal(again.status, 201, `${name}: ${again.rawBody}`);
      assert.equal(again.headers['x-idempotent-replay'], undefined, name);
      assert.notEqual(again.body.id, first.body.id, `${name} got A's member`);
      const other = await c.requestRaw({
        method: 'POST',
        path: '/v1/members',
        body: { external_member_id: `other-${randomUUID().slice(0, 8)}` },
        idempotencyKey: key,
      });
      assert.equal(other.status, 409, `${name}: the key is now its own: ${other.rawBody}`);
    }
    // The grouped write (docs/group-commit.md) reads its keys in a statement of its own.
    const dkey = randomUUID();
    const depositOf = (p: Party) =>
      p.client.requestRaw({
        method: 'POST',
        path: '/v1/deposits',
        body: { member_id: p.member.external, asset: 'USDT', amount: '1', tx_hash: `same-${dkey}` },
        idempotencyKey: dkey,
      });
    const aDeposit = await depositOf(a);
    assert.equal(aDeposit.status, 201, aDeposit.rawBody);
    for (const p of [b, aProd]) {
      const theirs = await depositOf(p);
      assert.equal(theirs.status, 201, `same key and tx_hash elsewhere: ${theirs.rawBody}`);
      assert.equal(theirs.headers['x-idempotent-replay'], undefined);
      assert.notEqual(theirs.body.id, aDeposit.body.id);
    }
    const replay = await a.client.requestRaw({ method: 'POST', path: '/v1/members', body, idempotencyKey: key });
    assert.equal(replay.headers['x-idempotent-replay'], 'true', 'the owner still replays');
    assert.equal(replay.body.id, first.body.id);

    // One merchant, two members: the same key and body for Y is refused, never X's result.
    const postFor = (member: string, path: string, body: unknown, key: string) =>
      a.client.requestRaw({ method: 'POST', path, body, onBehalfOf: member, idempotencyKey: key });
    const wkey = randomUUID();
    const withdrawal = { asset: 'USDT', network: 'TRON', address: 'TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW', amount: '1' };
    const mine = await postFor(o.member.external, '/v1/withdrawals', withdrawal, wkey);
    assert.equal(mine.status, 201, mine.rawBody);
    const theirs = await postFor(y.external, '/v1/withdrawals', withdrawal, wkey);
    assert.equal(theirs.body?.code, 'idempotency_key_reused', theirs.rawBody);
    const qkey = randomUUID();
    const quote = { from_asset: 'USDT', to_asset: 'USDC', from_amount: '5', lock: true };
    const locked = await postFor(o.member.external, '/v1/exchange/quotes', quote, qkey);
    assert.equal(locked.status, 200, locked.rawBody);
    const yours = await postFor(y.external, '/v1/exchange/quotes', quote, qkey);
    assert.notEqual(yours.body?.quote_id ?? null, locked.body.quote_id, "Y got X's locked quote");
    const bQuote = await b.client.requestRaw({
      method: 'POST',
      path: '/v1/exchange/quotes',
      body: quote,
      onBehalfOf: b.member.external,
      idempotencyKey: qkey,
    });
    assert.notEqual(bQuote.body?.quote_id ?? null, locked.body.quote_id, "B got A's locked quote");
  });

  it(
    "an external member id is the merchant's own: " + "another merchant and the other environment may use A's",
    async () => {
      for (const c of [world.b.client, world.aProd.client]) {
        // Y's, not X's: X's external id is one the other tests look for in every answer.
        const res = await c.requestRaw({
          method: 'POST',
          path: '/v1/members',
          body: { external_member_id: world.y.external },
        });
        assert.equal(res.status, 201, res.rawBody);
        assert.notEqual(res.body.id, world.y.id);
      }
      assert.equal(
        (
          await world.a.client.requestRaw({
            method: 'POST',
            path: '/v1/members',
            body: { external_member_id: world.y.external },
          })
        ).body?.code,
        'duplicate_resource',
      );
    },
  );

  it("the shared payee entity gives another merchant's member its own link: none of A's member's details", async () => {
    const { a, b, aProd, objects: o, payeeIban } = world;
    const before = await a.client.request<any>({
      method: 'GET',
      path: `/v1/remit/payees/${o.payee}`,
      onBehalfOf: o.member.external,
    });
    const other = {
      'address.country': 'DE',
      'address.city': 'Hamburg',
      'address.street_address': 'Elbchaussee 9',
      'address.postal_code': '22763',
    };
    const body = {
      ...sepa,
      fields: { first_name: 'Eve', last_name: 'Other', 'bank_details.iban': payeeIban, ...other },
    };
    for (const p of [b, aProd]) {
      const created = await p.client.request<any>({
        method: 'POST',
        path: '/v1/remit/payees',
        body,
        onBehalfOf: p.member.external,
      });
      // The reference's outcome: `review` where the account exists in the environment under another name.
      assert.equal(created.outcome, p === b ? 'review' : 'created');
      assert.notEqual(created.id, o.payee);
      const seen = await p.client.requestRaw({
        method: 'GET',
        path: `/v1/remit/payees/${created.id}`,
        onBehalfOf: p.member.external,
      });
      assert.equal(seen.body.holder_name, 'Eve Other');
      for (const theirs of ['Anna', 'Muller', 'Unter den Linden', '10117'])
        assert.ok(!seen.rawBody.includes(theirs), `${p.creds.environment}: shows A's member's ${theirs}`);
    }
    assert.deepEqual(
      await a.client.request<any>({
        method: 'GET',
        path: `/v1/remit/payees/${o.payee}`,
        onBehalfOf: o.member.external,
      }),
      before,
      "A's link is as it was",
    );
  });

  it('a completed step-up challenge passes only its own merchant, environment, member and object', async () => {
    const { a, aProd, b, objects: o, y } = world;
    for (const p of [a, aProd, b]) {
      const res = await admin(service, 'PUT', `/admin/v1/merchants/${p.merchantId}/step-up-thresholds`, {
        environment: p.creds.environment,
        action: 'withdrawal.create',
        asset: 'USDT',
        amount: '50',
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
    await fund(aProd.client, aProd.member, 'USDT', '500');
    const body = { asset: 'USDT', network: 'TRON', address: 'TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW', amount: '60' };
    const key = randomUUID();
    const withdraw = (c: MerchantWalletClient, m: Member, stepUp?: string, idempotencyKey = randomUUID()) =>
      c.requestRaw({
        method: 'POST',
        path: '/v1/withdrawals',
        body,
        onBehalfOf: m.external,
        idempotencyKey,
        ...(stepUp ? { stepUp } : {}),
      });
    const asked = await withdraw(a.client, o.member, undefined, key);
    assert.equal(asked.body?.code, 'step_up_required', asked.rawBody);
    const challenge = asked.body.challenge_id as string;
    await a.client.request({
      method: 'POST',
      path: `/v1/sandbox/hosted-screens/${challenge}/complete`,
      body: { outcome: 'approved' },
    });
    for (const [name, c, m] of [
      ['member Y', a.client, y],
      ['A on production', aProd.client, aProd.member],
      ['merchant B', b.client, b.member],
    ] as const) {
      const res = await withdraw(c, m, challenge);
      assert.equal(res.body?.code, 'step_up_required', `${name}: ${res.rawBody}`);
      assert.notEqual(res.body.challenge_id, challenge, `${name} was given A's challenge back`);
    }
    const passed = await withdraw(a.client, o.member, challenge, key);
    assert.equal(passed.status, 201, `the owner's challenge is untouched: ${passed.rawBody}`);
    for (const p of [a, aProd, b]) {
      await admin(service, 'PUT', `/admin/v1/merchants/${p.merchantId}/step-up-thresholds`, {
        environment: p.creds.environment,
        action: 'withdrawal.create',
        asset: 'USDT',
        amount: null,
      });
    }
  });

  it('a nonce is spent per merchant and environment', async () => {
    const { a, aProd, b } = world;
    const nonce = randomUUID();
    const create = (c: MerchantWalletClient) =>
      c.requestRaw({
        method: 'POST',
        path: '/v1/members',
        body: { external_member_id: `n-${randomUUID().slice(0, 8)}` },
        nonce,
        idempotencyKey: randomUUID(),
      });
    assert.equal((await create(a.client)).status, 201);
    assert.equal((await create(b.client)).status, 201, "another merchant's nonce");
    assert.equal((await create(aProd.client)).status, 201, "the other environment's nonce");
    assert.equal((await create(a.client)).body?.code, 'nonce_reused', 'the owner cannot reuse it');
  });

  it('rate-limit windows are per merchant and environment', async () => {
    const c = await party(service, 'sandbox');
    const cProd = await party(service, 'production', c.merchantId);
    const deposit = (p: Party) =>
      p.client.requestRaw({
        method: 'POST',
        path: '/v1/deposits',
        body: { member_id: p.member.external, asset: 'USDT', amount: '1', tx_hash: `t-${randomUUID()}` },
        idempotencyKey: randomUUID(),
      });
    let last: RawResult | undefined;
    for (let i = 0; i < 80 && last?.status !== 429; i++) last = await deposit(c);
    assert.equal(last?.status, 429, 'C exhausts its deposits window');
    assert.equal((await deposit(world.b)).status, 201, "another merchant's window is its own");
    assert.equal((await deposit(cProd)).status, 201, "the other environment's window is its own");
  });

  it('webhook records and redelivery stay with the merchant and environment of their event', async () => {
    const { a, aProd, b, objects: o } = world;
    const db = service.ctx.db;
    const endpointFor = async (p: Party, url: string) =>
      (
        await p.client.request<any>({
          method: 'POST',
          path: '/v1/webhooks/endpoints',
          body: { url, event_types: ['*'] },
        })
      ).id;
    const bEndpoint = await endpointFor(b, 'http://127.0.0.1:9/b');
    const prodEndpoint = await endpointFor(aProd, 'https://93.184.216.34/a');
    const dep = await fund(a.client, o.member, 'USDT', '1');
    await fanOut(db);
    const records = await db
      .selectFrom('webhook_deliveries')
      .innerJoin('events', 'events.id', 'webhook_deliveries.event_id')
      .select(['webhook_deliveries.merchant_id', 'webhook_deliveries.environment', 'webhook_deliveries.endpoint_id'])
      .where('events.object_id', '=', dep.id)
      .execute();
    assert.ok(records.length > 0, "the deposit's event has records");
    for (const r of records) {
      assert.deepEqual([r.merchant_id, r.environment], [a.merchantId, 'sandbox']);
      assert.ok(
        ![bEndpoint, prodEndpoint].includes(r.endpoint_id),
        "fanned out to another merchant's or environment's endpoint",
      );
    }
    // A dead record of A's: another merchant's and the other environment's requeue leave it.
    await db
      .updateTable('webhook_deliveries')
      .set({ status: 'dead', endpoint_id: o.endpoint })
      .where('id', '=', o.delivery)
      .execute();
    const requeue = (c: MerchantWalletClient) =>
      c.request<any>({
        method: 'POST',
        path: '/v1/webhooks/deliveries/requeue',
        body: { since: '2000-01-01T00:00:00Z' },
      });
    assert.equal((await requeue(b.client)).queued, 0, "B requeued A's record");
    assert.equal((await requeue(aProd.client)).queued, 0, 'production requeued a sandbox record');
    const status = async () =>
      (
        await db
          .selectFrom('webhook_deliveries')
          .select('status')
          .where('id', '=', o.delivery)
          .executeTakeFirstOrThrow()
      ).status;
    assert.equal(await status(), 'dead');
    // The world's endpoint takes only qrpay.order.refunded, and requeue leaves a record of a type
    // its endpoint no longer takes: the record's type is added for the owner's requeue, then removed.
    const { event_type: recordType } = await db
      .selectFrom('webhook_deliveries')
      .select('event_type')
      .where('id', '=', o.delivery)
      .executeTakeFirstOrThrow();
    const subscribe = (event_types: string[]) =>
      a.client.request({ method: 'PATCH', path: `/v1/webhooks/endpoints/${o.endpoint}`, body: { event_types } });
    await subscribe(['qrpay.order.refunded', recordType]);
    try {
      assert.equal((await requeue(a.client)).queued, 1, "the owner's requeue takes it");
      assert.equal(await status(), 'pending');
    } finally {
      await subscribe(['qrpay.order.refunded']);
    }
  });

  it('a token works only on the host of its environment', async () => {
    const port = new URL(service.publicUrl).port;
    const hosts = { sandbox: `api-sandbox.localhost:${port}`, production: `api.localhost:${port}` };
    for (const p of [world.a, world.aProd]) {
      const token = await p.client.getToken();
      const call = (host: string) =>
        rawRequest(`${service.publicUrl}/v1/cards/${world.objects.card}`, {
          headers: { host, 'x-auth-token': `Bearer ${token}`, 'x-on-behalf-of': world.objects.member.external },
        });
      const other = p.creds.environment === 'sandbox' ? hosts.production : hosts.sandbox;
      const res = await call(other);
      assert.deepEqual(
        [res.status, res.body?.code],
        [400, 'environment_mismatch'],
        `${p.creds.environment} token on ${other}`,
      );
      if (p.creds.environment === 'sandbox')
        assert.equal((await call(hosts.sandbox)).status, 200, 'control: its own host');
    }
  });

  it('a hosted-screen ticket opens only on the host (environment) that issued it', async () => {
    const port = new URL(service.publicUrl).port;
    const sandboxUrl = `${baseUrlFor(service, 'sandbox')}/hosted/${world.objects.profileTicket}`;
    assert.equal((await getHostedPage(service, sandboxUrl)).status, 200, 'control: the issuing host');
    for (const host of [`api.localhost:${port}`, `127.0.0.1:${port}`]) {
      assert.equal((await getHostedPage(service, sandboxUrl, { host })).status, 404, `GET on ${host}`);
      assert.equal((await postHostedPage(service, sandboxUrl, { fields: {}, host })).status, 404, `POST on ${host}`);
    }
  });

  it('operator routes answer not found on the public listener, even with the operator token', async () => {
    const doc = await admin<any>(service, 'GET', '/admin/v1/openapi.json');
    assert.equal(doc.status, 200);
    const paths = Object.entries(doc.body.paths as Record<string, Record<string, unknown>>);
    assert.ok(paths.length > 20, `${paths.length} operator paths`);
    const reached: string[] = [];
    for (const [path, ops] of [...paths, ['/metrics', { get: {} }] as const]) {
      const concrete = path.replace(/\{[^}]+\}/g, 'x');
      for (const method of Object.keys(ops).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))) {
        const res = await fetch(`${service.publicUrl}${concrete}`, {
          method: method.toUpperCase(),
          headers: { authorization: `Bearer ${service.adminToken}`, 'content-type': 'application/json' },
          body: method === 'get' ? undefined : '{}',
        });
        if (res.status !== 404) reached.push(`${method.toUpperCase()} ${concrete} → ${res.status}`);
      }
    }
    assert.deepEqual(reached, []);
  });

  it("the merchant console shows and acts on A's objects only in A's session and environment", async () => {
    const { a, b, objects: o } = world;
    const sessions = [
      {
        name: "merchant B's console",
        jar: (await signedInConsole(service, b.merchantId, 'owner@b.example', 'owner')).jar,
        env: 'sandbox',
      },
      {
        name: "A's console on production",
        jar: (await signedInConsole(service, a.merchantId, 'owner@a.example', 'owner')).jar,
        env: 'production',
      },
    ];
    const unknown = (id: string) => id.replace(/[0-9a-f]{4}(?=[^0-9a-f]*$)/, '0000');
    const pages = [
      `keys/${a.creds.keyId}`,
      `withdrawals/${o.withdrawal}`,
      `deposits/${o.deposit}`,
      `qr-payments/${o.qrPayment}`,
      `remittances/${o.remittance}`,
      `exchange/${o.quote}`,
      `exchange/${o.exchangeOrder}`,
      `earn/${o.earnOrder}`,
      `cards/${o.card}`,
      `cards/${o.card}/top-ups/${o.topup}`,
      `cards/${o.physicalCard}/replacements/${o.replacement}`,
    ];
    const actions: [string, Record<string, string>][] = [
      [`keys/${a.creds.keyId}/allowlist`, { ip_allowlist: '10.0.0.1', intent: 'save' }],
      [`keys/${a.creds.keyId}/rotate`, { overlap_seconds: '86400' }],
      [`keys/${a.creds.keyId}/disable`, {}],
      [`webhooks/${o.endpoint}/disable`, {}],
      [`webhooks/${o.endpoint}/enable`, {}],
      [`webhooks/${o.endpoint}/roll-secret`, {}],
      [`webhooks/${o.endpoint}/delete`, {}],
      [`deliveries/${o.delivery}/redeliver`, {}],
      [`withdrawals/${o.withdrawal}/confirm`, {}],
      [`withdrawals/${o.withdrawal}/fail`, {}],
      ['helpers/application', { application_id: o.needDocsApplication, to: 'rejected' }],
      ['helpers/ship', { card_id: o.physicalCard }],
      ['helpers/authorization', { card_id: o.card, amount: '1.00', merchant_name: 'Shop', mcc: '5411' }],
      ['helpers/kyc', { member: o.member.external, decision: 'rejected', level: '1' }],
      ['helpers/hosted-screen', { ticket_id: o.profileTicket, outcome: 'submitted' }],
    ];
    const ids = ownedIds(o).concat(a.creds.keyId, a.creds.clientId);
    const shows = (text: string) => ids.filter((id) => new RegExp(`(^|[^\\w-])${id}($|[^\\w-])`).test(text));
    // The API log shows the session's own calls, A's ids included where it asked for them: A's calls are told by their
    // request id.
    const aCall = (
      await a.client.requestRaw({ method: 'GET', path: `/v1/cards/${o.card}`, onBehalfOf: o.member.external })
    ).headers['x-request-id'] as string;
    await service.ctx.apiCallLog.flush();
    const aLog = (
      await (
        await signedInConsole(service, a.merchantId, 'dev@a.example', 'developer')
      ).jar.request('GET', '/console/sandbox/api-log')
    ).body;
    assert.ok(aLog.includes(aCall), "control: A's log shows its call");
    const leaks: string[] = [];
    for (const { name, jar, env } of sessions) {
      const log = await jar.request('GET', `/console/${env}/api-log`);
      if (log.body.includes(aCall)) leaks.push(`${name}: the API log shows A's call ${aCall}`);
      const csrf = await jar.csrfOf(`/console/${env}/keys`);
      for (const page of pages) {
        const [mine, none] = [
          await jar.request('GET', `/console/${env}/${page}`),
          await jar.request('GET', `/console/${env}/${unknown(page)}`),
        ];
        if (mine.status !== 404 || none.status !== 404 || shows(mine.body).length)
          leaks.push(`${name}: GET ${page} → ${mine.status} (unknown id: ${none.status})`);
      }
      for (const [action, form] of actions) {
        const [mine, none] = [
          await jar.request('POST', `/console/${env}/${action}`, { csrf_token: csrf, ...form }),
          await jar.request('POST', `/console/${env}/${unknown(action)}`, {
            csrf_token: csrf,
            ...Object.fromEntries(Object.entries(form).map(([k, v]) => [k, unknown(v)])),
          }),
        ];
        if (mine.status < 400 || mine.status !== none.status || shows(mine.body).length)
          leaks.push(
            `${name}: POST ${action} → ${mine.status} ${mine.body.slice(0, 200)} (unknown id: ${none.status})`,
          );
      }
      for (const list of [
        '',
        'members',
        'withdrawals',
        'deposits',
        'qr-payments',
        'remittances',
        'exchange',
        'earn',
        'earn-positions',
        'cards',
        'keys',
        'webhooks',
        'deliveries',
        'audit',
        'helpers',
        'tools',
      ]) {
        const res = await jar.request('GET', `/console/${env}${list ? `/${list}` : ''}`);
        const seen = shows(res.body);
        if (res.status >= 500 || seen.length)
          leaks.push(`${name}: GET /${list} → ${res.status} shows ${seen.join(', ')}`);
      }
    }
    assert.deepEqual(leaks, []);
    // The objects the actions named are as they were.
    assert.equal(
      (await a.client.request<any>({ method: 'GET', path: `/v1/withdrawals/${o.withdrawal}` })).status,
      'locked',
    );
    assert.equal(
      (await a.client.request<any>({ method: 'GET', path: `/v1/cards/applications/${o.needDocsApplication}` })).status,
      'need_docs',
    );
    assert.ok(
      (await a.client.request<any>({ method: 'GET', path: '/v1/webhooks/endpoints' })).data.some(
        (e: any) => e.id === o.endpoint && e.status === 'enabled',
      ),
    );
  });

  it("merchant-level reads and sandbox tools of one merchant never show or touch another's", async () => {
    const { a, b, aProd, objects: o } = world;
    // Custody is what the merchant's own deposits brought (no withdrawal of theirs was confirmed).
    for (const p of [b, aProd]) {
      const deposits = (
        await p.client.request<any>({ method: 'GET', path: '/v1/deposits', query: { limit: 100, asset: 'USDT' } })
      ).data as any[];
      const reported = deposits.reduce((sum, d) => sum + BigInt(d.amount.replace('.', '')), 0n);
      const custody =
        ((await p.client.request<any>({ method: 'GET', path: '/v1/merchant/balances' })).data as any[]).find(
          (x) => x.asset === 'USDT',
        )?.custody ?? '0';
      assert.equal(
        BigInt(custody.replace('.', '')),
        reported,
        `${p.creds.environment} ${p.merchantId}: custody is its own deposits`,
      );
    }
    await a.client.request({
      method: 'PUT',
      path: '/v1/hosted-screens/settings',
      body: { frame_ancestors: ['https://shop-a.example'] },
    });
    for (const c of [b.client, aProd.client]) {
      assert.deepEqual(
        (await c.request<any>({ method: 'GET', path: '/v1/hosted-screens/settings' })).frame_ancestors,
        [],
      );
    }
    // B's clock, presets and reset are B's.
    const clock = async (c: MerchantWalletClient) =>
      Date.parse((await c.request<any>({ method: 'GET', path: '/v1/sandbox/clock' })).now);
    // B's advance runs the timed processes due on B's clock: none of A's (quote expiry, supplement
    // expiry, earn accrual, card expiry...) may run on it.
    const quote = (
      await a.client.request<any>({
        method: 'POST',
        path: '/v1/exchange/quotes',
        body: { from_asset: 'USDT', to_asset: 'USDC', from_amount: '5', lock: true },
        onBehalfOf: o.member.external,
        idempotencyKey: randomUUID(),
      })
    ).quote_id;
    const snapshot = async () =>
      Promise.all(
        [
          `/v1/exchange/orders/${quote}`,
          `/v1/cards/applications/${o.needDocsApplication}`,
          `/v1/earn/orders/${o.earnOrder}`,
          `/v1/cards/${o.card}`,
        ].map((path) => a.client.request({ method: 'GET', path, onBehalfOf: o.member.external })),
      );
    const objectsBefore = await snapshot();
    // B's own work of each kind falls due after A's (a quote, a supplement, a daily accrual): B's
    // advance steps through those times, when a process that forgot its scope would take A's too.
    const asB = { onBehalfOf: b.member.external };
    await b.client.request({
      method: 'POST',
      path: '/v1/exchange/quotes',
      body: { from_asset: 'USDT', to_asset: 'USDC', from_amount: '5', lock: true },
      ...asB,
      idempotencyKey: randomUUID(),
    });
    const flexible = ((await b.client.request<any>({ method: 'GET', path: '/v1/earn/products' })).data as any[]).find(
      (p) => p.type === 'flexible',
    )!.id;
    await b.client.request({
      method: 'POST',
      path: '/v1/earn/orders',
      body: { product_id: flexible, amount: '10' },
      ...asB,
    });
    const virtual = ((await b.client.request<any>({ method: 'GET', path: '/v1/cards/products' })).data as any[]).find(
      (p) => p.form_factor === 'virtual',
    )!.id;
    const bApplication = await b.client.request<any>({
      method: 'POST',
      path: '/v1/cards/applications',
      body: { product_id: virtual, source_asset: 'USDT' },
      ...asB,
    });
    await b.client.request({
      method: 'POST',
      path: `/v1/sandbox/cards/applications/${bApplication.id}/advance`,
      body: { to: 'need_docs' },
    });
    const aBefore = await clock(a.client);
    await b.client.request({ method: 'POST', path: '/v1/sandbox/clock/advance', body: { seconds: 3 * 86_400 } });
    assert.ok((await clock(b.client)) - aBefore > 3 * 86_000_000, 'B moved');
    assert.ok((await clock(a.client)) - aBefore < 60_000, 'A did not');
    assert.deepEqual(await snapshot(), objectsBefore, "A's timed work ran on B's clock");
    await b.client.request({
      method: 'POST',
      path: '/v1/sandbox/upstream-behavior',
      body: { upstream: 'qrpay', behavior: 'reject' },
    });
    const paid = await a.client.request<any>({
      method: 'POST',
      path: '/v1/qrpay/payments',
      body: { qr_code: payNow({ amount: '1' }), asset: 'SGD' },
      onBehalfOf: o.member.external,
    });
    assert.equal(paid.status, 'completed', "B's preset reached A's payment");
    const records = async () =>
      Number(
        (
          await service.ctx.db
            .selectFrom('webhook_deliveries')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('merchant_id', '=', a.merchantId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const aRecords = await records();
    assert.ok(aRecords > 0);
    await b.client.request({ method: 'POST', path: '/v1/sandbox/reset' });
    assert.equal(await records(), aRecords, "B's reset cleared A's records");
  });
});
