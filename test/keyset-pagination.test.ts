import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningService } from '../src/server.js';
import { encodeCursor, mapPage, pageSizeDefault, pageSizeMax } from '../src/platform/routes/pagination.js';
import { keysetPage } from '../src/db/keyset-page.js';
import { raiseAlert } from '../src/modules/alerts/queries.js';
import { useTestService } from './support/service.js';

/** The one keyset list helper, driven over a real table (operator_alerts) on the test database. */
describe('keysetPage', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));

  let kindSeq = 0;
  /** Inserts `count` alerts of a fresh kind, oldest first; answers the kind and their messages. */
  async function seed(count: number): Promise<{ kind: string; messages: string[] }> {
    const kind = `test.keyset.${++kindSeq}`;
    const messages: string[] = [];
    for (let i = 0; i < count; i++) {
      messages.push(`m${i}`);
      await raiseAlert(service.ctx.db, { kind, message: `m${i}` });
    }
    return { kind, messages };
  }
  const alertsOf = (kind: string) => service.ctx.db.selectFrom('operator_alerts').selectAll().where('kind', '=', kind);

  it('walks every row once, newest first, and the last page says it is the last', async () => {
    const { kind, messages } = await seed(7);
    const seen: string[] = [];
    const pages: number[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = await keysetPage(alertsOf(kind), { limit: 3, cursor }, (r) => r.message);
      pages.push(page.data.length);
      seen.push(...page.data);
      assert.equal(page.has_more, page.next_cursor !== null);
      if (!page.has_more) break;
      cursor = page.next_cursor!;
    }
    assert.deepEqual(pages, [3, 3, 1]);
    assert.deepEqual(seen, [...messages].reverse());
  });

  it('a walk that ends on a full page has no further cursor', async () => {
    const { kind } = await seed(4);
    const first = await keysetPage(alertsOf(kind), { limit: 2 });
    assert.equal(first.has_more, true);
    const second = await keysetPage(alertsOf(kind), { limit: 2, cursor: first.next_cursor! });
    assert.equal(second.data.length, 2);
    assert.equal(second.has_more, false);
    assert.equal(second.next_cursor, null);
  });

  it('without a view answers the rows themselves; mapPage maps them afterwards keeping the cursor', async () => {
    const { kind } = await seed(3);
    const page = await keysetPage(alertsOf(kind), { limit: 2 });
    assert.deepEqual(
      page.data.map((r) => r.message),
      ['m2', 'm1'],
    );
    assert.equal(typeof page.data[0]!.seq === 'bigint' || typeof page.data[0]!.seq === 'string', true);
    const mapped = mapPage(page, (r) => r.message.toUpperCase());
    assert.deepEqual(mapped, { data: ['M2', 'M1'], next_cursor: page.next_cursor, has_more: true });
  });

  it('rows added after the first page never shift the next one', async () => {
    const { kind } = await seed(4);
    const first = await keysetPage(alertsOf(kind), { limit: 2 }, (r) => r.message);
    assert.deepEqual(first.data, ['m3', 'm2']);
    await raiseAlert(service.ctx.db, { kind, message: 'later' });
    const second = await keysetPage(alertsOf(kind), { limit: 2, cursor: first.next_cursor! }, (r) => r.message);
    assert.deepEqual(second.data, ['m1', 'm0']);
    assert.equal(second.has_more, false);
  });

  it('an absent, unreadable or out-of-range cursor restarts from the first page', async () => {
    const { kind } = await seed(3);
    const firstOf = async (cursor: string | undefined) =>
      (await keysetPage(alertsOf(kind), { limit: 2, cursor }, (r) => r.message)).data;
    const expected = ['m2', 'm1'];
    assert.deepEqual(await firstOf(undefined), expected);
    assert.deepEqual(await firstOf(''), expected);
    assert.deepEqual(await firstOf('not-a-cursor'), expected);
    assert.deepEqual(await firstOf(Buffer.from('v1:99999999999999999999').toString('base64url')), expected);
  });

  it('a cursor below every row gives an empty last page', async () => {
    const { kind } = await seed(2);
    const page = await keysetPage(alertsOf(kind), { cursor: encodeCursor(1n) });
    assert.deepEqual(page, { data: [], next_cursor: null, has_more: false });
  });

  it('the page size defaults, and is capped, as the reference says', async () => {
    const { kind } = await seed(pageSizeMax + 2);
    const byDefault = await keysetPage(alertsOf(kind), {});
    assert.equal(byDefault.data.length, pageSizeDefault);
    assert.equal(byDefault.has_more, true);
    const capped = await keysetPage(alertsOf(kind), { limit: 10_000 });
    assert.equal(capped.data.length, pageSizeMax);
    assert.equal(capped.has_more, true);
    const zero = await keysetPage(alertsOf(kind), { limit: 0 });
    assert.equal(zero.data.length, pageSizeDefault);
  });

  it("the caller's filters narrow the walk: other rows never appear", async () => {
    const a = await seed(3);
    const b = await seed(3);
    const page = await keysetPage(alertsOf(a.kind), { limit: 10 }, (r) => `${r.kind}:${r.message}`);
    assert.deepEqual(page.data, [`${a.kind}:m2`, `${a.kind}:m1`, `${a.kind}:m0`]);
    assert.ok(!page.data.some((x) => x.startsWith(`${b.kind}:`)));
  });
});
