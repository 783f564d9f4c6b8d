import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from 'typebox';
import { MerchantWalletClient } from '../packages/sdk/src/index.js';
import { buildPublicApp, type AppInstance } from '../src/platform/http/http-app.js';
import { router } from '../src/platform/routes/route.js';
import {
  EnvironmentQuery,
  idParams,
  memberWrite,
  merchantWrite,
  operatorCreate,
  operatorList,
  operatorReadOne,
  operatorResolve,
  operatorUpdate,
  orNotFound,
  readList,
  readOne,
  statusPageQuery,
} from '../src/platform/routes/route-kinds.js';
import { ApiError } from '../src/platform/errors.js';
import { OperatorEnvironment } from '../src/platform/routes/operator-route.js';
import { PageQuery, listEnvelope } from '../src/platform/routes/pagination.js';
import { registerPublicRoutes } from '../src/routes.js';
import { isSignedRoute } from '../src/platform/routes/route-access.js';
import { isSigned } from '../src/platform/openapi/openapi.js';
import { AmountError, InsufficientFundsError, parseAmount } from '../src/money/index.js';
import { mapDomainError } from '../src/api-errors.js';
import { createKey, createMerchant, type Credentials, useTestService } from './support/service.js';
import type { RunningService } from '../src/server.js';

/**
 * The route helper (src/platform/routes/route.ts) on a public app of its own, beside the service's:
 * transactional writes go through the response schema before the idempotency record stores
 * them, domain errors are answered with the reference's codes, the principal follows the access
 * declaration, and the declared errors reach the OpenAPI note.
 */
describe('route helper', () => {
  let service: RunningService;
  let app: AppInstance;
  let creds: Credentials;
  let client: MerchantWalletClient;
  let memberId: string;
  let writes = 0;
  const declared = new Map<string, readonly string[]>();

  useTestService({ merchant: false }, (s) => ({ service } = s));
  before(async () => {
    // Without the tests' strict response check: the probes show what the serializer does alone.
    app = buildPublicApp({ ...service.ctx, logger: false, config: { ...service.ctx.config, strictResponses: 'off' } });
    app.addHook('onRoute', (r) => {
      declared.set(r.url, r.config?.access?.errors ?? []);
    });
    await registerPublicRoutes(app, service.ctx); // token exchange and members, beside the probes
    const route = router(app, service.ctx);
    const Probe = Type.Object({ id: Type.String(), kept: Type.String() });

    route.post(
      '/v1/probe/write',
      {
        access: { scope: 'members:write', idempotency: 'required' },
        schema: { operationId: 'probeWrite', body: Type.Object({ n: Type.Integer() }), response: { 201: Probe } },
      },
      async ({ body, write }) =>
        write(async () => {
          writes++;
          // `extra` is not in the response schema: it must not be sent, nor stored for the replay.
          return { id: `probe_${body.n}_${randomUUID()}`, kept: 'yes', extra: 'internal' } as {
            id: string;
            kept: string;
          };
        }),
    );

    route.post(
      '/v1/probe/short',
      {
        access: { scope: 'members:write', idempotency: 'required' },
        errors: ['insufficient_balance'],
        schema: { operationId: 'probeShort', response: { 200: Probe } },
      },
      async ({ write }) =>
        write(async () => {
          writes++;
          throw new InsufficientFundsError({ owner: 'member', memberId: 'mem_x', bucket: 'available' }, 'USDT');
        }),
    );

    route.post(
      '/v1/probe/amount',
      {
        access: { scope: 'members:write' },
        schema: {
          operationId: 'probeAmount',
          body: Type.Object({ amount: Type.String() }),
          response: { 200: Type.Object({ minor: Type.String() }) },
        },
      },
      async ({ body }) => ({ minor: String(parseAmount(body.amount, 2)) }),
    );

    route.get(
      '/v1/probe/member',
      {
        access: { scope: 'members:read', principal: 'member' },
        schema: {
          operationId: 'probeMember',
          response: { 200: Type.Object({ member: Type.String(), merchant: Type.String() }) },
        },
      },
      async ({ principal }) => ({ member: principal.memberId, merchant: principal.merchantId }),
    );

    route.get(
      '/v1/probe/either',
      {
        access: { scope: 'members:read', principal: 'either' },
        schema: {
          operationId: 'probeEither',
          response: { 200: Type.Object({ member: Type.Union([Type.String(), Type.Null()]) }) },
        },
      },
      async ({ principal }) => ({ member: principal.memberId ?? null }),
    );

    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    const merchantId = await createMerchant(service);
    creds = await createKey(service, merchantId);
    client = new MerchantWalletClient({
      baseUrl: `http://api-sandbox.localhost:${port}`,
      connectHost: '127.0.0.1',
      clientId: creds.clientId,
      apiKey: creds.apiKey,
      signingKey: creds.signingKey,
      maxAttempts: 1,
    });
    const member = await client.requestRaw({
      method: 'POST',
      path: '/v1/members',
      body: { external_member_id: `u_${randomUUID()}` },
    });
    assert.equal(member.status, 201, JSON.stringify(member.body));
    memberId = member.body.id;
  });

  after(async () => {
    await app?.close();
  });

  it('sends a write through its response schema before storing it; the replay is the same bytes', async () => {
    const key = randomUUID();
    const first = await client.requestRaw({
      method: 'POST',
      path: '/v1/probe/write',
      body: { n: 1 },
      idempotencyKey: key,
    });
    assert.equal(first.status, 201);
    assert.equal(first.body.kept, 'yes');
    assert.equal('extra' in first.body, false, 'a field outside the response schema is not sent');
    const again = await client.requestRaw({
      method: 'POST',
      path: '/v1/probe/write',
      body: { n: 1 },
      idempotencyKey: key,
    });
    assert.equal(again.status, 201);
    assert.equal(again.headers['x-idempotent-replay'], 'true');
    assert.equal(again.rawBody, first.rawBody);
    assert.equal(writes, 1);
  });

  it('answers a ledger shortfall inside a write with the reference code, stored for the key', async () => {
    const key = randomUUID();
    const before = writes;
    const first = await client.requestRaw({ method: 'POST', path: '/v1/probe/short', body: {}, idempotencyKey: key });
    assert.equal(first.status, 400);
    assert.equal(first.body.code, 'insufficient_balance');
    const again = await client.requestRaw({ method: 'POST', path: '/v1/probe/short', body: {}, idempotencyKey: key });
    assert.equal(again.headers['x-idempotent-replay'], 'true');
    assert.equal(again.body.code, 'insufficient_balance');
    assert.equal(writes, before + 1, "the refusal is the key's result: the effect ran once");
  });

  it('answers an amount outside the grammar with invalid_request naming the field', async () => {
    const ok = await client.requestRaw({ method: 'POST', path: '/v1/probe/amount', body: { amount: '1.50' } });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.minor, '150');
    const bad = await client.requestRaw({ method: 'POST', path: '/v1/probe/amount', body: { amount: '1.505' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'invalid_request');
    assert.match(bad.body.message, /^amount has more than 2 decimal places/);
  });

  it('gives the handler the principal its access declares', async () => {
    const asMember = await client.requestRaw({ method: 'GET', path: '/v1/probe/member', onBehalfOf: memberId });
    assert.deepEqual(asMember.body, { member: memberId, merchant: creds.merchantId });
    const missing = await client.requestRaw({ method: 'GET', path: '/v1/probe/member' });
    assert.equal(missing.body.code, 'member_context_required');
    assert.deepEqual((await client.requestRaw({ method: 'GET', path: '/v1/probe/either' })).body, { member: null });
    assert.deepEqual(
      (await client.requestRaw({ method: 'GET', path: '/v1/probe/either', onBehalfOf: memberId })).body,
      { member: memberId },
    );
  });

  it('puts the declared errors on the route access the OpenAPI document reads', () => {
    assert.deepEqual(declared.get('/v1/probe/short'), ['insufficient_balance']);
    assert.deepEqual(declared.get('/v1/probe/write'), []);
    assert.deepEqual(declared.get('/v1/withdrawals/:id/confirm'), [
      'order_not_cancellable',
      'merchant_custody_shortfall',
      'not_found',
    ]);
    const doc = app.swagger() as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, { 'x-error-codes'?: string[] }> }>>;
    };
    assert.ok(doc.paths['/v1/probe/short']!.post!.responses['400']!['x-error-codes']!.includes('insufficient_balance'));
  });
});

describe('one signing rule', () => {
  it('is the same function for the pipeline and the document', () => {
    assert.equal(isSigned, isSignedRoute);
    assert.equal(isSignedRoute('GET', { scope: 'deposits:read' }), false);
    assert.equal(isSignedRoute('head', { scope: 'deposits:read' }), false);
    assert.equal(isSignedRoute('POST', { scope: 'deposits:write' }), true);
    assert.equal(isSignedRoute('GET', { scope: 'deposits:write', signature: 'always' }), true);
    assert.equal(isSignedRoute('POST', { scope: 'public' }), false);
  });
});

describe('layers', () => {
  const importsOf = (file: string) => [...readFileSync(file, 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
  // Every TypeScript file below a folder, its sub-folders (queries/, posting-rules/) included.
  const filesBelow = (dir: string) =>
    readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts'));

  it('the money core and the events raise their own errors: they import no HTTP module', () => {
    // Of the platform, only ids and the clock (events are dated on the merchant's clock), neither of them HTTP;
    // the events' part of the OpenAPI document reads the delivery contract's constants (config).
    for (const dir of ['src/money', 'src/events'])
      for (const name of filesBelow(dir)) {
        if (dir === 'src/events' && name === 'openapi.ts') continue;
        for (const spec of importsOf(join(dir, name))) {
          assert.ok(
            !/platform\/(?!(ids|clock)\.js$)/.test(spec) && !/modules\//.test(spec) && !/fastify/.test(spec),
            `${name} imports ${spec}`,
          );
        }
      }
  });

  it('the platform imports no module', () => {
    for (const name of filesBelow('src/platform')) {
      for (const spec of importsOf(join('src/platform', name)))
        assert.ok(!/modules\//.test(spec), `${name} imports ${spec}`);
    }
  });

  it('the edge maps each domain error, and leaves others alone', () => {
    assert.equal(mapDomainError(new AmountError('leading_zero', 'fee', 2))?.code, 'invalid_request');
    assert.equal(
      mapDomainError(new InsufficientFundsError({ owner: 'merchant', merchantId: 'm', bucket: 'custody' }))?.code,
      'merchant_custody_shortfall',
    );
    assert.equal(
      mapDomainError(new InsufficientFundsError({ owner: 'merchant', merchantId: 'm', bucket: 'prepaid' }))?.code,
      'merchant_insufficient_funds',
    );
    assert.equal(mapDomainError(new Error('boom')), undefined);
  });
});

describe('route kinds (src/platform/routes/route-kinds.ts)', () => {
  const Item = Type.Object({ id: Type.String() }, { title: 'Item' });

  it('readOne spells out the get-by-id declaration: either principal, the id parameter, 200', () => {
    assert.deepEqual(
      readOne({
        scope: 'withdrawals:read',
        errors: ['not_found'],
        operationId: 'getItem',
        summary: 'Get an item',
        tags: ['Items'],
        params: idParams('itm_ prefix optional'),
        response: Item,
      }),
      {
        access: { scope: 'withdrawals:read', principal: 'either' },
        errors: ['not_found'],
        schema: {
          operationId: 'getItem',
          summary: 'Get an item',
          tags: ['Items'],
          params: Type.Object({
            id: Type.String({ minLength: 1, maxLength: 100, description: 'itm_ prefix optional' }),
          }),
          response: { 200: Item },
        },
      },
    );
  });

  it('readList pages its items with an optional status filter, and leaves out what a route does not say', () => {
    const def = readList({
      scope: 'withdrawals:read',
      principal: 'member',
      operationId: 'listItems',
      query: statusPageQuery(['open', 'closed']),
      item: Item,
    });
    assert.deepEqual(def, {
      access: { scope: 'withdrawals:read', principal: 'member' },
      schema: {
        operationId: 'listItems',
        querystring: Type.Object({
          ...PageQuery.properties,
          status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed')])),
        }),
        response: { 200: listEnvelope(Item) },
      },
    });
    assert.deepEqual(Object.keys(def.schema), ['operationId', 'querystring', 'response']);
  });

  it('memberWrite and merchantWrite require a key unless told otherwise, and keep the schema parts in order', () => {
    const Body = Type.Object({ amount: Type.String() });
    const created = memberWrite({
      scope: 'withdrawals:write',
      errors: ['insufficient_balance'],
      operationId: 'createItem',
      summary: 'Create an item',
      tags: ['Items'],
      body: Body,
      response: { 201: Item },
    });
    assert.deepEqual(created, {
      access: { scope: 'withdrawals:write', principal: 'member', idempotency: 'required' },
      errors: ['insufficient_balance'],
      schema: {
        operationId: 'createItem',
        summary: 'Create an item',
        tags: ['Items'],
        body: Body,
        response: { 201: Item },
      },
    });
    const params = idParams();
    const unkeyed = merchantWrite({
      scope: 'merchant:write',
      idempotency: 'none',
      operationId: 'deleteItem',
      params,
      response: { 200: Item },
    });
    assert.deepEqual(unkeyed.access, { scope: 'merchant:write', principal: 'merchant', idempotency: 'none' });
    assert.equal('errors' in unkeyed, false, 'no errors key when the route names none');
    assert.deepEqual(Object.keys(unkeyed.schema), ['operationId', 'params', 'response']);
  });

  it('the operator kinds: a read and a change answer not_found, a creation 201, a resolve its two ends', () => {
    const params = Type.Object({ id: Type.String() });
    const Body = Type.Object({ enabled: Type.Boolean() });
    assert.deepEqual(operatorReadOne({ operationId: 'getItem', params, response: Item }), {
      errors: ['not_found'],
      schema: { operationId: 'getItem', params, response: { 200: Item } },
    });
    assert.deepEqual(operatorUpdate({ operationId: 'updateItem', params, body: Body, response: Item }), {
      errors: ['not_found'],
      schema: { operationId: 'updateItem', params, body: Body, response: { 200: Item } },
    });
    assert.deepEqual(operatorCreate({ operationId: 'createItem', body: Body, response: Item }), {
      schema: { operationId: 'createItem', body: Body, response: { 201: Item } },
    });
    const resolve = operatorResolve({ operationId: 'resolveItem', response: Item });
    assert.deepEqual(resolve.errors, ['not_found', 'state_invalid']);
    assert.deepEqual(resolve.schema.response, { 200: Item });
    assert.deepEqual(
      resolve.schema.body,
      Type.Object({ status: Type.Union([Type.Literal('completed'), Type.Literal('failed')]) }),
    );
  });

  it('orNotFound answers the row, or not_found with the message when there is none', () => {
    const row = { id: 'x' };
    assert.equal(orNotFound(row, 'No such item.'), row);
    assert.equal(orNotFound(0, 'No such item.'), 0, 'a falsy value that is there is still the answer');
    for (const missing of [undefined, null]) {
      assert.throws(
        () => orNotFound(missing, 'No such item.'),
        (e: unknown) => e instanceof ApiError && e.code === 'not_found' && e.message === 'No such item.',
      );
    }
  });

  it('operatorList declares the operator list of an environment', () => {
    assert.deepEqual(operatorList({ operationId: 'listItems', query: EnvironmentQuery, item: Item }), {
      schema: {
        operationId: 'listItems',
        querystring: Type.Object({ environment: OperatorEnvironment }),
        response: { 200: listEnvelope(Item) },
      },
    });
  });
});
