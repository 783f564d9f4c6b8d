import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { Type } from 'typebox';
import { installErrorHandling, type AppInstance } from '../src/platform/http/http-app.js';
import { ApiError } from '../src/platform/errors.js';
import {
  asJsonData,
  closedSchema,
  installStrictResponseHook,
  responseViolations,
  strictSerializerCompiler,
  type ResponseViolation,
} from '../src/platform/http/response-check.js';

/**
 * The strict response check the tests run every service with (platform/http/response-check.ts): what
 * it reports, and that in `fail` mode a body that does not match its schema is not sent.
 */
describe('strict response check', () => {
  const Thing = Type.Object({
    id: Type.String(),
    amount: Type.String(),
    note: Type.Union([Type.String(), Type.Null()]),
    nested: Type.Object({ a: Type.Integer() }),
    tags: Type.Optional(Type.Array(Type.Object({ k: Type.String() }))),
    map: Type.Optional(Type.Record(Type.String(), Type.String())),
  });
  const good = { id: 'x', amount: '1.50', note: null, nested: { a: 1 } };

  it('closes every object of a schema that does not say otherwise', () => {
    const closed = closedSchema(Thing) as any;
    assert.equal(closed.additionalProperties, false);
    assert.equal(closed.properties.nested.additionalProperties, false);
    assert.equal(closed.properties.tags.items.additionalProperties, false);
    assert.equal(closed.properties.map.additionalProperties, undefined, 'a record keeps its patternProperties');
    assert.equal((Thing as any).additionalProperties, undefined, "the route's own schema is left as it was");
  });

  it('passes a body that matches, Dates and undefined read as JSON reads them', () => {
    assert.deepEqual(responseViolations(Thing, good), []);
    assert.deepEqual(responseViolations(Thing, { ...good, tags: undefined, map: { x: 'y' } }), []);
    assert.deepEqual(asJsonData({ at: new Date(0), gone: undefined }), { at: '1970-01-01T00:00:00.000Z' });
  });

  it('names a property the serializer would drop, one missing, and a wrong type', () => {
    const found = responseViolations(Thing, { id: 'x', amount: 150, note: null, nested: { a: 1, b: 2 }, extra: true });
    const at = (path: string) =>
      found
        .filter((v) => v.path === path)
        .map((v) => v.message)
        .join(' / ');
    assert.match(at('/extra'), /not declared/);
    assert.match(at('/nested/b'), /not declared/);
    assert.match(at('/amount'), /must be string; got 150/);
    const missing = responseViolations(Thing, { id: 'x', amount: '1', nested: { a: 1 } });
    assert.deepEqual(
      missing.map((v) => v.path),
      ['/note'],
    );
    assert.match(responseViolations(Thing, { ...good, amount: 150n })[0]!.message, /150n \(bigint\)/);
    assert.ok(
      responseViolations(Thing, { ...good, id: null }).some((v) => v.path === '/id'),
      'null where the schema has no null',
    );
  });

  function probeApp(mode: 'fail' | 'report') {
    const found: ResponseViolation[] = [];
    const app = Fastify();
    app.setSerializerCompiler(
      strictSerializerCompiler(mode, (v) => {
        if (v.message !== 'seen') found.push(v);
      }),
    );
    installErrorHandling(app as unknown as AppInstance);
    installStrictResponseHook(app as unknown as AppInstance, mode, (v) => found.push(v));
    app.get('/good', { schema: { response: { 200: Thing } } }, async () => good);
    app.get('/extra', { schema: { response: { 200: Thing } } }, async () => ({ ...good, internal_ref: 'up_1' }));
    app.get('/status', { schema: { response: { 201: Thing } } }, async () => good);
    app.get('/refusal', async () => {
      throw new ApiError('limit_exceeded', 'Quota.', { limit_type: 'daily', limit_scope: 'member' });
    });
    app.get('/leaky-refusal', async () => {
      throw new ApiError('state_invalid', 'No.', { internal_state: 'void' } as never);
    });
    return { app, found };
  }

  it('fail mode: a mismatching body becomes a 500, and a matching one is sent as is', async () => {
    const { app, found } = probeApp('fail');
    const ok = await app.inject('/good');
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), good);
    for (const path of ['/extra', '/status', '/leaky-refusal']) {
      const res = await app.inject(path);
      assert.equal(res.statusCode, 500, path);
      assert.equal(res.json().code, 'api_error', path);
    }
    assert.deepEqual(
      found.map((v) => `${v.url} ${v.status} ${v.path}`),
      ['/extra 200 /internal_ref', '/status 200 /', '/leaky-refusal 400 /internal_state'],
    );
    const refusal = await app.inject('/refusal');
    assert.equal(refusal.statusCode, 400, 'an error body with the documented extra fields passes');
    await app.close();
  });

  it('report mode: records and answers as the service would', async () => {
    const { app, found } = probeApp('report');
    const res = await app.inject('/extra');
    assert.equal(res.statusCode, 200);
    assert.equal('internal_ref' in res.json(), false);
    assert.deepEqual(
      found.map((v) => v.path),
      ['/internal_ref'],
    );
    await app.close();
  });
});
