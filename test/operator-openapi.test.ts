import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { RouteOptions } from 'fastify';
import { buildAdminApp } from '../src/operator/admin-app.js';
import { errorStatus, type ErrorCode } from '../src/platform/errors.js';
import type { OperatorAccess } from '../src/platform/routes/operator-route.js';
import type { RunningService } from '../src/server.js';
import { adminToken, useTestService } from './support/service.js';
import { declaredOperationIds, operationOf, openapiPath } from './support/declared-routes.js';

/** The operator listener's document, checked against the operator routes actually registered. */

type Json = Record<string, any>;

interface SeenRoute {
  method: string;
  url: string;
  access: OperatorAccess;
  schema: Json;
}

/** Builds the operator app once more (never started) with an `onRoute` hook, to see every operator route as declared.
 * */
async function collectOperatorRoutes(service: RunningService): Promise<SeenRoute[]> {
  const app = buildAdminApp({ ...service.ctx, logger: false } as typeof service.ctx, adminToken);
  const seen: SeenRoute[] = [];
  app.addHook('onRoute', (route: RouteOptions) => {
    const access = route.config?.operator;
    if (!access) return;
    for (const method of [route.method].flat())
      if (method !== 'HEAD') seen.push({ method, url: route.url, access, schema: (route.schema ?? {}) as Json });
  });
  await app.ready();
  await app.close();
  return seen;
}

describe('GET /admin/v1/openapi.json', () => {
  let service: RunningService;
  let doc: Json;
  let routes: SeenRoute[];

  useTestService({ merchant: false }, (s) => ({ service } = s));
  before(async () => {
    const res = await fetch(`${service.adminUrl}/admin/v1/openapi.json`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    doc = (await res.json()) as Json;
    routes = await collectOperatorRoutes(service);
  });

  test('needs the operator token like every /admin call', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }] as Record<string, string>[]) {
      const res = await fetch(`${service.adminUrl}/admin/v1/openapi.json`, { headers });
      assert.equal(res.status, 401);
      assert.equal(((await res.json()) as Json).code, 'invalid_token');
    }
  });

  test('is a valid OpenAPI 3.1 document', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const validator = new Validator();
    const result = await validator.validate(doc);
    assert.equal(validator.version, '3.1');
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
    assert.deepEqual(doc.components.securitySchemes.operatorToken, {
      type: 'http',
      scheme: 'bearer',
      description: "The service's `ADMIN_TOKEN`, as `authorization: Bearer <ADMIN_TOKEN>`.",
    });
  });

  test(
    'lists the codes the operations really answer: invalid_fields of a production key without an allow-list, ' +
      'invalid_request of a query value with NUL',
    async () => {
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${service.adminUrl}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${adminToken}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: res.status, body: (await res.json()) as Json };
      };
      const listed = (method: string, path: string, status: number): string[] =>
        doc.paths[path][method].responses[String(status)]?.['x-error-codes'] ?? [];
      const merchant = await call('POST', '/admin/v1/merchants', { name: 'Documented codes' });
      const created = await call('POST', `/admin/v1/merchants/${merchant.body.id}/api-keys`, {
        environment: 'production',
        scopes: ['merchant:read'],
      });
      assert.equal(created.body.code, 'invalid_fields');
      assert.ok(listed('post', '/admin/v1/merchants/{id}/api-keys', 400).includes('invalid_fields'));
      const key = await call('POST', `/admin/v1/merchants/${merchant.body.id}/api-keys`, {
        environment: 'production',
        scopes: ['merchant:read'],
        ip_allowlist: '127.0.0.1',
      });
      const patched = await call('PATCH', `/admin/v1/api-keys/${key.body.id}`, { ip_allowlist: '' });
      assert.equal(patched.body.code, 'invalid_fields');
      assert.ok(listed('patch', '/admin/v1/api-keys/{id}', 400).includes('invalid_fields'));
      const nul = await call('GET', '/admin/v1/assets?x=%00');
      assert.equal(nul.body.code, 'invalid_request');
      assert.ok(listed('get', '/admin/v1/assets', 400).includes('invalid_request'));
    },
  );

  test(
    'every success answer has a declared shape (an undeclared one, `Type.Any()`, says nothing of what the call ' +
      'answers)',
    () => {
      const shapeless: string[] = [];
      for (const route of routes) {
        const responses: Json = operationOf(doc, route).responses;
        for (const [status, response] of Object.entries<Json>(responses)) {
          const schema = response.content?.['application/json']?.schema;
          if (!status.startsWith('2')) continue;
          // A named schema is checked where it is defined (components.schemas), each once.
          const seen = new Set<string>();
          const walk = (s: Json): boolean => {
            if (s?.$ref) {
              if (seen.has(s.$ref)) return true;
              seen.add(s.$ref);
              return walk(doc.components.schemas[String(s.$ref).replace('#/components/schemas/', '')]);
            }
            return (
              !!s &&
              (s.type !== undefined || !!s.anyOf) &&
              (s.type !== 'array' || walk(s.items)) &&
              Object.values<Json>(s.properties ?? {}).every(walk)
            );
          };
          if (!schema || !walk(schema)) shapeless.push(`${route.method} ${route.url} ${status}`);
        }
      }
      assert.deepEqual(shapeless, []);
    },
  );

  test('documents every operator route, and nothing else', () => {
    assert.ok(routes.length >= 60, `only ${routes.length} operator routes seen`);
    const expected = new Set(routes.map((r) => `${r.method} ${openapiPath(r.url)}`));
    const seen = new Set<string>();
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const method of Object.keys(item))
        if (typeof item[method] === 'object' && method !== 'parameters') seen.add(`${method.toUpperCase()} ${path}`);
    }
    assert.deepEqual([...seen].sort(), [...expected].sort());
    assert.ok([...seen].every((op) => op.split(' ')[1]!.startsWith('/admin/v1/')));
  });

  test('each operation: a tag, the operator security, and every error code it can answer under its status', () => {
    for (const route of routes) {
      const op = operationOf(doc, route);
      const where = `${route.method} ${route.url}`;
      assert.deepEqual(op.security, [{ operatorToken: [] }], where);
      assert.equal(op.tags.length, 1, where);
      assert.ok(op.summary, where);
      // invalid_request on every operation: a query value with NUL, a body that is not JSON.
      const codes: ErrorCode[] = ['invalid_token', 'invalid_request', ...route.access.errors];
      for (const code of codes) {
        const listed: string[] = op.responses[String(errorStatus(code))]?.['x-error-codes'] ?? [];
        assert.ok(listed.includes(code), `${where}: ${code} not under ${errorStatus(code)}`);
      }
      const success = Object.keys(op.responses).filter((s) => s.startsWith('2'));
      assert.equal(success.length, 1, `${where}: one success response`);
      for (const response of Object.values<Json>(op.responses)) assert.ok(response.headers?.['X-Request-Id'], where);
    }
  });

  test(
    'every operation has the camelCase operationId its route declares, unique in the document; resources are ' +
      'named schemas',
    () => {
      const ids = declaredOperationIds(doc, routes);
      assert.ok(ids.length >= 60);
      assert.deepEqual(
        ids.filter((id, i) => ids.indexOf(id) !== i),
        [],
        'duplicate operationIds',
      );
      assert.equal(doc.paths['/admin/v1/api-keys/{id}/approve'].post.operationId, 'approveApiKey');
      assert.equal(
        doc.paths['/admin/v1/merchants/{id}'].get.responses['200'].content['application/json'].schema.$ref,
        '#/components/schemas/Merchant',
      );
      for (const name of [
        'Merchant',
        'ApiKey',
        'ApiKeyWithSecrets',
        'OperatorAsset',
        'Corridor',
        'ExchangeDirection',
        'KycProfile',
        'Error',
      ])
        assert.ok(doc.components.schemas[name], name);
    },
  );

  test('a body the route declares optional is not required: approving a key takes none', () => {
    assert.equal(doc.paths['/admin/v1/api-keys/{id}/approve'].post.requestBody.required, false);
    assert.equal(doc.paths['/admin/v1/api-keys/{id}/rotate'].post.requestBody.required, true);
  });

  test('the public document names no operator path', async () => {
    const res = await fetch(`${service.publicUrl}/v1/openapi.json`);
    const publicDoc = (await res.json()) as Json;
    assert.ok(Object.keys(publicDoc.paths).every((p) => !p.startsWith('/admin')));
    const text = JSON.stringify(publicDoc);
    assert.ok(!text.includes('operatorToken'));
  });
});
