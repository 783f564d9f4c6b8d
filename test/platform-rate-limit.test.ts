import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { RunningService } from '../src/server.js';
import { decide, RateWindows } from '../src/platform/auth/rate-limit.js';
import { rateBucketFor } from '../src/platform/routes/route-access.js';
import { newMerchantClient, useTestService } from './support/service.js';

describe('sliding-window decision', () => {
  it('admits up to the limit within one window', () => {
    assert.equal(decide(0, 60, 60, 10).allowed, true);
    assert.equal(decide(0, 61, 60, 10).allowed, false);
  });
  it('weights the previous window by its remaining overlap', () => {
    assert.equal(decide(60, 31, 60, 30).allowed, false, '60*0.5 + 31 > 60');
    assert.equal(decide(60, 30, 60, 30).allowed, true, '60*0.5 + 30 = 60');
    assert.equal(decide(60, 1, 60, 59.5).allowed, true);
  });
  it('tells a retry delay between 1 and 60 seconds', () => {
    for (const [prev, cur, elapsed] of [
      [0, 61, 0],
      [0, 61, 59],
      [120, 10, 1],
      [60, 60, 30],
    ] as const) {
      const d = decide(prev, cur, 60, elapsed);
      assert.equal(d.allowed, false);
      assert.ok(d.retryAfterSeconds >= 1 && d.retryAfterSeconds <= 60, String(d.retryAfterSeconds));
    }
  });
  it('chooses the bucket by method and path', () => {
    assert.equal(rateBucketFor('POST', '/v1/deposits'), 'deposits');
    assert.equal(rateBucketFor('POST', '/v1/members'), 'members_write');
    assert.equal(rateBucketFor('POST', '/v1/members/m1/suspend'), 'members_write');
    assert.equal(rateBucketFor('POST', '/v1/withdrawals'), 'orders');
    assert.equal(rateBucketFor('DELETE', '/v1/anything'), 'orders');
    assert.equal(rateBucketFor('GET', '/v1/members/m1'), 'reads');
  });
});

describe('rate limits over HTTP', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));

  const minute = () => Math.floor(Date.now() / 60_000);
  /** Pre-filled counts live in the current minute's window: do not start a check just before it turns. */
  const awayFromMinuteEdge = async () => {
    if (Date.now() % 60_000 > 50_000) await new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 200));
  };

  it(
    'answers 429 rate_limited with Retry-After once the bucket is full, per merchant, ' + 'environment and bucket',
    async () => {
      const a = await newMerchantClient(service);
      const b = await newMerchantClient(service);
      await awayFromMinuteEdge();
      // 300 member writes in this minute already counted for merchant A (as another process would have done).
      await sql`INSERT INTO rate_limit_windows (subject, bucket, window_start, hits) VALUES
      (${`${a.merchantId}:sandbox`}, 'members_write', ${minute()}, 300)`.execute(service.ctx.db);
      const res = await a.client.requestRaw({
        method: 'POST',
        path: '/v1/members',
        body: { external_member_id: 'rl' },
      });
      assert.equal(res.status, 429);
      assert.equal(res.body.code, 'rate_limited');
      const retryAfter = Number(res.headers['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= 60);
      assert.equal(res.body.retry_after, retryAfter);
      // Reads are another bucket, and merchant B has its own window.
      const read = await a.client.requestRaw({ method: 'GET', path: '/v1/members/rl' });
      assert.equal(read.body.code, 'member_not_found');
      const other = await b.client.requestRaw({
        method: 'POST',
        path: '/v1/members',
        body: { external_member_id: 'rl' },
      });
      assert.equal(other.status, 201);
    },
  );

  it('charges every spelling of a path to the bucket of the route it reaches', async () => {
    const { client, merchantId } = await newMerchantClient(service);
    // No request of the merchant before: the process reads these windows from the table at its first hit.
    const member = { id: `mem_${randomUUID()}` };
    await awayFromMinuteEdge();
    // The deposits (60) and member-write (300) quotas of this minute already spent; orders (120) untouched.
    for (const [bucket, hits] of [
      ['deposits', 60],
      ['members_write', 300],
    ] as const) {
      await sql`INSERT INTO rate_limit_windows (subject, bucket, window_start, hits) VALUES
        (${`${merchantId}:sandbox`}, ${bucket}, ${minute()}, ${hits})`.execute(service.ctx.db);
    }
    const deposit = () => ({
      member_id: member.id,
      asset: 'USDT',
      amount: '1',
      tx_hash: `0x${randomUUID().replace(/-/g, '')}`,
    });
    for (const path of ['/v1/deposits', '/v1/%64eposits', '/v1/%64%65%70%6F%73%69%74%73', '/v1/deposit%73?x=1']) {
      const res = await client.requestRaw({ method: 'POST', path, body: deposit() });
      assert.equal(res.status, 429, `${path}: ${res.rawBody}`);
      assert.equal(res.body.code, 'rate_limited', path);
    }
    for (const path of [
      '/v1/%6dembers',
      `/v1/%6Dembers/${member.id}/suspend`,
      `/v1/m%65mbers/${member.id}/sessions/revoke`,
    ]) {
      const res = await client.requestRaw({
        method: 'POST',
        path,
        body: path.endsWith('members') ? { external_member_id: 'spelled-2' } : undefined,
      });
      assert.equal(res.status, 429, `${path}: ${res.rawBody}`);
      assert.equal(res.body.code, 'rate_limited', path);
    }
  });

  it('counts requests so that exactly the quota passes in a window', async () => {
    const { client, merchantId } = await newMerchantClient(service);
    await awayFromMinuteEdge();
    await sql`INSERT INTO rate_limit_windows (subject, bucket, window_start, hits) VALUES (${`${merchantId}:sandbox`},
      'reads', ${minute()}, 1190)`.execute(service.ctx.db);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => client.requestRaw({ method: 'GET', path: '/v1/members/none' })),
    );
    const passed = results.filter((r) => r.status === 404).length;
    const limited = results.filter((r) => r.status === 429).length;
    assert.equal(passed, 10);
    assert.equal(limited, 10);
  });

  it(
    'a process idle while others filled the window asks the table before counting in memory again (its view is ' +
      'trusted for a second)',
    async () => {
      // Two processes' windows on one database; a fixed time in the middle of a minute keeps both hits in one window.
      const first = new RateWindows(service.ctx.db);
      const t0 = (Math.floor(Date.now() / 60_000) + 10_000) * 60_000 + 1_000;
      const subject = `idle-${randomUUID()}`;
      await first.hit(subject, 'orders', 100, t0);
      assert.equal(
        first.hitHeld(subject, 'orders', 100, t0 + 500),
        true,
        'a fresh view far from the quota counts in memory',
      );
      await first.flush();
      // Meanwhile the other processes fill the window.
      await sql`UPDATE rate_limit_windows SET hits = 100 WHERE subject = ${subject}`.execute(service.ctx.db);
      assert.equal(
        first.hitHeld(subject, 'orders', 100, t0 + 2_000),
        false,
        'two seconds later the view is stale: the table decides',
      );
      await assert.rejects(
        first.hit(subject, 'orders', 100, t0 + 2_000),
        (err: { code?: string }) => err.code === 'rate_limited',
      );
      await first.close();
    },
  );
});
