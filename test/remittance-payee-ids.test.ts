/**
 * Payee ids over HTTP (docs/remittance.md, "Payee ids"): opaque numbers that say nothing of how
 * many links the platform makes, the same through every route, a pre-migration link's number kept,
 * and anything else not found.
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { sql } from 'kysely';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { openDatabase } from '../src/db/connection.js';
import { openCursor } from '../src/platform/routes/cursor-seal.js';
import { configuredKey } from '../src/platform/auth/keys.js';
import * as migration041 from '../src/db/migrations/041_payee_public_ids.js';
import { migratedImage } from './support/database.js';
import { admin, testDatabaseUrl, useTestService, instantUpstreams } from './support/service.js';
import { expectCode } from './support/expect.js';
import { payeeIds } from '../src/modules/remittance/payees/payee-ids.js';
import { sepaPayee } from './support/fixtures.js';

const opaqueMin = 10n ** 15n;

describe('payee ids', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  /** The last sequence "before the migration" and a link made then. */
  let cutoff: bigint;
  let legacy: { m: string; id: string; seq: bigint };

  const newMember = async (funded = false) => {
    const external = `pid-${randomUUID().slice(0, 8)}`;
    const member = await client.members.create({ external_member_id: external });
    if (funded) {
      await admin(service, 'POST', `/admin/v1/members/${member.id}/kyc-review`, { decision: 'approved', level: 1 });
      await client.deposits.create({ member_id: external, asset: 'EUR', amount: '500', tx_hash: `t-${randomUUID()}` });
    }
    return external;
  };
  const createPayee = async (m: string) => (await client.remittance.createPayee(sepaPayee(), { onBehalfOf: m })).id;
  const seqsOf = async (m: string) =>
    (
      await service.ctx.db
        .selectFrom('remit_payees as p')
        .innerJoin('members as mb', 'mb.id', 'p.member_id')
        .select('p.seq')
        .where('mb.external_member_id', '=', m)
        .orderBy('p.seq')
        .execute()
    ).map((r) => BigInt(r.seq));

  useTestService({ config: instantUpstreams }, (s) => ({ service, client } = s));
  before(async () => {
    // A database migrated while links existed: the cutoff recorded above the next sequence, one
    // link made below it (as before the migration), and the sequence moved past the cutoff. The
    // service reads the scheme at its first payee id, which comes after this.
    const db = service.ctx.db;
    const { rows } = await sql<{
      n: string;
    }>`SELECT nextval(pg_get_serial_sequence('remit_payees', 'seq')) AS n`.execute(db);
    cutoff = BigInt(rows[0]!.n) + 5n;
    await sql`UPDATE remit_payee_id_scheme SET legacy_seq_max = ${cutoff.toString()}`.execute(db);
    const m = await newMember(true);
    const id = await createPayee(m);
    legacy = { m, id, seq: (await seqsOf(m))[0]! };
    await sql`SELECT setval(pg_get_serial_sequence('remit_payees', 'seq'), ${cutoff.toString()})`.execute(db);
  });

  it('payees created in turn get numbers in the opaque range, neither consecutive nor in creation order', async () => {
    const m = await newMember();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await createPayee(m));
    const numbers = ids.map((id) => BigInt(/^pye_(\d+)$/.exec(id)![1]!));
    for (const n of numbers) assert.ok(n >= opaqueMin && n <= BigInt(Number.MAX_SAFE_INTEGER), `pye_${n}`);
    for (let i = 1; i < numbers.length; i++) {
      const step = numbers[i]! - numbers[i - 1]!;
      assert.ok(step !== 1n && step !== -1n, `${ids[i - 1]} then ${ids[i]}`);
    }
    // Ten numbers of a keyed permutation come out sorted one way or the other 2 times in 10! (≈ 5.5e-7).
    const ascending = numbers.every((n, i) => i === 0 || n > numbers[i - 1]!);
    const descending = numbers.every((n, i) => i === 0 || n < numbers[i - 1]!);
    assert.ok(!ascending && !descending, `the numbers follow creation order: ${ids.join(' ')}`);
    const seqs = await seqsOf(m);
    for (const seq of seqs) assert.ok(!ids.includes(`pye_${seq}`), 'no id is its sequence');
  });

  it('the list cursor carries the public number, not the sequence, and walks every page', async () => {
    const m = await newMember();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await createPayee(m));
    const first = await client.request<any>({
      method: 'GET',
      path: '/v1/remit/payees',
      query: { limit: 1 },
      onBehalfOf: m,
    });
    assert.equal(first.data[0].id, ids[2]);
    // The public cursor is sealed (test/cursor-seal.test.ts); inside it, the payee's public number.
    const cursor = Buffer.from(
      openCursor(configuredKey(service.ctx.config, 'pagination/cursor/v1'), first.next_cursor)!,
      'base64url',
    ).toString('utf8');
    const seqs = await seqsOf(m);
    assert.equal(cursor, `v1g:0:${ids[2]!.slice(4)}`);
    assert.ok(!cursor.endsWith(`:${seqs[2]}`), 'the sequence stays private');
    const walked: string[] = [];
    for await (const p of client.remittance.listPayees({ onBehalfOf: m, limit: 1 })) walked.push(p.id);
    assert.deepEqual(walked, [...ids].reverse());
    await client.remittance.updatePayee(ids[0]!, { favorite: true }, { onBehalfOf: m });
    const regrouped: string[] = [];
    for await (const p of client.remittance.listPayees({ onBehalfOf: m, limit: 2 })) regrouped.push(p.id);
    assert.deepEqual(regrouped, [ids[0], ids[2], ids[1]]);
  });

  /** Every route that reads or writes a payee id gives back `id` for it, and a remittance to it names it. */
  async function roundTrip(m: string, id: string) {
    assert.equal((await client.remittance.getPayee(id, { onBehalfOf: m })).id, id);
    assert.equal((await client.remittance.getPayee(id.slice(4), { onBehalfOf: m })).id, id, 'prefix optional');
    const listed: string[] = [];
    for await (const p of client.remittance.listPayees({ onBehalfOf: m })) listed.push(p.id);
    assert.ok(listed.includes(id));
    assert.equal((await client.remittance.updatePayee(id.slice(4), { nickname: 'Anna' }, { onBehalfOf: m })).id, id);
    assert.equal((await client.remittance.verifyPayee(id, { onBehalfOf: m })).id, id);
    const order = await client.remittance.create(
      { payee_id: id.slice(4), source_asset: 'EUR', source_amount: '20' },
      { onBehalfOf: m },
    );
    assert.equal(order.payee_id, id);
    assert.equal((await client.remittance.get(order.id, { onBehalfOf: m })).payee_id, id);
    const orders: string[] = [];
    for await (const o of client.remittance.list({ onBehalfOf: m })) if (o.id === order.id) orders.push(o.payee_id);
    assert.deepEqual(orders, [id]);
    await service.workers.jobs.drain();
    assert.equal((await client.remittance.get(order.id, { onBehalfOf: m })).payee_id, id, 'after dispatch');
    assert.deepEqual(await client.remittance.unlinkPayee(id, { onBehalfOf: m }), { id, status: 'unlinked' });
    await expectCode(client.remittance.getPayee(id, { onBehalfOf: m }), 'not_found', 404);
    assert.equal(
      (await client.remittance.get(order.id, { onBehalfOf: m })).payee_id,
      id,
      'an order keeps naming an unlinked payee',
    );
  }

  it("a new link's id round-trips through every payee route and a remittance; its sequence names nothing", async () => {
    const m = await newMember(true);
    const id = await createPayee(m);
    const [seq] = await seqsOf(m);
    assert.ok(seq! > cutoff);
    assert.ok(BigInt(id.slice(4)) >= opaqueMin);
    await expectCode(client.remittance.getPayee(`pye_${seq}`, { onBehalfOf: m }), 'not_found', 404);
    await roundTrip(m, id);
  });

  it(
    'a link made before the migration keeps its number through every route; ' + 'the opaque form of it names nothing',
    async () => {
      assert.ok(legacy.seq <= cutoff);
      assert.equal(legacy.id, `pye_${legacy.seq}`, 'the number it was given');
      const row = await service.ctx.db
        .selectFrom('remit_payee_id_scheme')
        .select(['key', 'legacy_seq_max'])
        .executeTakeFirstOrThrow();
      assert.equal(BigInt(row.legacy_seq_max), cutoff);
      // The number the same link would have had if made after the migration.
      const asNew = payeeIds({ key: Uint8Array.from(row.key), legacySeqMax: 0n }).idOf(legacy.seq);
      assert.ok(BigInt(asNew.slice(4)) >= opaqueMin);
      await expectCode(client.remittance.getPayee(asNew, { onBehalfOf: legacy.m }), 'not_found', 404);
      await roundTrip(legacy.m, legacy.id);
    },
  );

  it('unknown, foreign and malformed ids are not found, never a 5xx', async () => {
    const m = await newMember(true);
    const own = await createPayee(m);
    const other = await newMember();
    const foreign = await createPayee(other);
    const n = BigInt(own.slice(4));
    const unknown = [
      foreign,
      foreign.slice(4),
      `pye_${n + 1n}`,
      `pye_${n - 1n}`,
      `pye_${opaqueMin}`,
      `pye_${opaqueMin - 1n}`,
      `pye_${cutoff + 1n}`,
      `pye_${2n ** 52n + opaqueMin}`,
      `pye_${2n ** 63n - 1n}`,
      `pye_${2n ** 63n}`,
      '9'.repeat(40),
      'pye_0',
      '0',
      'pye_',
      'pye_-5',
      'pye_1.5',
      'pye_1e3',
      'abc',
      'PYE_1',
      'pye_１２',
      'pye_%00',
      ' 1',
    ];
    for (const id of unknown) {
      const path = `/v1/remit/payees/${encodeURIComponent(id)}`;
      for (const [method, suffix, body] of [
        ['GET', '', undefined],
        ['PATCH', '', { favorite: true }],
        ['DELETE', '', undefined],
        ['POST', '/verify', undefined],
      ] as const) {
        const res = await client.requestRaw({
          method,
          path: `${path}${suffix}`,
          body,
          onBehalfOf: m,
          idempotencyKey: false,
        });
        assert.equal(res.status, 404, `${method} ${id}${suffix}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.code, 'not_found');
      }
      const order = await client.requestRaw({
        method: 'POST',
        path: '/v1/remittances',
        body: { payee_id: id, source_asset: 'EUR', source_amount: '10' },
        onBehalfOf: m,
        idempotencyKey: randomUUID(),
      });
      assert.equal(order.status, 404, `order to ${id}: ${JSON.stringify(order.body)}`);
      assert.equal(order.body.code, 'resource_not_found');
    }
    const overLong = await client.requestRaw({
      method: 'GET',
      path: `/v1/remit/payees/${'1'.repeat(101)}`,
      onBehalfOf: m,
    });
    assert.ok(overLong.status >= 400 && overLong.status < 500, `over-long: ${overLong.status}`);
    assert.equal((await client.remittance.getPayee(own, { onBehalfOf: m })).id, own, "the member's own still answers");
  });
});

describe(
  'migration 041 records the last plain payee number and draws a key',
  { skip: testDatabaseUrl() === 'memory://' ? false : 'runs on the embedded database' },
  () => {
    it("the cutoff is the last link's sequence; each installation gets its own 32-byte key", async () => {
      const handles = [];
      try {
        const keys: string[] = [];
        for (const seq of [41n, 0n]) {
          const handle = await openDatabase('memory://', tmpdir(), { embeddedImage: await migratedImage() });
          handles.push(handle);
          const db = handle.db;
          // Back to before 041, with one link (its owners' rows are beside the point: no foreign key checks).
          await sql`DROP TABLE remit_payee_id_scheme`.execute(db);
          if (seq > 0n) {
            await sql`ALTER TABLE remit_payees DISABLE TRIGGER ALL`.execute(db);
            await sql`INSERT INTO remit_payees (seq, merchant_id, environment, member_id, entity_id, corridor_id,
              entity_type, status, outcome, holder_name, fields, original_fields)
            VALUES (${seq.toString()}, 'mch_x', 'sandbox', 'mem_x', 'ben_x', 'cor_x', 'INDIVIDUAL', 'unlinked',
              'created', 'X', '{}', '{}')`.execute(db);
          }
          // In a transaction, as the Migrator runs it (the lock lasts until the commit).
          await db.transaction().execute((trx) => migration041.up(trx as never));
          const row = await db
            .selectFrom('remit_payee_id_scheme')
            .select(['key', 'legacy_seq_max'])
            .executeTakeFirstOrThrow();
          assert.equal(BigInt(row.legacy_seq_max), seq);
          assert.equal(row.key.length, 32);
          keys.push(Buffer.from(row.key).toString('hex'));
        }
        assert.notEqual(keys[0], keys[1]);
      } finally {
        for (const h of handles) await h.close();
      }
    });
  },
);
