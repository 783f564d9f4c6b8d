/** Payees and the payee form schema through HTTP, via the SDK (the reference's rules, one by one). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient, PayeeFormField, PayeeFormSchema } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import type { FormField, FormSchema } from '../src/modules/remittance/corridors/views.js';
import { payeeIdsOf } from '../src/modules/remittance/payees/queries.js';
import { admin, useTestService } from './support/service.js';
import { expectCode } from './support/expect.js';
import { freshIban, holderField, requiredField, sepa } from './support/fixtures.js';

/*
 * The SDK declares the form schema's types itself (a client package does not import the server).
 * Checked here by the type checker against the server's: what the server sends is assignable to
 * the SDK's type, and the SDK names no field the server does not send.
 */
type Named<T> = { [K in keyof T as string extends K ? never : K]: T[K] };
type Holds<T extends true> = T;
export type SdkFormTypesMatchServer = [
  Holds<FormField extends Named<PayeeFormField> ? true : false>,
  Holds<Omit<FormSchema, 'fields'> extends Named<Omit<PayeeFormSchema, 'fields'>> ? true : false>,
  Holds<[Exclude<keyof Named<PayeeFormSchema>, keyof FormSchema>] extends [never] ? true : false>,
  Holds<[Exclude<keyof Named<PayeeFormField>, keyof FormField>] extends [never] ? true : false>,
];

const annaFields = {
  first_name: 'Anna',
  last_name: 'Müller',
  'bank_details.iban': 'DE89 3704 0044 0532 0130 00',
  'address.country': 'DE',
  'address.city': 'Berlin',
  'address.street_address': 'Unter den Linden 1',
  'address.postal_code': '10117',
};
const gbFields = {
  first_name: 'Jane',
  last_name: 'Smith',
  'bank_details.routing_code_type1': 'sort_code',
  'bank_details.routing_code_value1': '04-00-04',
  'bank_details.account_number': '12345678',
  'address.country': 'GB',
  'address.city': 'London',
  'address.street_address': '1 High St',
  'address.postal_code': 'SW1A 1AA',
};
const fps = {
  country_code: 'GB',
  currency: 'GBP',
  payment_method: 'LOCAL',
  clearing_system: 'FPS',
  entity_type: 'INDIVIDUAL',
};

describe('remittance payees', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  let merchantId: string;
  useTestService({}, (s) => ({ service, client, merchantId } = s));

  const member = async (c: MerchantWalletClient = client) => {
    const external = `p-${randomUUID().slice(0, 8)}`;
    await c.members.create({ external_member_id: external });
    return external;
  };
  const create = (m: string, body: Record<string, unknown>, key?: string) =>
    client.remittance.createPayee(body as any, { onBehalfOf: m, ...(key ? { idempotencyKey: key } : {}) });
  const fieldsError = async (m: string, body: Record<string, unknown>) => {
    const res = await client.requestRaw({
      method: 'POST',
      path: '/v1/remit/payees',
      body,
      onBehalfOf: m,
      idempotencyKey: randomUUID(),
    });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    return res.body;
  };

  it('payee form schema: walks from country to the full form, with refresh marks and aliases', async () => {
    const first = await client.remittance.formSchema();
    assert.equal(first.step, 'country_code');
    assert.deepEqual(
      first.fields.map((f) => f.key),
      ['country_code'],
    );
    assert.deepEqual(first.fields[0]!.enum, ['DE', 'ES', 'FR', 'GB', 'IT', 'NL', 'US']);
    assert.equal(first.fields[0]!.refresh_on_change, true);
    const us = await client.remittance.formSchema({ country_code: 'US', currency: 'USD' });
    assert.equal(us.step, 'payment_method');
    assert.deepEqual(us.fields.find((f) => f.key === 'payment_method')!.enum, ['LOCAL', 'SWIFT']);
    const full = await client.request<any>({
      method: 'GET',
      path: '/v1/remit/payee-form-schema',
      query: { country: 'GB', currency: 'GBP', method: 'LOCAL', clearing: 'FPS', entity: 'COMPANY' },
    });
    assert.equal(full.step, 'fields');
    assert.deepEqual(full.selection, {
      country_code: 'GB',
      currency: 'GBP',
      payment_method: 'LOCAL',
      clearing_system: 'FPS',
      entity_type: 'COMPANY',
    });
    const byKey = new Map(full.fields.map((f: any) => [f.key, f]));
    assert.equal((byKey.get('bank_details.routing_code_type1') as any).refresh_on_change, true);
    assert.deepEqual((byKey.get('bank_details.routing_code_type1') as any).enum, ['sort_code']);
    assert.equal((byKey.get('bank_details.account_number') as any).account_identifier, 'account_number');
    assert.equal((byKey.get('bank_details.account_number') as any).group, 'bank_details');
    assert.equal((byKey.get('bank_details.account_holder') as any).required, true);
    assert.ok(!byKey.has('first_name'), 'a company has no first name');
    const refused: Array<[{ country_code: string; currency?: string }, string]> = [
      [{ country_code: 'de' }, 'invalid_request'],
      [{ country_code: 'JP' }, 'corridor_not_supported'],
      [{ country_code: 'GB', currency: 'EUR' }, 'corridor_not_supported'],
    ];
    for (const [query, code] of refused) await expectCode(client.remittance.formSchema(query), code, 400);
  });

  it(
    'creates a payee (201 created), keeps the original text, drops unknown keys, truncates at 256 and masks ' +
      'the account',
    async () => {
      const m = await member();
      const iban = freshIban();
      const spaced = iban
        .replace(/(.{4})/g, '$1 ')
        .trim()
        .toLowerCase();
      const created = await create(m, {
        ...sepa,
        nickname: 'N'.repeat(80),
        fields: {
          ...annaFields,
          'bank_details.iban': spaced,
          'bank_details.bank_name': 'B'.repeat(100),
          surprise: 'dropped'.repeat(60),
        },
      });
      assert.equal(created.outcome, 'created');
      assert.equal(created.status, 'active');
      assert.match(created.id, /^pye_\d+$/);
      const payee = await client.remittance.getPayee(created.id.slice(4), { onBehalfOf: m });
      assert.equal(payee.id, created.id);
      assert.equal(payee.nickname, 'N'.repeat(64));
      assert.equal(payee.account_identifier, `DE${'*'.repeat(12)}${iban.slice(-4)}`);
      assert.equal(payee.fields['bank_details.iban'], payee.account_identifier);
      assert.equal(payee.holder_name, 'Anna Müller');
      assert.ok(!('surprise' in payee.fields));
      const row = await service.ctx.db
        .selectFrom('remit_payees')
        .select(['original_fields', 'fields'])
        .where('seq', '=', (await payeeIdsOf(service.ctx.db)).seqOf(created.id)!)
        .executeTakeFirstOrThrow();
      assert.equal(row.original_fields['bank_details.iban'], spaced, 'the text as sent is kept');
      assert.equal(row.fields['bank_details.iban'], iban, 'the normalised value is used');
      assert.ok(!('surprise' in row.original_fields));
    },
  );

  it(
    'answers created / linked / review for the same account, all 201; ' + 'the same member gets its one link back',
    async () => {
      const [a, b, c] = [await member(), await member(), await member()];
      const iban = freshIban();
      const body = { ...sepa, fields: { ...annaFields, 'bank_details.iban': iban } };
      const first = await create(a, body);
      assert.equal(first.outcome, 'created');
      const spaced = {
        ...sepa,
        fields: {
          ...annaFields,
          first_name: 'ANNA',
          last_name: 'muller',
          'bank_details.iban': iban.replace(/(.{4})/g, '$1-'),
        },
      };
      const linked = await create(b, spaced);
      assert.equal(linked.outcome, 'linked', 'accents, case and formatting do not matter');
      assert.notEqual(linked.id, first.id);
      const review = await create(c, {
        ...sepa,
        fields: { ...annaFields, first_name: 'Boris', 'bank_details.iban': iban },
      });
      assert.equal(review.outcome, 'review');
      const reviewed = await client.remittance.getPayee(review.id, { onBehalfOf: c });
      assert.equal(reviewed.name_mismatch, true);
      assert.equal(reviewed.holder_name, 'Boris Müller');
      const again = await create(a, body);
      assert.equal(again.id, first.id, 'one active link per member and payee');
      assert.equal(again.outcome, 'linked');
      const entities = await service.ctx.db
        .selectFrom('remit_payee_entities')
        .select('id')
        .where('account_mask', '=', `DE${'*'.repeat(12)}${iban.slice(-4)}`)
        .execute();
      assert.equal(entities.length, 1, 'one platform-level payee');
    },
  );

  it('a review on the link the member already has records the name mismatch on it (GET and list show it)', async () => {
    const m = await member();
    const iban = freshIban();
    const first = await create(m, { ...sepa, fields: { ...annaFields, 'bank_details.iban': iban } });
    assert.equal(first.outcome, 'created');
    assert.equal((await client.remittance.getPayee(first.id, { onBehalfOf: m })).name_mismatch, false);
    const review = await create(m, {
      ...sepa,
      nickname: 'ignored',
      fields: { ...annaFields, first_name: 'Bob', 'bank_details.iban': iban },
    });
    assert.deepEqual(
      [review.id, review.outcome, review.status],
      [first.id, 'review', 'active'],
      'the one link, answered review',
    );
    const after = await client.remittance.getPayee(first.id, { onBehalfOf: m });
    assert.equal(after.name_mismatch, true, 'what a review answers is recorded on the link');
    assert.equal(after.outcome, 'created', 'the link was made by the first request');
    assert.equal(after.holder_name, 'Anna Müller', "a payee's details are not edited by a create");
    assert.equal(after.nickname, '', 'a string, as the reference types it');
    const listed = (await client.request<any>({ method: 'GET', path: '/v1/remit/payees', onBehalfOf: m })).data;
    assert.deepEqual(
      listed.map((p: any) => [p.id, p.name_mismatch]),
      [[first.id, true]],
    );
    // A later matching name links again; the recorded mismatch stays.
    const again = await create(m, { ...sepa, fields: { ...annaFields, 'bank_details.iban': iban } });
    assert.deepEqual([again.id, again.outcome], [first.id, 'linked']);
    assert.equal((await client.remittance.getPayee(first.id, { onBehalfOf: m })).name_mismatch, true);
    // Two names at once for a new account: one creates, the other is a review recorded on the same link.
    const iban2 = freshIban();
    const both = await Promise.all([
      create(m, { ...sepa, fields: { ...annaFields, 'bank_details.iban': iban2 } }, randomUUID()),
      create(m, { ...sepa, fields: { ...annaFields, first_name: 'Bob', 'bank_details.iban': iban2 } }, randomUUID()),
    ]);
    assert.equal(both[0].id, both[1].id);
    assert.deepEqual(both.map((r) => r.outcome).sort(), ['created', 'review']);
    assert.equal((await client.remittance.getPayee(both[0].id, { onBehalfOf: m })).name_mismatch, true);
  });

  it('accepts the aliases country, method, clearing, entity', async () => {
    const m = await member();
    const res = await create(m, {
      country: 'GB',
      currency: 'GBP',
      method: 'LOCAL',
      clearing: 'FPS',
      entity: 'INDIVIDUAL',
      fields: { ...gbFields, 'bank_details.account_number': String(Math.floor(1e7 + Math.random() * 8e7)) },
    });
    assert.equal(res.status, 'active');
    const p = await client.remittance.getPayee(res.id, { onBehalfOf: m });
    assert.equal(p.clearing_system, 'FPS');
    assert.equal(p.fields['bank_details.routing_code_value1'], '040004');
  });

  it('answers every invalid_fields reason with its key', async () => {
    const m = await member();
    const expect = async (body: Record<string, unknown>, fields: Array<{ key: string; reason: string }>) => {
      const err = await fieldsError(m, body);
      assert.equal(err.code, 'invalid_fields');
      assert.deepEqual(err.fields, fields);
    };
    await expect({ ...sepa, fields: { ...annaFields, first_name: '' } }, [{ key: 'first_name', reason: 'required' }]);
    await expect({ ...sepa, fields: { ...annaFields, last_name: 'L'.repeat(51) } }, [
      { key: 'last_name', reason: 'too_long' },
    ]);
    await expect({ ...sepa, fields: { ...annaFields, 'address.postal_code': '10-117!' } }, [
      { key: 'address.postal_code', reason: 'pattern' },
    ]);
    await expect({ ...sepa, fields: { ...annaFields, 'bank_details.iban': 'DE89 3704 0044 0532 0130' } }, [
      { key: 'bank_details.iban', reason: 'iban_length' },
    ]);
    await expect({ ...sepa, fields: { ...annaFields, 'bank_details.iban': 'DE88 3704 0044 0532 0130 00' } }, [
      { key: 'bank_details.iban', reason: 'iban_checksum' },
    ]);
    await expect({ ...sepa, fields: { ...annaFields, 'bank_details.iban': '' } }, [
      { key: 'bank_details.iban', reason: 'account_identifier_required' },
    ]);
    await expect({ ...fps, fields: { ...gbFields, 'bank_details.routing_code_type1': 'aba' } }, [
      { key: 'bank_details.routing_code_type1', reason: 'not_in_enum' },
    ]);
    await expect({ ...sepa, clearing_system: 'sepa', fields: annaFields }, [
      { key: 'clearing_system', reason: 'unknown_clearing_system' },
    ]);
    await expect({ ...sepa, entity_type: 'TRUST', fields: annaFields }, [
      { key: 'entity_type', reason: 'not_in_enum' },
    ]);
    await expect({ ...sepa, payment_method: 'WIRE', fields: annaFields }, [
      { key: 'payment_method', reason: 'not_in_enum' },
    ]);
    await expect({ ...sepa, country_code: 'de', fields: annaFields }, [{ key: 'country_code', reason: 'pattern' }]);
    const usAch = {
      country_code: 'US',
      currency: 'USD',
      payment_method: 'LOCAL',
      clearing_system: 'ACH',
      entity_type: 'INDIVIDUAL',
    };
    const err = await fieldsError(m, {
      ...usAch,
      fields: {
        first_name: 'John',
        last_name: 'Doe',
        'bank_details.routing_code_type1': 'aba',
        'bank_details.routing_code_value1': '021000022',
        'bank_details.account_number': '000123456789',
        'bank_details.account_type': 'checking',
        'address.country': 'US',
        'address.state': 'NY',
        'address.city': 'NYC',
        'address.street_address': '1 Main',
        'address.postal_code': '10001',
      },
    });
    assert.deepEqual(err.fields, [{ key: 'bank_details.routing_code_value1', reason: 'pattern' }], 'ABA checksum');
  });

  it(
    'answers corridor_not_supported: segments incomplete, not enabled, entity type not served, restricted ' +
      'jurisdiction, no confirmable routing type',
    async () => {
      const m = await member();
      const refused = async (body: Record<string, unknown>) => {
        const err = await fieldsError(m, body);
        assert.equal(err.code, 'corridor_not_supported', JSON.stringify(err));
      };
      await refused({ ...sepa, clearing_system: undefined, fields: annaFields });
      await refused({ ...sepa, country_code: '', fields: annaFields });
      await refused({ ...sepa, country_code: 'JP', currency: 'JPY', fields: annaFields });
      await refused({ ...sepa, fields: { ...annaFields, 'address.country': 'IR' } });
      await refused({
        country_code: 'US',
        currency: 'USD',
        payment_method: 'SWIFT',
        clearing_system: 'SWIFT',
        entity_type: 'COMPANY',
        fields: {
          'bank_details.account_holder': 'ACME',
          'bank_details.swift_code': 'CHASUS33',
          'bank_details.account_number': '123',
          'bank_details.routing_code_type1': 'aba',
          'bank_details.routing_code_value1': '021000021',
          'bank_details.bank_name': 'Chase',
          'bank_details.bank_address': 'NY',
          'address.country': 'KP',
          'address.state': 'NY',
          'address.city': 'x',
          'address.street_address': 'y',
          'address.postal_code': '10001',
        },
      });
      // A corridor of this test's own: disabled, then serving only companies, then confirming no routing type.
      const contract = [
        holderField,
        requiredField('bank_details.routing_code_type1', 'Type', 'enum', 16, { enum: ['sort_code'] }),
        requiredField('bank_details.routing_code_value1', 'Sort code', 'routing_code', 6, {
          type_field: 'bank_details.routing_code_type1',
          account_identifier: 'routing_code',
        }),
        requiredField('bank_details.account_number', 'Account', 'digits', 8, { account_identifier: 'account_number' }),
      ];
      const own = await admin(service, 'POST', '/admin/v1/remit/corridors', {
        environment: 'sandbox',
        country: 'GB',
        currency: 'GBP',
        payment_method: 'LOCAL',
        clearing_system: 'CHAPS',
        contracts: { COMPANY: contract },
        confirmable_routing_types: ['sort_code'],
        enabled: false,
      });
      assert.equal(own.status, 201);
      const body = {
        country_code: 'GB',
        currency: 'GBP',
        payment_method: 'LOCAL',
        clearing_system: 'CHAPS',
        entity_type: 'COMPANY',
        fields: {
          'bank_details.account_holder': 'ACME Ltd',
          'bank_details.routing_code_type1': 'sort_code',
          'bank_details.routing_code_value1': '040004',
          'bank_details.account_number': '87654321',
        },
      };
      await refused(body);
      await admin(service, 'PATCH', `/admin/v1/remit/corridors/${own.body.id}`, { enabled: true });
      await refused({ ...body, entity_type: 'INDIVIDUAL' });
      await admin(service, 'PATCH', `/admin/v1/remit/corridors/${own.body.id}`, { confirmable_routing_types: [] });
      await refused(body);
      await admin(service, 'PATCH', `/admin/v1/remit/corridors/${own.body.id}`, {
        confirmable_routing_types: ['sort_code'],
      });
      assert.equal((await create(m, body)).status, 'active');
    },
  );

  it(
    'replays the first result for the same key and body, errors included; ' + 'another body is idempotency_key_reused',
    async () => {
      const m = await member();
      const key = randomUUID();
      const body = { ...sepa, fields: { ...annaFields, 'bank_details.iban': freshIban() } };
      const first = await client.requestRaw({
        method: 'POST',
        path: '/v1/remit/payees',
        body,
        onBehalfOf: m,
        idempotencyKey: key,
      });
      const second = await client.requestRaw({
        method: 'POST',
        path: '/v1/remit/payees',
        body,
        onBehalfOf: m,
        idempotencyKey: key,
      });
      assert.equal(first.status, 201);
      assert.equal(second.rawBody, first.rawBody);
      assert.equal(second.headers['x-idempotent-replay'], 'true');
      const other = await client.requestRaw({
        method: 'POST',
        path: '/v1/remit/payees',
        body: { ...body, nickname: 'x' },
        onBehalfOf: m,
        idempotencyKey: key,
      });
      assert.equal(other.body.code, 'idempotency_key_reused');
      const badKey = randomUUID();
      const bad = { ...sepa, fields: { ...annaFields, 'bank_details.iban': 'DE00' } };
      const e1 = await client.requestRaw({
        method: 'POST',
        path: '/v1/remit/payees',
        body: bad,
        onBehalfOf: m,
        idempotencyKey: badKey,
      });
      const e2 = await client.requestRaw({
        method: 'POST',
        path: '/v1/remit/payees',
        body: bad,
        onBehalfOf: m,
        idempotencyKey: badKey,
      });
      assert.equal(e1.body.code, 'invalid_fields');
      assert.equal(e2.headers['x-idempotent-replay'], 'true');
    },
  );

  it('is race-safe: two members at once make one shared payee; one member with two keys gets one link', async () => {
    const [a, b] = [await member(), await member()];
    const iban = freshIban();
    const body = { ...sepa, fields: { ...annaFields, 'bank_details.iban': iban } };
    const [ra, rb] = await Promise.all([create(a, body), create(b, body)]);
    assert.deepEqual([ra.outcome, rb.outcome].sort(), ['created', 'linked']);
    const iban2 = freshIban();
    const body2 = { ...sepa, fields: { ...annaFields, 'bank_details.iban': iban2 } };
    const results = await Promise.all([
      create(a, body2, randomUUID()),
      create(a, body2, randomUUID()),
      create(a, body2, randomUUID()),
    ]);
    assert.equal(new Set(results.map((r) => r.id)).size, 1, 'one link');
    assert.deepEqual(results.map((r) => r.outcome).sort(), ['created', 'linked', 'linked']);
    for (const i of [iban, iban2]) {
      const n = await service.ctx.db
        .selectFrom('remit_payee_entities')
        .select('id')
        .where('account_mask', '=', `DE${'*'.repeat(12)}${i.slice(-4)}`)
        .where('fields', '@>', JSON.stringify({ 'bank_details.iban': i }) as never)
        .execute();
      assert.equal(n.length, 1);
    }
    const links = await service.ctx.db
      .selectFrom('remit_payees')
      .select('seq')
      .where('seq', '=', (await payeeIdsOf(service.ctx.db)).seqOf(results[0]!.id)!)
      .execute();
    assert.equal(links.length, 1);
  });

  it(
    'lists favourites first, then newest, by keyset cursor; PATCH changes only nickname and favourite; DELETE ' +
      'unlinks',
    async () => {
      const m = await member();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push(
          (await create(m, { ...sepa, nickname: `p${i}`, fields: { ...annaFields, 'bank_details.iban': freshIban() } }))
            .id,
        );
      await client.remittance.updatePayee(ids[1]!, { favorite: true }, { onBehalfOf: m });
      await client.remittance.updatePayee(ids[3]!, { favorite: true }, { onBehalfOf: m });
      const walked: string[] = [];
      for await (const p of client.remittance.listPayees({ onBehalfOf: m, limit: 2 })) walked.push(p.id);
      assert.deepEqual(walked, [ids[3], ids[1], ids[4], ids[2], ids[0]]);
      const page = await client.request<any>({
        method: 'GET',
        path: '/v1/remit/payees',
        query: { limit: 3, cursor: 'garbage' },
        onBehalfOf: m,
      });
      assert.deepEqual(
        page.data.map((p: any) => p.id),
        [ids[3], ids[1], ids[4]],
        'an unreadable cursor restarts',
      );
      assert.equal(page.has_more, true);

      const patched = await client.remittance.updatePayee(
        ids[0]!.replace('pye_', ''),
        { nickname: 'M'.repeat(70) },
        { onBehalfOf: m },
      );
      assert.deepEqual(patched, { id: ids[0], nickname: 'M'.repeat(64), favorite: false });
      assert.equal((await client.remittance.updatePayee(ids[0]!, { nickname: '' }, { onBehalfOf: m })).nickname, '');
      const none = await client.requestRaw({
        method: 'PATCH',
        path: `/v1/remit/payees/${ids[0]}`,
        body: {},
        onBehalfOf: m,
      });
      assert.equal(none.body.code, 'invalid_fields');
      assert.deepEqual(
        none.body.fields.map((f: any) => f.key),
        ['nickname', 'favorite'],
      );
      const absent = await client.requestRaw({ method: 'PATCH', path: `/v1/remit/payees/${ids[0]}`, onBehalfOf: m });
      assert.equal(absent.body.code, 'invalid_fields', 'no body at all: neither field sent');
      const long = await client.remittance.updatePayee(ids[0]!, { nickname: 'L'.repeat(2000) }, { onBehalfOf: m });
      assert.equal(long.nickname, 'L'.repeat(64), 'truncated at any length, as on creation');

      const other = await member();
      await expectCode(client.remittance.getPayee(ids[0]!, { onBehalfOf: other }), 'not_found', 404);
      await expectCode(
        client.remittance.updatePayee(ids[0]!, { favorite: true }, { onBehalfOf: other }),
        'not_found',
        404,
      );
      await expectCode(client.remittance.unlinkPayee(ids[0]!, { onBehalfOf: other }), 'not_found', 404);
      await expectCode(client.remittance.getPayee('pye_999999999', { onBehalfOf: m }), 'not_found', 404);
      await expectCode(client.remittance.getPayee('abc', { onBehalfOf: m }), 'not_found', 404);

      assert.deepEqual(await client.remittance.unlinkPayee(ids[0]!, { onBehalfOf: m }), {
        id: ids[0],
        status: 'unlinked',
      });
      assert.deepEqual(
        await client.remittance.unlinkPayee(ids[0]!, { onBehalfOf: m }),
        { id: ids[0], status: 'unlinked' },
        'naturally idempotent',
      );
      await expectCode(client.remittance.getPayee(ids[0]!, { onBehalfOf: m }), 'not_found', 404);
      await expectCode(client.remittance.updatePayee(ids[0]!, { favorite: true }, { onBehalfOf: m }), 'not_found', 404);
      await expectCode(client.remittance.verifyPayee(ids[0]!, { onBehalfOf: m }), 'not_found', 404);
      const left: string[] = [];
      for await (const p of client.remittance.listPayees({ onBehalfOf: m })) left.push(p.id);
      assert.ok(!left.includes(ids[0]!));
    },
  );

  it(
    'verifies the holder name with the provider: match, close match with the suggested name, no match, ' +
      'unavailable; moves no money',
    async () => {
      const m = await member();
      const fixed = async (holder: [string, string], iban: string, owner = m) =>
        (
          await create(owner, {
            ...sepa,
            fields: { ...annaFields, first_name: holder[0], last_name: holder[1], 'bank_details.iban': iban },
          })
        ).id;
      const known = 'DE89370400440532013000'; // on file: Max Mustermann
      const match = await fixed(['Max', 'Mustermann'], known);
      const m2 = await member();
      const close = await fixed(['Max', 'Musterman'], known, m2);
      const m3 = await member();
      const no = await fixed(['Erika', 'Musterfrau'], known, m3);
      let unreachable = freshIban();
      while (!unreachable.endsWith('9999')) {
        const bban = `370400440${String(Math.floor(Math.random() * 1e5)).padStart(5, '0')}9999`;
        const n = BigInt(`${bban}131400`);
        unreachable = `DE${String(98n - (n % 97n)).padStart(2, '0')}${bban}`;
      }
      const unavailable = await fixed(['Ann', 'Other'], unreachable);
      const before = await client.balances.list({ onBehalfOf: m });
      assert.equal((await client.remittance.verifyPayee(match, { onBehalfOf: m })).result, 'match');
      const c = await client.remittance.verifyPayee(close, { onBehalfOf: m2 });
      assert.equal(c.result, 'close_match');
      assert.equal(c.suggested_name, 'Max Mustermann');
      assert.equal((await client.remittance.verifyPayee(no, { onBehalfOf: m3 })).result, 'no_match');
      assert.equal((await client.remittance.verifyPayee(unavailable, { onBehalfOf: m })).result, 'unavailable');
      const kept = await client.remittance.getPayee(close, { onBehalfOf: m2 });
      assert.equal(kept.name_check!.result, 'close_match');
      assert.equal(kept.name_check!.suggested_name, 'Max Mustermann');
      assert.deepEqual(await client.balances.list({ onBehalfOf: m }), before);
      const entries = await service.ctx.db
        .selectFrom('journal_entries')
        .select('id')
        .where('merchant_id', '=', merchantId)
        .execute();
      assert.equal(entries.length, 0, 'no money moved');
    },
  );
});
