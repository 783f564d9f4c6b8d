import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningService } from '../src/server.js';
import { admin, createMerchant, useTestService } from './support/service.js';

/**
 * Operator calls given input that once answered 500 (found by operator-fuzz.test.ts): each is a
 * 4xx in the error envelope now, or the success the call documents.
 */
describe('operator calls on odd input', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));

  it(
    'PUT card-bins: an unknown merchant is 404 not_found (the insert broke the foreign key: a 500); a known ' +
      'one is authorised',
    async () => {
      for (const id of ['mch_00000000-0000-0000-0000-000000000000', 'exd_s_usdt_usd', '1']) {
        const res = await admin(service, 'PUT', `/admin/v1/merchants/${id}/card-bins/400000`, {
          environment: 'sandbox',
        });
        assert.equal(res.status, 404, JSON.stringify(res.body));
        assert.equal(res.body.code, 'not_found');
        // Reading and removing a BIN of an unknown merchant: the same 404, not an empty list or `authorized: false`.
        for (const [method, path] of [
          ['GET', `/admin/v1/merchants/${id}/card-bins?environment=sandbox`],
          ['DELETE', `/admin/v1/merchants/${id}/card-bins/400000?environment=sandbox`],
        ] as const) {
          const other = await admin(service, method, path);
          assert.deepEqual([other.status, other.body.code], [404, 'not_found'], `${method} ${path}`);
        }
      }
      const long = await admin(service, 'PUT', `/admin/v1/merchants/${'m'.repeat(3000)}/card-bins/400000`, {
        environment: 'sandbox',
      });
      assert.equal(long.status, 400, JSON.stringify(long.body));
      assert.equal(long.body.code, 'invalid_request');

      const merchantId = await createMerchant(service);
      const ok = await admin(service, 'PUT', `/admin/v1/merchants/${merchantId}/card-bins/400000`, {
        environment: 'sandbox',
      });
      assert.deepEqual([ok.status, ok.body], [200, { bin: '400000', authorized: true }]);
      const listed = await admin(service, 'GET', `/admin/v1/merchants/${merchantId}/card-bins?environment=sandbox`);
      assert.deepEqual(
        listed.body.data.map((b: { bin: string }) => b.bin),
        ['400000'],
      );
    },
  );

  it(
    'a body naming a field the call does not take is 400 invalid_request naming it, with nothing changed (it ' +
      'was dropped and answered 200)',
    async () => {
      const merchantId = await createMerchant(service);
      const user = await admin(service, 'POST', `/admin/v1/merchants/${merchantId}/console-users`, {
        email: `ops-${merchantId.slice(-8)}@example.com`,
        role: 'viewer',
      });
      assert.equal(user.status, 201, JSON.stringify(user.body));
      // An operator meaning to disable the user, with the wrong field.
      const slip = await admin(service, 'PATCH', `/admin/v1/console-users/${user.body.id}`, { status: 'disabled' });
      assert.deepEqual([slip.status, slip.body.code], [400, 'invalid_request'], JSON.stringify(slip.body));
      assert.equal(slip.body.message, 'Unknown field: status. This call takes: role, disabled.');
      const listed = await admin(service, 'GET', `/admin/v1/merchants/${merchantId}/console-users`);
      assert.equal(
        listed.body.data.find((u: { id: string }) => u.id === user.body.id).status,
        'invited',
        'not changed',
      );
      const disabled = await admin(service, 'PATCH', `/admin/v1/console-users/${user.body.id}`, { disabled: true });
      assert.deepEqual([disabled.status, disabled.body.status], [200, 'disabled']);
      // The same for a key: a known field beside an unknown one changes nothing either.
      const key = await admin(service, 'POST', `/admin/v1/merchants/${merchantId}/api-keys`, {
        environment: 'sandbox',
        scopes: ['members:read'],
      });
      const keySlip = await admin(service, 'PATCH', `/admin/v1/api-keys/${key.body.id}`, {
        scopes: ['members:write'],
        status: 'disabled',
      });
      assert.deepEqual([keySlip.status, keySlip.body.code], [400, 'invalid_request'], JSON.stringify(keySlip.body));
      assert.match(keySlip.body.message, /^Unknown field: status\. This call takes: .*disabled/);
      const keyNow = await service.ctx.db
        .selectFrom('api_keys')
        .select('scopes')
        .where('id', '=', key.body.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(keyNow.scopes, ['members:read'], 'the scopes were not changed');
    },
  );
});
