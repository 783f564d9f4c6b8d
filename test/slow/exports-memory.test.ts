import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sql } from 'kysely';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../../src/server.js';
import { testDatabaseUrl, useTestService } from '../support/service.js';

/**
 * Issue 41, point 3: a 200,000-row export in bounded memory. The rows are inserted directly (one
 * statement); the export is then written by the job and downloaded through the SDK, the download
 * hashed as it arrives and never kept. The service runs in this process: its memory is sampled
 * every 50 ms after a full collection (what stays reachable) while the file is written and while it is read, and the growth over the level before
 * must stay under the bound, a fraction of the file's size (docs/exports.md "Memory"). On
 * PostgreSQL the JavaScript heap and every buffer held (`heapUsed + arrayBuffers`); on the
 * embedded database the heap only, as its WebAssembly memory (an ArrayBuffer) is the database's
 * own cache and grows with what it reads, whoever reads it.
 *
 * Slow (a minute or more on a loaded machine): not part of `npm test`; CI runs it as a step of its
 * own on both databases (.ci/run).
 */

const rows = 200_000;
/** Growth of heap and buffers allowed while writing or reading the file (the file is 38.8 MB: holding it whole would pass the bound). */
const boundBytes = 32 * 1024 * 1024;

describe('a 200,000-row export', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  let merchantId: string;
  useTestService({}, (s) => ({ service, client, merchantId } = s));

  const onPostgres = !testDatabaseUrl().startsWith('memory:');
  // Not `external`: V8 lowers that count only as its sweeper frees the buffers a collection found
  // dead, so right after one it still counts chunks already dropped (it rose by 30 to 60 MB while
  // `arrayBuffers`, the buffers actually held, stayed under 4 MB).
  const used = () => { const m = process.memoryUsage(); return onPostgres ? m.heapUsed + m.arrayBuffers : m.heapUsed; };
  // What stays reachable, not what awaits collection: a full collection before each sample.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const live = () => { gc(); return used(); };
  async function peakDuring<T>(work: () => Promise<T>): Promise<{ result: T; growth: number }> {
    const base = live();
    let peak = base;
    const timer = setInterval(() => { peak = Math.max(peak, live()); }, 200);
    try {
      const result = await work();
      peak = Math.max(peak, live());
      return { result, growth: peak - base };
    } finally {
      clearInterval(timer);
    }
  }

  it('is written and downloaded in bounded memory, with its SHA-256', { timeout: 170_000 }, async () => {
    const member = await client.members.create({ external_member_id: `big-${randomUUID().slice(0, 8)}` });
    await sql`
      INSERT INTO deposits (id, merchant_id, environment, member_id, asset, network, amount, tx_hash, status, created_at)
      SELECT 'dep_' || gen_random_uuid(), ${merchantId}, 'sandbox', ${member.id}, 'USDT', 'TRON', (g * 1000)::numeric,
             '0x' || md5(g::text) || md5((g + 1)::text), 'credited', now() - interval '1 hour' + g * interval '1 ms'
      FROM generate_series(1, ${rows}) g`.execute(service.ctx.db);
    const started = Date.now();
    const req = await client.exports.create({ kind: 'deposits', created_gte: new Date(Date.now() - 2 * 3_600_000), created_lt: new Date() });
    const written = await peakDuring(() => service.workers.jobs.drain(150_000));
    const writeMs = Date.now() - started;
    const ex = await client.exports.get(req.id);
    const job = await service.ctx.db.selectFrom('jobs').select(['attempts', 'last_error']).where('kind', '=', 'export.write').executeTakeFirst();
    assert.equal(ex.status, 'completed', JSON.stringify(job));
    assert.equal(ex.row_count, rows);
    const read = await peakDuring(async () => {
      const file = await client.exports.download(ex.id, { idleTimeoutMs: 60_000 });
      const hash = createHash('sha256');
      let size = 0;
      let lines = 0;
      for await (const part of file.body) {
        const buf = part as Buffer;
        hash.update(buf);
        size += buf.length;
        for (const b of buf) if (b === 10) lines++;
      }
      return { sha: hash.digest('hex'), size, lines };
    });
    assert.equal(read.result.sha, ex.sha256);
    assert.equal(read.result.size, ex.size_bytes);
    assert.equal(read.result.lines, rows + 1, 'a header and one line per deposit');
    const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
    console.log(`# ${rows} rows, ${mb(ex.size_bytes!)} MB: written in ${writeMs} ms, memory (${onPostgres ? 'heap and buffers' : 'heap'}) +${mb(written.growth)} MB; read in ${Date.now() - started - writeMs} ms, +${mb(read.growth)} MB`);
    assert.ok(written.growth < boundBytes, `writing grew ${mb(written.growth)} MB`);
    assert.ok(read.growth < boundBytes, `reading grew ${mb(read.growth)} MB`);
  });
});
