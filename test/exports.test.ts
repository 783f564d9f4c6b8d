import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Export, ExportKind, MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { expectCode } from './support/expect.js';
import { buildWorld, type World } from './support/isolation-world.js';
import { exportJobHandlers } from '../src/modules/exports/workers.js';
import { useTestService } from './support/service.js';
import { all, eventsAbout } from './support/fixtures.js';

/**
 * Issue 41, point 3: exports. Over one merchant with every flow (the isolation world), an export
 * of each kind, written by the job queue, whose rows are the objects the API answers (every column
 * the API object has too, equal), with its SHA-256, size and row count; CSV with a header; the
 * file gone after seven days on the merchant's clock; another merchant's export not found.
 */

async function bytesOf(body: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of body) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/** The reference's CSV (RFC 4180) read back: quoted fields with doubled quotes, commas and line feeds inside. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += ch;
  }
  if (field !== '' || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

describe('exports', () => {
  let service: RunningService;
  let world: World;
  let c: MerchantWalletClient;
  const gte = new Date(Date.now() - 3_600_000).toISOString();
  let lt: string;
  useTestService({ config: { simulatorConfirmDelayMs: 0 }, merchant: false }, (s) => ({ service } = s));
  before(async () => {
    world = await buildWorld(service);
    c = world.a.client;
    lt = new Date(Date.now() + 1000).toISOString();
    await new Promise((r) => setTimeout(r, 1100));
  });

  async function exported(
    kind: ExportKind,
    format: 'csv' | 'jsonl' = 'jsonl',
    client = c,
  ): Promise<{ ex: Export; file: Buffer; type: string }> {
    const req = await client.exports.create({ kind, created_gte: gte, created_lt: lt, format });
    assert.match(req.id, /^exp_[0-9a-f-]{36}$/);
    assert.deepEqual({ kind: req.kind, status: req.status }, { kind, status: 'pending' });
    await service.workers.jobs.drain();
    const ex = await client.exports.get(req.id);
    assert.equal(ex.status, 'completed', `${kind}: ${JSON.stringify(ex)}`);
    const file = await client.exports.download(ex.id);
    const bytes = await bytesOf(file.body);
    assert.equal(ex.sha256, createHash('sha256').update(bytes).digest('hex'));
    assert.equal(ex.size_bytes, bytes.length);
    const events = await eventsAbout(service, ex.id, ['type', 'status']);
    assert.deepEqual(events, [{ type: 'export.completed', status: 'completed' }]);
    return { ex, file: bytes, type: file.contentType };
  }

  const rowsOf = (file: Buffer) =>
    file
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  /** Every exported row is the API's object on the columns both have; and the API's objects are all there. */
  function matches(kind: string, rows: Record<string, unknown>[], objects: Record<string, unknown>[], key = 'id') {
    assert.ok(objects.length > 0, `${kind}: the world has some`);
    const byId = new Map(rows.map((r) => [String(r[key]), r]));
    for (const o of objects) {
      const row = byId.get(String(o[key]));
      assert.ok(row, `${kind}: ${String(o[key])} is in the file`);
      const shared = Object.keys(row).filter((k) => k in o && (typeof o[k] !== 'object' || o[k] === null));
      assert.ok(shared.length >= 4, `${kind}: columns compared ${shared.join(',')}`);
      for (const k of shared) assert.equal(row[k], o[k], `${kind} ${String(o[key])}.${k}`);
    }
  }

  const asMember = async (path: string, query: Record<string, string> = {}) =>
    (
      await c.request<{ data: Record<string, unknown>[] }>({
        method: 'GET',
        path,
        query: { limit: 100, ...query },
        onBehalfOf: world.objects.member.external,
      })
    ).data;

  it('deposits: CSV with a header row, one row per deposit, as the API answers them', async () => {
    const { ex, file, type } = await exported('deposits', 'csv');
    assert.match(type, /^text\/csv/);
    const [header, ...rows] = parseCsv(file.toString('utf8'));
    assert.deepEqual(header, ['id', 'member_id', 'asset', 'network', 'amount', 'tx_hash', 'status', 'created_at']);
    const deposits = await all(c.deposits.list());
    assert.equal(ex.row_count, deposits.length);
    assert.equal(rows.length, deposits.length);
    matches(
      'deposits',
      rows.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i] === '' && h === 'network' ? null : r[i]]))),
      deposits,
    );
  });

  it('every other kind: its rows are the objects read through the API', async () => {
    matches(
      'withdrawals',
      rowsOf((await exported('withdrawals')).file),
      (await all(c.withdrawals.list())) as unknown as Record<string, unknown>[],
    );
    matches('remittances', rowsOf((await exported('remittances')).file), await asMember('/v1/remittances'));
    matches('exchange_orders', rowsOf((await exported('exchange_orders')).file), await asMember('/v1/exchange/orders'));
    matches('earn_orders', rowsOf((await exported('earn_orders')).file), await asMember('/v1/earn/orders'));
    matches('qrpay_payments', rowsOf((await exported('qrpay_payments')).file), await asMember('/v1/qrpay/payments'));
    matches(
      'card_transactions',
      rowsOf((await exported('card_transactions')).file),
      await asMember(`/v1/cards/${world.objects.card}/transactions`),
    );

    const lines = rowsOf((await exported('ledger_entries')).file);
    const entries = await all(c.ledger.entries());
    assert.equal(
      lines.length,
      entries.reduce((n, e) => n + e.lines.length, 0),
      'one row per line',
    );
    for (const e of entries) {
      const mine = lines.filter((l) => l.entry_id === e.id);
      assert.deepEqual(
        mine.map((l) => [l.account_owner, l.account_owner_id, l.bucket, l.asset, l.debit, l.credit]),
        e.lines.map((l) => [l.account.owner, l.account.owner_id, l.account.bucket, l.asset, l.debit, l.credit]),
      );
      assert.ok(
        mine.every((l) => l.kind === e.kind && l.created_at === e.created_at && l.reference_id === e.reference.id),
      );
    }

    const { file, ex } = await exported('member_balances');
    const balances = rowsOf(file);
    for (const m of [world.objects.member, world.y]) {
      const api = await c.balances.list({ onBehalfOf: m.external, asOf: lt });
      assert.deepEqual(
        balances
          .filter((b) => b.member_id === m.id)
          .map(({ member_id: _m, external_member_id: _e, as_of: _a, ...b }) => b),
        api,
      );
    }
    assert.equal(ex.row_count, balances.length);
  });

  it(
    'CSV: a merchant name from outside that a spreadsheet would run as a formula is written as text; JSON ' +
      'lines keep it as it is',
    async () => {
      const name = '=HYPERLINK("http://evil.example","x")';
      const from = new Date(Date.now() - 1000).toISOString();
      await c.request({
        method: 'POST',
        path: `/v1/sandbox/cards/${world.objects.card}/authorizations`,
        body: { amount: '1', merchant_name: name, mcc: '5411' },
      });
      await new Promise((r) => setTimeout(r, 20));
      const to = new Date(Date.now() + 1000).toISOString();
      const file = async (format: 'csv' | 'jsonl') => {
        const req = await c.exports.create({ kind: 'card_transactions', created_gte: from, created_lt: to, format });
        await service.workers.jobs.drain();
        return (await bytesOf((await c.exports.download(req.id)).body)).toString('utf8');
      };
      const [header, ...rows] = parseCsv(await file('csv'));
      const at = header!.indexOf('merchant_name');
      assert.deepEqual(
        rows.map((r) => r[at]),
        [`'${name}`],
      );
      assert.deepEqual(
        rowsOf(Buffer.from(await file('jsonl'))).map((r) => r.merchant_name),
        [name],
      );
    },
  );

  it(
    'lists and reads exports; another merchant or environment finds none of them; ' + 'the file goes after seven days',
    async () => {
      const { ex } = await exported('deposits', 'csv');
      const listed = await all(c.exports.list());
      assert.ok(listed.some((x) => x.id === ex.id));
      await expectCode(world.b.client.exports.get(ex.id), 'not_found', 404);
      await expectCode(world.b.client.exports.download(ex.id), 'not_found', 404);
      await expectCode(world.aProd.client.exports.get(ex.id), 'not_found', 404);
      assert.ok((await all(world.b.client.exports.list())).every((x) => x.id !== ex.id));
      await expectCode(
        c.exports.create({ kind: 'deposits', created_gte: lt, created_lt: gte }),
        'invalid_request',
        400,
      );
      await expectCode(
        c.exports.create({ kind: 'nope' as ExportKind, created_gte: gte, created_lt: lt }),
        'invalid_request',
        400,
      );
      await c.sandbox.advanceClock(7 * 24 * 3600);
      await expectCode(c.exports.download(ex.id), 'not_found', 404);
    },
  );

  it('an export that cannot be written is failed after its last attempt, with export.failed and no file', async () => {
    const req = await c.exports.create({ kind: 'deposits', created_gte: gte, created_lt: lt });
    // A kind no writer knows: every attempt throws.
    await service.ctx.db.updateTable('exports').set({ kind: 'unknown' }).where('id', '=', req.id).execute();
    const handler = exportJobHandlers['export.write']!;
    const job = { id: 0n, kind: 'export.write', payload: { id: req.id }, max_attempts: 3 };
    await assert.rejects(handler({ ...job, attempts: 1 }, service.ctx), 'an early attempt fails and is retried');
    assert.equal((await c.exports.get(req.id)).status, 'pending');
    await handler({ ...job, attempts: 3 }, service.ctx);
    const ex = await c.exports.get(req.id);
    assert.equal(ex.status, 'failed');
    assert.equal(ex.sha256, null);
    const events = await eventsAbout(service, req.id, ['type', 'status']);
    assert.deepEqual(events, [{ type: 'export.failed', status: 'failed' }]);
    await expectCode(c.exports.download(req.id), 'not_found', 404);
    await service.ctx.db.deleteFrom('jobs').where('kind', '=', 'export.write').execute();
  });
});
