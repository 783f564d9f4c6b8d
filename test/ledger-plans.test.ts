/**
 * Postings read their accounts by key and by id whatever plan PostgreSQL keeps for the
 * statements of the posting functions (migration 034, docs/ledger.md "Locking and concurrency"):
 * PL/pgSQL keeps a generic plan per statement, and the join the functions used before, planned
 * while the table was small, read every account of the environment on every posting. Measured as
 * the buffers a call touches under generic plans, with thousands of accounts in the environment.
 * The same for a batch of deposits' members and rows (`mwa_insert_deposits_across`, which forces
 * generic plans).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../src/db/schema.js';
import type { RunningService } from '../src/server.js';
import { newMerchantClient, useTestService } from './support/service.js';

/** The buffers `statement` touches when run under a generic plan, as EXPLAIN (ANALYZE, BUFFERS) counts them. */
async function genericPlanBuffers(trx: Db, statement: RawBuilder<unknown>): Promise<number> {
  await sql`SET LOCAL plan_cache_mode = force_generic_plan`.execute(trx);
  const { rows } = await sql<Record<string, unknown>>`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement}`.execute(
    trx,
  );
  const raw = Object.values(rows[0]!)[0];
  const [explained] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<{
    Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number };
  }>;
  return explained!.Plan['Shared Hit Blocks'] + explained!.Plan['Shared Read Blocks'];
}

describe('postings under generic plans', () => {
  let service: RunningService;
  useTestService({}, (setup) => (service = setup.service));

  it("locks a posting's accounts touching a few pages, however many accounts the environment holds", async () => {
    const db = service.ctx.db;
    const owner = `plans-${randomUUID()}`;
    await sql`
      INSERT INTO ledger_accounts (environment, owner_type, owner_id, asset, bucket, normal_side, non_negative)
      SELECT 'sandbox', 'member', ${owner} || '-' || g, 'USDT', 'available', 'credit', true FROM generate_series(1,
        3000) AS g
    `.execute(db);
    const lock = (owners: string[]) => sql`
      SELECT * FROM mwa_lock_accounts('sandbox', ${owners.map(() => 'USDT')}::text[],
        ${owners.map(() => 'member')}::text[], ${owners}::text[],
        ${owners.map(() => 'available')}::text[], ${owners.map(() => 'credit')}::text[],
          ${owners.map(() => true)}::boolean[])`;
    const buffersOf = (owners: string[]) => db.transaction().execute((trx) => genericPlanBuffers(trx, lock(owners)));
    // The first calls of a connection also read the catalogue (the function compiled, its
    // statements planned): measured after them. Found (two of the 3,000), then one of them with
    // one account to create.
    for (let i = 0; i < 3; i++) await buffersOf([`${owner}-${i + 1}`, `${owner}-warm-${i}`]);
    const found = await buffersOf([`${owner}-17`, `${owner}-2900`]);
    const withNew = await buffersOf([`${owner}-17`, `${owner}-new`]);
    // A look-up by key is a few index pages and a heap page; the environment's accounts fill
    // dozens of pages, read in full by the old join.
    assert.ok(found < 40, `two accounts looked up and locked: ${found} buffers`);
    assert.ok(withNew < 60, `one looked up, one created, both locked: ${withNew} buffers`);
    const { rows } = await db.transaction().execute((trx) => lock([`${owner}-2900`, `${owner}-17`]).execute(trx));
    assert.equal(rows.length, 2, 'one row per account, in id order');
    // The accounts name no member: gone before the ledger is verified (no balance, no posting).
    await sql`DELETE FROM ledger_accounts WHERE owner_id LIKE ${`${owner}-%`}`.execute(db);
  });

  it(
    "resolves a deposit's member and inserts its row touching a few pages, " + 'however many members the merchant has',
    async () => {
      const db = service.ctx.db;
      const { client, merchantId } = await newMerchantClient(service);
      client.close();
      const tag = randomUUID().slice(0, 8);
      await sql`
      INSERT INTO members (id, merchant_id, environment, external_member_id)
      SELECT 'mem_plans_' || ${tag} || '_' || g, ${merchantId}, 'sandbox', 'plans-' || ${tag} || '-' || g FROM
        generate_series(1, 10000) AS g
    `.execute(db);
      const insert = (memberRef: string) => sql`
      SELECT * FROM mwa_insert_deposits_across(ARRAY[${merchantId}]::text[], ARRAY['sandbox']::text[],
        ARRAY[${`dep_${randomUUID()}`}]::text[],
        ARRAY[${memberRef}]::text[],
        ARRAY['USDT']::text[], ARRAY[NULL]::text[], ARRAY[1]::numeric[], ARRAY[${`0x${randomUUID()}`}]::text[])`;
      const rolledBack = new Error('rolled back');
      const buffersOf = async (memberRef: string) => {
        let buffers = 0;
        await db
          .transaction()
          .execute(async (trx) => {
            buffers = await genericPlanBuffers(trx, insert(memberRef));
            throw rolledBack;
          })
          .catch((err: unknown) => {
            if (err !== rolledBack) throw err;
          });
        return buffers;
      };
      for (let i = 0; i < 3; i++) await buffersOf(`plans-${tag}-${i + 1}`);
      const byExternal = await buffersOf(`plans-${tag}-9000`);
      const byId = await buffersOf(`mem_plans_${tag}_17`);
      // 24 buffers each when written; the merchant's 10,000 members fill ~210 pages, which a scan would read.
      assert.ok(byExternal < 80, `member by external id, one row inserted: ${byExternal} buffers`);
      assert.ok(byId < 80, `member by id, one row inserted: ${byId} buffers`);
      await sql`DELETE FROM members WHERE merchant_id = ${merchantId} AND id LIKE ${`mem_plans_${tag}_%`}`.execute(db);
    },
  );
});
