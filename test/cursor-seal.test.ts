import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import type { RunningService } from '../src/server.js';
import { openCursor, sealCursor } from '../src/platform/routes/cursor-seal.js';
import { newMerchantClient, useTestService } from './support/service.js';

describe('list cursors are sealed (platform/routes/cursor-seal.ts)', () => {
  it('opens what it sealed, and nothing else: another key, a changed byte, garbage', () => {
    const key = randomBytes(32);
    for (const cursor of ['v1:1', 'v1:9223372036854775807', 'v1g:1:1000000000000042'])
      assert.equal(openCursor(key, sealCursor(key, cursor)), cursor);
    const sealed = sealCursor(key, 'v1:42');
    assert.equal(openCursor(randomBytes(32), sealed), undefined, 'another installation');
    const flipped = sealed[10] === 'A' ? 'B' : 'A';
    assert.equal(openCursor(key, sealed.slice(0, 10) + flipped + sealed.slice(11)), undefined, 'tampered');
    for (const junk of [
      '',
      'v1:42',
      Buffer.from('v1:42').toString('base64url'),
      'x'.repeat(8_000),
      '!!!',
      sealed + 'A'.repeat(200),
    ]) {
      assert.equal(openCursor(key, junk), undefined, junk.slice(0, 20));
    }
    assert.notEqual(sealCursor(key, 'v1:42'), sealCursor(key, 'v1:42'), 'a fresh nonce each time');
  });

  describe('through the API', () => {
    let service: RunningService;
    useTestService({ merchant: false }, (s) => ({ service } = s));

    it(
      "a next_cursor reveals no row sequence (other merchants' volume), walks every page, and a tampered one " +
        'restarts from the first page',
      async () => {
        const { client } = await newMerchantClient(service);
        const member = `cs-${randomUUID().slice(0, 8)}`;
        await client.members.create({ external_member_id: member });
        const ids: string[] = [];
        for (let i = 0; i < 3; i++)
          ids.push(
            (
              await client.deposits.create({
                member_id: member,
                asset: 'USDT',
                amount: '1',
                tx_hash: `cs-${randomUUID()}`,
              })
            ).id,
          );
        const first = await client.request<any>({ method: 'GET', path: '/v1/deposits', query: { limit: 1 } });
        assert.equal(first.data[0].id, ids[2]);
        assert.equal(typeof first.next_cursor, 'string');
        const seqs = (await service.ctx.db.selectFrom('deposits').select('seq').where('id', 'in', ids).execute()).map(
          (r) => String(r.seq),
        );
        const readable = Buffer.from(first.next_cursor, 'base64url').toString('latin1');
        assert.ok(
          !readable.includes('v1') && seqs.every((s) => !readable.includes(`:${s}`)),
          `the cursor reads as ${JSON.stringify(readable)}`,
        );

        const walked: string[] = [];
        let cursor: string | undefined;
        do {
          const page: any = await client.request({
            method: 'GET',
            path: '/v1/deposits',
            query: { limit: 1, ...(cursor ? { cursor } : {}) },
          });
          walked.push(...page.data.map((d: any) => d.id));
          cursor = page.next_cursor ?? undefined;
        } while (cursor);
        assert.deepEqual(walked, [...ids].reverse());

        const tampered = first.next_cursor.slice(0, -2) + (first.next_cursor.endsWith('AA') ? 'BB' : 'AA');
        for (const bad of [tampered, Buffer.from(`v1:${seqs[2]}`).toString('base64url')]) {
          const again: any = await client.request({
            method: 'GET',
            path: '/v1/deposits',
            query: { limit: 1, cursor: bad },
          });
          assert.deepEqual(
            again.data.map((d: any) => d.id),
            [ids[2]],
            'a cursor the service did not seal restarts from the first page',
          );
        }
      },
    );
  });
});
