import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { LedgerEntry } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { expectCode } from './support/expect.js';
import { buildWorld, type World } from './support/isolation-world.js';
import { useTestService } from './support/service.js';
import { all } from './support/fixtures.js';

/**
 * Issue 41, point 2: GET /v1/ledger/entries and GET /v1/ledger/entries/{id}. Over one merchant
 * with every flow (the isolation world: deposits, withdrawal, exchange, remittance, cards, earn,
 * QR payment, prepaid credits and fees), every entry balances to zero in its asset and names only
 * that merchant's and its members' accounts; the filters narrow the journal as documented.
 */

const minor = (s: string) => BigInt(s.replace('.', ''));

describe("the merchant's journal", () => {
  let service: RunningService;
  let world: World;
  let entries: LedgerEntry[];
  useTestService({ config: { simulatorConfirmDelayMs: 0 }, merchant: false }, (s) => ({ service } = s));
  before(async () => {
    world = await buildWorld(service);
    entries = await all(world.a.client.ledger.entries({ limit: 100 }));
  });

  it('lists every entry of the merchant, newest first, each balancing to zero in its asset', async () => {
    const stored = await service.ctx.db
      .selectFrom('journal_entries')
      .select(['id', 'kind'])
      .where('merchant_id', '=', world.a.merchantId)
      .where('environment', '=', 'sandbox')
      .orderBy('seq', 'desc')
      .execute();
    assert.deepEqual(
      entries.map((e) => e.id),
      stored.map((r) => r.id.replace(/^jrn_/, 'jre_')),
    );
    const kinds = new Set(entries.map((e) => e.kind));
    for (const k of ['deposit', 'withdrawal.lock', 'prepaid.credit'])
      assert.ok(kinds.has(k), `a ${k} entry: ${[...kinds].join(', ')}`);
    assert.ok(kinds.size >= 10, `every flow: ${[...kinds].join(', ')}`);
    const members = new Set([world.objects.member.id, world.y.id]);
    for (const e of entries) {
      assert.match(e.id, /^jre_[0-9a-f-]{36}$/);
      assert.ok(e.lines.length >= 2);
      const assets = new Set(e.lines.map((l) => l.asset));
      assert.equal(assets.size, 1, `${e.id} moves one asset`);
      const sum = e.lines.reduce((s, l) => s + minor(l.debit) - minor(l.credit), 0n);
      assert.equal(sum, 0n, `${e.kind} ${e.id} balances`);
      for (const l of e.lines) {
        assert.ok((minor(l.debit) === 0n) !== (minor(l.credit) === 0n), 'a line is a debit or a credit');
        if (l.account.owner === 'member')
          assert.ok(members.has(l.account.owner_id), `${e.kind}: member ${l.account.owner_id} is the merchant's`);
        else assert.equal(l.account.owner_id, world.a.merchantId, `${e.kind}: no other merchant's account`);
      }
      for (let i = 1; i < entries.length; i++)
        assert.ok(entries[i - 1]!.created_at >= entries[i]!.created_at, 'newest first');
    }
  });

  it('filters by member (either form), asset, reference and time, and reads one entry', async () => {
    const x = world.objects.member;
    const byId = await all(world.a.client.ledger.entries({ member_id: x.id }));
    const byExternal = await all(world.a.client.ledger.entries({ member_id: x.external }));
    assert.deepEqual(byId, byExternal);
    assert.ok(byId.length > 0 && byId.length < entries.length);
    assert.ok(byId.every((e) => e.lines.some((l) => l.account.owner === 'member' && l.account.owner_id === x.id)));
    assert.equal(byId.length, entries.filter((e) => e.lines.some((l) => l.account.owner_id === x.id)).length);
    assert.deepEqual(await all(world.a.client.ledger.entries({ member_id: 'nobody' })), []);
    assert.deepEqual(
      await all(world.a.client.ledger.entries({ member_id: world.b.member.external })),
      [],
      "another merchant's member",
    );

    const sgd = await all(world.a.client.ledger.entries({ asset: 'sgd' }));
    assert.ok(sgd.length > 0 && sgd.every((e) => e.lines[0]!.asset === 'SGD'));

    const dep = await all(world.a.client.ledger.entries({ reference_id: world.objects.deposit }));
    assert.deepEqual(
      dep.map((e) => [e.kind, e.reference]),
      [['deposit', { object: 'deposit', id: world.objects.deposit }]],
    );

    const middle = entries[Math.floor(entries.length / 2)]!;
    const newer = await all(world.a.client.ledger.entries({ created_gte: middle.created_at }));
    const older = await all(world.a.client.ledger.entries({ created_lt: middle.created_at }));
    assert.equal(newer.length + older.length, entries.length);
    assert.ok(newer.some((e) => e.id === middle.id));

    assert.deepEqual(await world.a.client.ledger.entry(middle.id), middle);
    assert.deepEqual(await world.a.client.ledger.entry(middle.id.slice(4)), middle, 'jre_ prefix optional');
    await expectCode(world.a.client.ledger.entry(middle.id.replace('jre_', 'jrn_')), 'not_found', 404);
  });

  it("never shows another merchant's entries, nor another environment's", async () => {
    const id = entries[0]!.id;
    await expectCode(world.b.client.ledger.entry(id), 'not_found', 404);
    await expectCode(world.aProd.client.ledger.entry(id), 'not_found', 404);
    const theirs = await all(world.b.client.ledger.entries());
    assert.ok(theirs.length > 0);
    assert.ok(theirs.every((e) => !entries.some((m) => m.id === e.id)));
    assert.ok(
      theirs.every((e) =>
        e.lines.every((l) => l.account.owner === 'member' || l.account.owner_id === world.b.merchantId),
      ),
    );
  });

  it('needs ledger:read', async () => {
    const { createKey, clientFor } = await import('./support/service.js');
    const creds = await createKey(service, world.a.merchantId, { scopes: ['balances:read', 'merchant:write'] });
    await expectCode(clientFor(service, creds).ledger.entry(entries[0]!.id), 'insufficient_scope', 403);
  });
});
