import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import type { RunningService } from '../src/server.js';
import { admin, createKey, createMerchant, useTestService } from './support/service.js';

/**
 * The document is usable by code generators as it is (issue 36): a client generated from the
 * served GET /v1/openapi.json with openapi-typescript type-checks (tsc, strict) with openapi-fetch,
 * and runs: a token, a member, a deposit, the member's balances, with the access token, the
 * idempotency key and the signature set in openapi-fetch middlewares. No call passes a placeholder
 * header value; one that leaves out a required field or header does not compile (`@ts-expect-error`).
 */

const exec = promisify(execFile);
const root = join(import.meta.dirname, '..');
const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');

/** The program a merchant would write; `./schema.js` is what openapi-typescript generates. */
const program = String.raw`
import { createHash, createHmac, randomUUID } from 'node:crypto';
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema.js';

type Member = components['schemas']['Member'];
type Deposit = components['schemas']['Deposit'];
type Balance = components['schemas']['Balance'];

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(name + ' is not set');
  return value;
};
const client = createClient<paths>({ baseUrl: env('BASE_URL') });

const exchanged = await client.POST('/v1/connect/token', {
  headers: { 'x-client-id': env('CLIENT_ID'), 'x-api-key': env('API_KEY') },
});
if (!exchanged.data) throw new Error('token: ' + JSON.stringify(exchanged.error));
const token: string = exchanged.data.auth_token;

/** The access token on every later call. */
const auth: Middleware = {
  onRequest({ request }) {
    request.headers.set('x-auth-token', 'Bearer ' + token);
    return request;
  },
};
/** A fresh idempotency key on every write that has none (an operation's x-idempotency says where it is required). */
const idempotency: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET' && !request.headers.has('x-idempotency-key')) {
      request.headers.set('x-idempotency-key', randomUUID());
    }
    return request;
  },
};
/**
 * The signature (src/platform/auth/signing.ts): method, path with query, timestamp, nonce and the body's SHA-256,
 * HMAC-SHA256 with the signing key.
 */
const signing: Middleware = {
  async onRequest({ request }) {
    const url = new URL(request.url);
    const body = await request.clone().text();
    const timestamp = String(Math.floor(Date.now() / 1000));
    const nonce = randomUUID();
    const text = [
      request.method.toUpperCase(),
      url.pathname + url.search,
      timestamp,
      nonce,
      createHash('sha256').update(body).digest('hex'),
    ].join('\n');
    request.headers.set('x-timestamp', timestamp);
    request.headers.set('x-nonce', nonce);
    request.headers.set('x-signature', createHmac('sha256', env('SIGNING_KEY')).update(text).digest('base64'));
    return request;
  },
};
client.use(auth, idempotency, signing);

const created = await client.POST('/v1/members', {
  body: { external_member_id: 'codegen-' + randomUUID().slice(0, 8) },
});
if (!created.data) throw new Error('member: ' + JSON.stringify(created.error));
const member: Member = created.data;

const reported = await client.POST('/v1/deposits', {
  body: { member_id: member.id, asset: 'USDT', amount: '25.5', tx_hash: 'codegen-' + randomUUID() },
});
if (!reported.data) throw new Error('deposit: ' + JSON.stringify(reported.error));
const deposit: Deposit = reported.data;

const read = await client.GET('/v1/balances', { params: { header: { 'x-on-behalf-of': member.external_member_id } } });
if (!read.data) throw new Error('balances: ' + JSON.stringify(read.error));
const usdt: Balance | undefined = read.data.data.find((b) => b.asset === 'USDT');

const again = await client.GET('/v1/deposits/{id}', { params: { path: { id: deposit.id } } });
if (again.error) {
  // The error envelope is typed too.
  const code: string = again.error.code;
  throw new Error(code);
}

console.log(
  JSON.stringify({
    member: member.id,
    status: deposit.status,
    amount: deposit.amount,
    available: usdt?.available,
    read_back: again.data.id === deposit.id,
  }),
);

/** Never called: what must not compile. */
export function refused(): void {
  // @ts-expect-error external_member_id is required by CreateMemberRequest
  void client.POST('/v1/members', { body: {} });
  // @ts-expect-error a member's balances need the member (x-on-behalf-of)
  void client.GET('/v1/balances', {});
  // @ts-expect-error amounts are decimal strings, never numbers
  void client.POST('/v1/deposits', { body: { member_id: 'm', asset: 'USDT', amount: 25.5, tx_hash: 't' } });
}
`;

const tsconfig = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    skipLibCheck: true,
    types: ['node'],
    outDir: '.',
    rootDir: '.',
  },
  files: ['program.mts', 'schema.d.ts'],
};

describe('a client generated from GET /v1/openapi.json (openapi-typescript, openapi-fetch)', () => {
  let service: RunningService;
  let dir: string;

  useTestService({ merchant: false }, (s) => ({ service } = s));
  before(async () => {
    // Inside the repository's node_modules, so that the program resolves openapi-fetch and @types/node from it.
    mkdirSync(join(root, 'node_modules/.cache'), { recursive: true });
    dir = mkdtempSync(join(root, 'node_modules/.cache/mwa-openapi-codegen-'));
  });
  after(async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test(
    'type-checks (tsc, strict) and runs against the service: token, member, deposit, balances, with no ' +
      'placeholder',
    async () => {
      const doc = await (await fetch(`${service.publicUrl}/v1/openapi.json`)).json();
      writeFileSync(join(dir, 'schema.d.ts'), astToString(await openapiTS(doc as Parameters<typeof openapiTS>[0])));
      writeFileSync(join(dir, 'program.mts'), program);
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
      const checked = await exec(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: dir }).catch(
        (err) => err,
      );
      assert.equal(checked.code ?? 0, 0, `tsc:\n${checked.stdout}${checked.stderr}`);

      // Production (the host 127.0.0.1 chooses it): a key for it needs the operator's approval.
      const merchantId = await createMerchant(service);
      const creds = await createKey(service, merchantId, { environment: 'production' });
      if (creds.pendingScopes.length)
        assert.equal((await admin(service, 'POST', `/admin/v1/api-keys/${creds.keyId}/approve`, {})).status, 200);
      const ran = await exec(process.execPath, [join(dir, 'program.mjs')], {
        cwd: dir,
        env: {
          ...process.env,
          BASE_URL: service.publicUrl,
          CLIENT_ID: creds.clientId,
          API_KEY: creds.apiKey,
          SIGNING_KEY: creds.signingKey,
        },
      }).catch((err) => err);
      assert.equal(ran.code ?? 0, 0, `program:\n${ran.stdout}${ran.stderr}`);
      const out = JSON.parse(String(ran.stdout).trim().split('\n').pop()!);
      assert.match(out.member, /^mem_/);
      assert.deepEqual(
        { status: out.status, amount: out.amount, available: out.available, read_back: out.read_back },
        { status: 'credited', amount: '25.500000', available: '25.500000', read_back: true },
      );
    },
  );
});
