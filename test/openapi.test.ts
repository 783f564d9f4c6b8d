import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { errorStatus, type ErrorCode } from '../src/platform/errors.js';
import type { RouteAccess } from '../src/platform/routes/route-access.js';
import { compileDeferredSchemas } from '../src/platform/http/validation.js';
import type { RunningService } from '../src/server.js';
import { eventCatalogue, eventTypes } from '../src/events/index.js';
import { defaultWebhookRetryScheduleMs } from '../src/platform/config/config-values.js';
import { deliveryStatuses } from '../src/modules/webhooks/service.js';
import { hoistNamedSchemas, SchemaNameConflict } from '../src/platform/openapi/openapi-schemas.js';
import { serversFor } from '../src/platform/openapi/openapi.js';
import { useTestService } from './support/service.js';
import {
  declaredOperationIds,
  operationOf,
  openapiPath,
  registeredPublicRoutes,
  type PublicRoute,
} from './support/declared-routes.js';
import { webhookBodyFields, webhookDataFields } from './support/webhook-receiver.js';

/**
 * The document is checked against the routes actually registered, whatever they are: each new
 * route is covered by the generic rules below as soon as it exists.
 */

type Json = Record<string, any>;

const isRead = (method: string) => method === 'GET' || method === 'HEAD';
const signedRoute = (method: string, access: RouteAccess) =>
  access.scope !== 'public' && (access.signature === 'always' || !isRead(method));

function headerParam(op: Json, name: string): Json | undefined {
  return (op.parameters ?? []).find((p: Json) => p.in === 'header' && String(p.name).toLowerCase() === name);
}

/**
 * Header parameters the contract asks for: 'required', 'optional' or 'absent'. The signing headers
 * are never parameters (they are security schemes: a generated typed call must not take them), and
 * the idempotency key is an optional parameter even where the operation requires it (its
 * description says so): a client sets both in one place, not as placeholders on every call.
 */
function expectedHeaders(method: string, access: RouteAccess): Record<string, 'required' | 'optional' | 'absent'> {
  const principal = access.scope === 'public' ? 'none' : (access.principal ?? 'merchant');
  const idempotency = access.idempotency ?? 'none';
  return {
    'x-on-behalf-of': principal === 'member' ? 'required' : principal === 'either' ? 'optional' : 'absent',
    'x-idempotency-key': idempotency === 'none' ? 'absent' : 'optional',
    'x-timestamp': 'absent',
    'x-nonce': 'absent',
    'x-signature': 'absent',
  };
}

const signatureSchemes = ['signatureTimestamp', 'signatureNonce', 'signature'];

/** A schema of the document with its `$ref` (to components.schemas) followed. */
function deref(doc: Json, schema: Json): Json {
  const ref = schema?.$ref as string | undefined;
  return ref ? deref(doc, doc.components.schemas[ref.replace('#/components/schemas/', '')]) : schema;
}

/** Codes the access implies (must be listed) and the implied codes that do not apply (must not be). */
function expectedCodes(
  method: string,
  access: RouteAccess,
  schema: Json,
): { listed: ErrorCode[]; unlisted: ErrorCode[] } {
  const listed: ErrorCode[] = [];
  const unlisted: ErrorCode[] = [];
  const when = (cond: boolean, ...codes: ErrorCode[]) => (cond ? listed : unlisted).push(...codes);
  const authenticated = access.scope !== 'public';
  const principal = access.principal ?? 'merchant';
  const idempotency = access.idempotency ?? 'none';
  when(authenticated, 'invalid_token', 'environment_mismatch', 'ip_not_allowed', 'merchant_disabled', 'rate_limited');
  when(authenticated && access.scope !== 'token', 'insufficient_scope');
  when(signedRoute(method, access), 'invalid_signature', 'timestamp_out_of_range', 'nonce_reused');
  when(idempotency === 'required', 'idempotency_key_required');
  when(idempotency !== 'none', 'idempotency_key_invalid', 'idempotency_key_reused', 'idempotency_in_progress');
  // A blank x-on-behalf-of is refused where the header is required and where it is optional.
  when(authenticated && principal !== 'merchant', 'member_context_required', 'member_not_found');
  if (access.sandboxOnly) listed.push('not_found');
  listed.push('invalid_request'); // every operation: a query value with NUL, a body that is not JSON
  listed.push(...(access.errors ?? []));
  return { listed, unlisted: unlisted.filter((c) => !listed.includes(c)) };
}

function kindsOf(method: string, access: RouteAccess): string[] {
  const kinds = [access.scope === 'public' || access.scope === 'token' ? access.scope : 'scoped'];
  if (access.scope !== 'public') kinds.push(`principal:${access.principal ?? 'merchant'}`);
  if ((access.idempotency ?? 'none') !== 'none') kinds.push(`idempotency:${access.idempotency}`);
  if (signedRoute(method, access))
    kinds.push(access.signature === 'always' && isRead(method) ? 'signed:always' : 'signed');
  if (access.sandboxOnly) kinds.push('sandboxOnly');
  if (access.errors?.length) kinds.push('errors');
  return kinds;
}

describe('GET /v1/openapi.json', () => {
  let service: RunningService;
  let doc: Json;
  let routes: PublicRoute[];
  let documented: PublicRoute[];

  useTestService({ merchant: false }, (s) => ({ service } = s));
  before(async () => {
    const res = await fetch(`${service.publicUrl}/v1/openapi.json`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    doc = (await res.json()) as Json;
    routes = await registeredPublicRoutes(service);
    documented = routes.filter((r) => r.url.startsWith('/v1/') && !r.hidden);
  });

  test(
    'every route schema the service registered compiles (compilation is put off to first use: a broken schema ' +
      'must not wait for a request)',
    () => {
      // Compiles (and so throws on a broken one) whatever is still waiting. How many that is depends
      // on the test worker's history: compiled schemas are kept per process, across the files it ran.
      compileDeferredSchemas();
      assert.equal(compileDeferredSchemas(), 0);
    },
  );

  test('is a valid OpenAPI 3.1 document', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const validator = new Validator();
    const result = await validator.validate(doc);
    assert.equal(validator.version, '3.1');
    assert.ok(result.valid, `invalid document: ${JSON.stringify(result.errors, null, 2)}`);
  });

  test('describes the API, its servers and the shared error envelope', () => {
    assert.equal(doc.info.title, 'Merchant Wallet API');
    assert.equal(doc.info.version, '1.0.0');
    assert.match(doc.info.description, /api-sandbox/);
    assert.match(doc.info.description, /\[signing rules\]\(/);
    // The reference's {base_url} and {sandbox_base_url} (a deployment's hosts, as variables), then a local service.
    assert.deepEqual(
      doc.servers.map((s: Json) => s.url),
      ['https://{host}', 'https://{host}', 'http://127.0.0.1:{port}'],
    );
    assert.match(doc.servers[0].description, /\{base_url\}/);
    assert.match(doc.servers[1].variables.host.default, /api-sandbox/);
    assert.equal(doc.info.license.name, 'Apache-2.0');
    // A deployment that sets PUBLIC_BASE_URL_* documents its own hosts.
    assert.deepEqual(
      serversFor({ production: 'https://api.wallet.test', sandbox: 'https://api-sandbox.wallet.test' })
        .slice(0, 2)
        .map((s) => [s.url, s.variables]),
      [
        ['https://api.wallet.test', undefined],
        ['https://api-sandbox.wallet.test', undefined],
      ],
    );
    const error = doc.components.schemas.Error;
    assert.equal(error.type, 'object');
    assert.deepEqual([...error.required].sort(), ['code', 'message', 'request_id', 'type']);
    assert.equal(error.additionalProperties, true);
    assert.deepEqual(doc.components.securitySchemes.bearerAuth, {
      ...doc.components.securitySchemes.bearerAuth,
      type: 'http',
      scheme: 'bearer',
    });
    assert.equal(doc.components.securitySchemes.xAuthToken.name, 'x-auth-token');
  });

  test(
    "the shared Error schema describes the extra fields the service answers with some codes (the reference's " +
      '"Extra fields", and locked_until)',
    () => {
      const props = doc.components.schemas.Error.properties as Json;
      const described = (name: string) =>
        assert.ok(props[name] && typeof props[name].description === 'string', `Error.${name} is described`);
      for (const name of [
        'challenge_id',
        'hosted_url',
        'expires_at',
        'fields',
        'reason',
        'retry_after',
        'limit_type',
        'limit_scope',
        'locked_until',
        'error',
      ])
        described(name);
      assert.equal(props.fields.type, 'array');
      assert.deepEqual([...props.fields.items.required].sort(), ['key', 'reason']);
      assert.equal(props.retry_after.type, 'integer');
      assert.deepEqual([...props.limit_type.enum].sort(), ['daily', 'single']);
      assert.deepEqual([...props.limit_scope.enum].sort(), ['member', 'merchant']);
      assert.deepEqual([props.locked_until.type, props.locked_until.format], ['string', 'date-time']);
      assert.equal(props.error.type, 'object');
    },
  );

  test('the collected routes are the ones the service serves', () => {
    assert.ok(routes.some((r) => r.method === 'POST' && r.url === '/v1/connect/token'));
    for (const r of routes) {
      assert.ok(
        service.publicApp.hasRoute({ method: r.method as 'GET', url: r.url }),
        `${r.method} ${r.url} not served`,
      );
    }
  });

  test('lists every public /v1 route with its method, and nothing else', () => {
    for (const r of documented) {
      assert.ok(
        doc.paths[openapiPath(r.url)]?.[r.method.toLowerCase()],
        `${r.method} ${r.url} missing from the document`,
      );
    }
    const expected = new Set(documented.map((r) => `${r.method.toLowerCase()} ${openapiPath(r.url)}`));
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      assert.ok(path.startsWith('/v1/'), `${path} is not under /v1/`);
      for (const method of Object.keys(item).filter((k) => k !== 'parameters' && !k.startsWith('x-'))) {
        assert.ok(
          expected.has(`${method} ${path}`),
          `${method.toUpperCase()} ${path} documented but not a visible route`,
        );
      }
    }
    for (const hidden of ['/v1/openapi.json', '/docs', '/healthz', '/readyz'])
      assert.equal(doc.paths[hidden], undefined);
  });

  test('each operation carries its scope, principal and security from config.access', () => {
    for (const r of documented) {
      const op = operationOf(doc, r);
      const where = `${r.method} ${r.url}`;
      assert.equal(op['x-scope'], r.access.scope, where);
      if (r.access.scope === 'public') {
        assert.deepEqual(op.security, [], `${where}: public routes need no token`);
        assert.equal(op['x-principal'], undefined, where);
      } else {
        assert.equal(op['x-principal'], r.access.principal ?? 'merchant', where);
        assert.ok(op.security.length > 0, where);
        for (const requirement of op.security) {
          for (const name of Object.keys(requirement))
            assert.ok(doc.components.securitySchemes[name], `${where}: ${name}`);
        }
        assert.ok(op.security.some((s: Json) => s.bearerAuth) && op.security.some((s: Json) => s.xAuthToken), where);
        // A signed operation needs the token and the three signature headers together, in each alternative.
        const signed = signedRoute(r.method, r.access);
        assert.equal(op['x-signed'], signed, where);
        for (const requirement of op.security) {
          for (const name of signatureSchemes)
            assert.equal(name in requirement, signed, `${where}: ${name} ${signed ? 'required' : 'not required'}`);
        }
      }
    }
  });

  test('the signing headers are apiKey security schemes in the header (not parameters)', () => {
    const schemes = doc.components.securitySchemes;
    for (const [name, header] of [
      ['signatureTimestamp', 'x-timestamp'],
      ['signatureNonce', 'x-nonce'],
      ['signature', 'x-signature'],
    ]) {
      assert.deepEqual([schemes[name].type, schemes[name].in, schemes[name].name], ['apiKey', 'header', header], name);
    }
    assert.deepEqual(doc.paths['/v1/members'].post.security, [
      { bearerAuth: [], signatureTimestamp: [], signatureNonce: [], signature: [] },
      { xAuthToken: [], signatureTimestamp: [], signatureNonce: [], signature: [] },
    ]);
    assert.deepEqual(doc.paths['/v1/members/{id}'].get.security, [{ bearerAuth: [] }, { xAuthToken: [] }]);
  });

  test('each operation lists the headers its access asks for', () => {
    for (const r of documented) {
      const op = operationOf(doc, r);
      for (const [name, rule] of Object.entries(expectedHeaders(r.method, r.access))) {
        const param = headerParam(op, name);
        const where = `${r.method} ${r.url} header ${name}`;
        if (rule === 'absent') assert.equal(param, undefined, `${where} should be absent`);
        else assert.equal(param?.required, rule === 'required', `${where} should be ${rule}`);
      }
      const key = headerParam(op, 'x-idempotency-key');
      if (key) {
        const shape = new RegExp(key.schema.pattern);
        assert.ok(
          shape.test('5f0c6b8e-3a4d-4c1e-9b7a-2d6f8e1c0a93') && !shape.test('not-a-uuid'),
          `${r.method} ${r.url}: UUID shape`,
        );
        // Where the operation requires it, the description says so (and the code its absence answers).
        assert.equal(
          key.description.includes('`idempotency_key_required`'),
          r.access.idempotency === 'required',
          `${r.method} ${r.url}: key requirement described`,
        );
        assert.equal(op['x-idempotency'], r.access.idempotency, `${r.method} ${r.url}`);
      }
    }
  });

  test('each operation lists its error codes, grouped by status, on the shared Error schema', () => {
    for (const r of documented) {
      const op = operationOf(doc, r);
      const where = `${r.method} ${r.url}`;
      const listedAt = new Map<string, string>();
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        if (!response['x-error-codes']) {
          assert.ok(Number(status) < 400, `${where} ${status} lacks x-error-codes`);
          continue;
        }
        for (const code of response['x-error-codes'] as ErrorCode[]) {
          assert.equal(String(errorStatus(code)), status, `${where}: ${code} under ${status}`);
          assert.ok(response.description.includes(`\`${code}\``), `${where}: ${code} not in the ${status} description`);
          listedAt.set(code, status);
        }
        const schema = response.content?.['application/json']?.schema;
        assert.ok(schema, `${where} ${status} has no JSON body`);
        if (schema.$ref) assert.equal(schema.$ref, '#/components/schemas/Error', `${where} ${status}`);
      }
      const { listed, unlisted } = expectedCodes(r.method, r.access, r.schema);
      for (const code of listed) assert.ok(listedAt.has(code), `${where} should list ${code}`);
      for (const code of unlisted) assert.ok(!listedAt.has(code), `${where} should not list ${code}`);
    }
  });

  test(
    'invalid_request is listed on every operation: ' + 'a query value with NUL is refused before any route runs',
    async () => {
      const res = await fetch(`${service.publicUrl}/v1/assets?x=%00`);
      assert.equal(res.status, 400);
      assert.equal(((await res.json()) as Json).code, 'invalid_request');
      assert.ok(doc.paths['/v1/assets'].get.responses['400']['x-error-codes'].includes('invalid_request'));
    },
  );

  test(
    "card merchant rules: rule_type is the reference's enum (white, black; null without rules), synced_at a " +
      'date-time',
    () => {
      const schema = deref(
        doc,
        doc.paths['/v1/cards/{id}/merchant-rules'].get.responses['200'].content['application/json'].schema,
      );
      const ruleType = schema.properties.rule_type;
      assert.deepEqual(
        (ruleType.anyOf ?? []).map((s: Json) => s.const ?? s.enum?.[0] ?? s.type),
        ['white', 'black', 'null'],
      );
      assert.ok(schema.properties.synced_at.anyOf.some((s: Json) => s.format === 'date-time'));
    },
  );

  test('POST /v1/connect/token is public: no token, no signing, no member header', () => {
    const op = doc.paths['/v1/connect/token'].post;
    assert.equal(op['x-scope'], 'public');
    assert.deepEqual(op.security, []);
    for (const name of ['x-on-behalf-of', 'x-idempotency-key', 'x-timestamp', 'x-nonce', 'x-signature']) {
      assert.equal(headerParam(op, name), undefined, name);
    }
    const codes = Object.values<Json>(op.responses).flatMap((r) => r['x-error-codes'] ?? []);
    for (const code of ['invalid_token', 'insufficient_scope', 'invalid_signature', 'member_context_required']) {
      assert.ok(!codes.includes(code), code);
    }
  });

  test('every operation has the operationId its route declares: camelCase, unique in the document', () => {
    const ids = declaredOperationIds(doc, documented);
    for (const item of Object.values<Json>(doc.webhooks)) ids.push(item.post.operationId);
    assert.deepEqual(
      ids.filter((id, i) => ids.indexOf(id) !== i),
      [],
      'duplicate operationIds',
    );
    const idOf = (method: string, path: string) => doc.paths[path][method].operationId;
    assert.deepEqual(
      [
        idOf('post', '/v1/members'),
        idOf('get', '/v1/deposits'),
        idOf('get', '/v1/deposits/{id}'),
        idOf('post', '/v1/withdrawals/{id}/confirm'),
        idOf('get', '/v1/cards/{id}/topups'),
      ],
      ['createMember', 'listDeposits', 'getDeposit', 'confirmWithdrawal', 'listCardTopups'],
    );
  });

  test('every request body and success body is a named schema of components.schemas, referenced', () => {
    const inline: string[] = [];
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const [method, op] of Object.entries<Json>(item)) {
        const bodies: Array<[string, Json]> = Object.entries<Json>(op.requestBody?.content ?? {}).map(([type, m]) => [
          `request ${type}`,
          m,
        ]);
        for (const [status, response] of Object.entries<Json>(op.responses)) {
          for (const [type, media] of Object.entries<Json>(response.content ?? {}))
            bodies.push([`${status} ${type}`, media]);
        }
        for (const [where, media] of bodies) {
          const ref = media.schema?.$ref as string | undefined;
          if (!ref?.startsWith('#/components/schemas/')) inline.push(`${method.toUpperCase()} ${path} ${where}`);
          else
            assert.ok(
              doc.components.schemas[ref.slice('#/components/schemas/'.length)],
              `${method} ${path} ${where}: ${ref} missing`,
            );
        }
      }
    }
    assert.deepEqual(inline, []);
    // The reference's resources (and ours) under their own names, not their operations'.
    const names = Object.keys(doc.components.schemas);
    for (const name of [
      'Member',
      'MemberProfile',
      'Deposit',
      'DepositList',
      'Withdrawal',
      'WithdrawalConfirmation',
      'Balance',
      'MerchantBalance',
      'ExchangeQuote',
      'ExchangeOrder',
      'Card',
      'CardApplication',
      'CardProduct',
      'CardTopup',
      'CardTopupQuote',
      'CardTransaction',
      'CardReplacement',
      'CardMerchantRules',
      'Payee',
      'RemittanceOrder',
      'ConversionDates',
      'WebhookEndpoint',
      'WebhookDelivery',
      'HostedScreenTicket',
      'KycProfile',
      'EarnProduct',
      'EarnOrder',
      'EarnPosition',
      'QrPayment',
      'AccessToken',
      'Asset',
      'CreateMemberRequest',
      'CreateDepositRequest',
      'Error',
      'WebhookEvent',
    ]) {
      assert.ok(names.includes(name), `components.schemas.${name}`);
    }
    for (const name of names) assert.match(name, /^[A-Z][A-Za-z0-9]*$/, name);
    assert.equal(
      doc.paths['/v1/members'].post.requestBody.content['application/json'].schema.$ref,
      '#/components/schemas/CreateMemberRequest',
    );
    assert.equal(
      doc.paths['/v1/members/{id}'].get.responses['200'].content['application/json'].schema.$ref,
      '#/components/schemas/Member',
    );
    assert.equal(
      deref(doc, doc.components.schemas.Member).properties.profile.$ref,
      '#/components/schemas/MemberProfile',
    );
    assert.equal(doc.components.schemas.DepositList.properties.data.items.$ref, '#/components/schemas/Deposit');
  });

  test(
    'no two named schemas are the same schema (a resource answered by several operations is named once, in its ' +
      'route schema file)',
    () => {
      const byShape = new Map<string, string[]>();
      for (const [name, { title: _title, examples: _examples, ...schema }] of Object.entries<Json>(
        doc.components.schemas,
      )) {
        const shape = JSON.stringify(schema);
        byShape.set(shape, [...(byShape.get(shape) ?? []), name]);
      }
      assert.deepEqual(
        [...byShape.values()].filter((names) => names.length > 1),
        [],
      );
    },
  );

  test('a body the route declares optional is not required: rolling a webhook secret takes none', () => {
    assert.equal(doc.paths['/v1/webhooks/endpoints/{id}/roll-secret'].post.requestBody.required, false);
    assert.equal(doc.paths['/v1/webhooks/endpoints'].post.requestBody.required, true);
  });

  test(
    'the deliveries list documents its status filter with the delivery statuses (an open enum: unknown values ' +
      'give an empty page)',
    () => {
      const status = doc.paths['/v1/webhooks/deliveries'].get.parameters.find(
        (p: Json) => p.in === 'query' && p.name === 'status',
      );
      assert.ok(status, 'status parameter');
      const enums = (status.schema.anyOf ?? [status.schema]).flatMap((s: Json) => s.enum ?? []);
      assert.deepEqual(enums, [...deliveryStatuses]);
    },
  );

  test(
    'documents the webhook request under webhooks: envelope, Standard Webhooks headers, success rule, retries, ' +
      'every event type',
    () => {
      const op = doc.webhooks?.event?.post;
      assert.ok(op, 'webhooks.event.post');
      assert.deepEqual(op.security, []);
      for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
        const h = headerParam(op, name);
        assert.equal(h?.required, true, name);
      }
      assert.match(op.description, /2xx answer within 15 s/);
      assert.match(op.description, /5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h/);
      assert.match(op.description, new RegExp(`${defaultWebhookRetryScheduleMs.length + 1} attempts in all`));
      assert.ok(op.responses['2XX'] && op.responses['410'] && op.responses.default);
      const envelope = doc.components.schemas.WebhookEvent;
      assert.deepEqual([...envelope.required].sort(), webhookBodyFields);
      assert.deepEqual([...envelope.properties.data.required].sort(), webhookDataFields);
      assert.deepEqual(envelope.properties.event_type.enum, eventTypes);
      const variants: Json[] = op.requestBody.content['application/json'].schema.oneOf.map((v: Json) => deref(doc, v));
      assert.equal(
        op.requestBody.content['application/json'].schema.oneOf[0].$ref,
        '#/components/schemas/DepositCreditedEvent',
      );
      assert.deepEqual(
        variants.map((v) => v.properties.event_type.const),
        eventTypes,
        'one variant per catalogue type, in order',
      );
      for (const v of variants) {
        const type = v.properties.event_type.const as keyof typeof eventCatalogue;
        assert.equal(v.properties.data.properties.object.const, eventCatalogue[type].object, type);
        assert.ok(
          op.description.includes(`| \`${type}\` | \`${eventCatalogue[type].object}\` |`),
          `${type} in the description's table`,
        );
      }
    },
  );

  test('reports which kinds of route the rules were checked on', (t) => {
    const kinds = new Map<string, string[]>();
    for (const r of documented) {
      for (const kind of kindsOf(r.method, r.access))
        kinds.set(kind, [...(kinds.get(kind) ?? []), `${r.method} ${r.url}`]);
    }
    for (const [kind, list] of kinds)
      t.diagnostic(`${kind}: ${list.length} (${list[0]}${list.length > 1 ? ', ...' : ''})`);
    assert.ok(kinds.has('public'));
  });
});

describe('named schemas (openapi-schemas.ts)', () => {
  const op = (body: Json, response: Json): Json => ({
    paths: {
      '/v1/x': {
        post: {
          operationId: 'createThing',
          requestBody: { content: { 'application/json': { schema: body } } },
          responses: { 201: { description: 'ok', content: { 'application/json': { schema: response } } } },
        },
      },
    },
  });
  const Thing = { title: 'Thing', type: 'object', properties: { id: { type: 'string' } } };

  test('a titled schema is hoisted once and referenced; an untitled body is named after its operation', () => {
    const doc = hoistNamedSchemas(
      op(
        { type: 'object', properties: { thing: Thing } },
        { type: 'object', properties: { data: { type: 'array', items: Thing } } },
      ),
    );
    const post = doc.paths['/v1/x'].post;
    assert.equal(post.requestBody.content['application/json'].schema.$ref, '#/components/schemas/CreateThingRequest');
    assert.equal(
      post.responses[201].content['application/json'].schema.$ref,
      '#/components/schemas/CreateThingResponse',
    );
    assert.deepEqual(doc.components.schemas.CreateThingRequest.properties.thing, {
      $ref: '#/components/schemas/Thing',
    });
    assert.deepEqual(doc.components.schemas.Thing, Thing);
  });

  test('two different schemas with one name are refused', () => {
    assert.throws(
      () => hoistNamedSchemas(op(Thing, { ...Thing, properties: { id: { type: 'integer' } } })),
      SchemaNameConflict,
    );
  });
});
