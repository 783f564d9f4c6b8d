import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { after, before } from 'node:test';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MerchantWalletClient } from '@merchant-wallet/sdk';
import { startService, type RunningService, type StartOptions } from '../../src/server.js';
import { verifyLedger } from '../../src/money/index.js';
import { migratedImage } from './database.js';

/**
 * The suite runs on the embedded database by default; `TEST_DATABASE_URL=postgres://...` runs the
 * same tests against a PostgreSQL server (CI does both). Under `npm test` that URL names this test
 * file's own copy of a migrated template (support/worker.ts, support/per-file-database.ts). Read
 * when a service starts, not when this module loads: a pooled worker runs several files, each
 * with its own copy, and loads this module once.
 */
export function testDatabaseUrl(): string {
  return process.env.TEST_DATABASE_URL || 'memory://';
}
export const adminToken = 'test-admin-token';

/** Whether the tests run on a PostgreSQL server (`TEST_DATABASE_URL`) rather than the embedded database. */
export const onPostgres = () => /^postgres(ql)?:\/\//.test(testDatabaseUrl());
/** The `skip` of a test or describe that needs PostgreSQL: `false` there, else why it is skipped. */
export const postgresOnly = (why?: string) =>
  onPostgres() ? false : `needs TEST_DATABASE_URL=postgres://...${why ? ` (${why})` : ''}`;

/**
 * The sandbox's upstreams settled at once (service config): the simulator confirms without delay, reconciliation
 * asks at once, and a request the upstream never received is taken as lost without a grace period.
 */
export const instantUpstreams = { simulatorConfirmDelayMs: 0, upstreamReconcileDelayMs: 0, upstreamNotFoundGraceMs: 0 };

/** A service on a fresh database: in memory, it starts from the migrated image (support/database.ts). */
export async function startTestService(options: StartOptions = {}): Promise<RunningService> {
  const config = {
    port: 0,
    adminPort: 0,
    host: '127.0.0.1',
    adminHost: '127.0.0.1',
    databaseUrl: testDatabaseUrl(),
    dataDir: mkdtempSync(join(tmpdir(), 'mwa-test-')),
    adminToken,
    workers: false,
    // Console password hashes at 1 MiB instead of 32 (config.ts): ~120 of them in the suite.
    consolePasswordCost: 10,
    // Every answer checked against its route's response schema before it is sent (platform/
    // response-check.ts): a mismatch is a 500 the test sees. `MWA_STRICT_RESPONSES` set chooses.
    ...(process.env.MWA_STRICT_RESPONSES ? {} : { strictResponses: 'fail' as const }),
    // Behind PgBouncer (DATABASE_POOLER=transaction, read by the service): LISTEN on the copy directly.
    ...(process.env.TEST_DATABASE_DIRECT_URL ? { databaseListenUrl: process.env.TEST_DATABASE_DIRECT_URL } : {}),
    ...options.config,
  };
  const embeddedImage =
    config.databaseUrl === 'memory://' && !options.embeddedImage ? await migratedImage() : options.embeddedImage;
  return startService({ logger: process.env.TEST_LOG === '1', ...options, embeddedImage, config });
}

export type Env = 'sandbox' | 'production';

/** Host that selects the environment, with the service's port, as a merchant would call it. */
export function baseUrlFor(service: RunningService, environment: Env): string {
  const port = new URL(service.publicUrl).port;
  return `http://${environment === 'sandbox' ? 'api-sandbox.localhost' : 'api.localhost'}:${port}`;
}

export interface Credentials {
  merchantId: string;
  keyId: string;
  clientId: string;
  apiKey: string;
  signingKey: string;
  environment: Env;
  pendingScopes: string[];
  scopes: string[];
}

export async function admin<T = any>(
  service: RunningService,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${service.adminUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${service.adminToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

export async function createMerchant(service: RunningService, name = 'Test merchant'): Promise<string> {
  const res = await admin<{ id: string }>(service, 'POST', '/admin/v1/merchants', { name });
  if (res.status !== 201) throw new Error(`merchant creation failed: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

export const allScopes = [
  'remittances:write',
  'kyc:write',
  'exchange:write',
  'cards:write',
  'cards:secure',
  'members:write',
  'withdrawals:write',
  'merchant:write',
  'deposits:write',
  'balances:read',
  'webhooks:write',
  'earn:write',
  'qrpay:write',
  'ledger:read',
  'exports:write',
  'events:read',
];

export async function createKey(
  service: RunningService,
  merchantId: string,
  options: { environment?: Env; scopes?: string[]; ip_allowlist?: string; expires_at?: string } = {},
): Promise<Credentials> {
  const environment = options.environment ?? 'sandbox';
  const res = await admin(service, 'POST', `/admin/v1/merchants/${merchantId}/api-keys`, {
    environment,
    scopes: options.scopes ?? allScopes,
    ...(options.ip_allowlist !== undefined
      ? { ip_allowlist: options.ip_allowlist }
      : environment === 'production'
        ? { ip_allowlist: '127.0.0.1' }
        : {}),
    ...(options.expires_at ? { expires_at: options.expires_at } : {}),
  });
  if (res.status !== 201) throw new Error(`key creation failed: ${JSON.stringify(res.body)}`);
  return {
    merchantId,
    keyId: res.body.id,
    clientId: res.body.client_id,
    apiKey: res.body.api_key,
    signingKey: res.body.signing_key,
    environment,
    pendingScopes: res.body.pending_scopes,
    scopes: res.body.scopes,
  };
}

export function clientFor(
  service: RunningService,
  creds: Credentials,
  options: { maxAttempts?: number; sleep?: (ms: number) => Promise<void> } = {},
): MerchantWalletClient {
  return new MerchantWalletClient({
    baseUrl: baseUrlFor(service, creds.environment),
    connectHost: '127.0.0.1',
    clientId: creds.clientId,
    apiKey: creds.apiKey,
    signingKey: creds.signingKey,
    maxAttempts: options.maxAttempts ?? 1,
    ...(options.sleep ? { sleep: options.sleep } : {}),
  });
}

/** A client on a new key of an existing merchant (`createKey`'s options: environment, scopes, ...). */
export async function keyClient(
  service: RunningService,
  merchantId: string,
  options: Parameters<typeof createKey>[2] = {},
): Promise<MerchantWalletClient> {
  return clientFor(service, await createKey(service, merchantId, options));
}

/**
 * A client on a new production key of an existing merchant (every scope, the IP allow-list
 * 127.0.0.1), its scopes that wait for the operator approved.
 */
export async function approvedProductionClient(
  service: RunningService,
  merchantId: string,
): Promise<MerchantWalletClient> {
  const creds = await createKey(service, merchantId, { environment: 'production' });
  if (creds.pendingScopes.length)
    assert.equal((await admin(service, 'POST', `/admin/v1/api-keys/${creds.keyId}/approve`, {})).status, 200);
  return clientFor(service, creds);
}

/** A fresh merchant with a sandbox key holding every scope, and a client for it. */
export async function newMerchantClient(service: RunningService, options: Parameters<typeof createKey>[2] = {}) {
  const merchantId = await createMerchant(service);
  const creds = await createKey(service, merchantId, options);
  return { merchantId, creds, client: clientFor(service, creds) };
}

export interface TestServiceSetup {
  service: RunningService;
  client: MerchantWalletClient;
  merchantId: string;
  creds: Credentials;
}

/** Asserts the ledger's invariants hold now (every asset's postings sum to zero, balances match). */
export async function expectLedgerClean(service: RunningService): Promise<void> {
  assert.deepEqual((await verifyLedger(service.ctx.db)).problems, []);
}

export interface TestServiceOptions extends StartOptions {
  /**
   * The merchant made with the service (a sandbox key holding every scope, and a client for it):
   * its name and the key's options; `false` for none, when the tests make their own.
   */
  merchant?: false | { name?: string; key?: Parameters<typeof createKey>[2] };
  /** `false`: the ledger is not verified after the tests (say why where it is passed). */
  verifyLedger?: boolean;
}

/**
 * The one set-up of a file (or describe) that drives a service in this process: the service started
 * before its tests, with a fresh merchant and a client holding every scope (`ready` gets them: assign
 * them to the file's variables; `merchant: false` for none); after them, the ledger verified over
 * everything the tests did, and the service closed. Call it at the file's top level or in a
 * describe's body; a `before` registered after it sees the service. A test about the process itself
 * spawns one instead (support/process.ts).
 */
export function useTestService(
  options: TestServiceOptions & { merchant: false },
  ready?: (setup: { service: RunningService }) => void,
): void;
export function useTestService(options?: TestServiceOptions, ready?: (setup: TestServiceSetup) => void): void;
export function useTestService(options: TestServiceOptions = {}, ready?: (setup: any) => void): void {
  const { merchant = {}, verifyLedger: verify = true, ...start } = options;
  let service: RunningService | undefined;
  before(async () => {
    service = await startTestService(start);
    if (merchant === false) return ready?.({ service });
    const merchantId = await createMerchant(service, merchant.name);
    const creds = await createKey(service, merchantId, merchant.key);
    ready?.({ service, merchantId, creds, client: clientFor(service, creds) });
  });
  after(async () => {
    if (!service) return;
    const report = verify ? await verifyLedger(service.ctx.db) : undefined;
    await service.close();
    if (report) assert.deepEqual(report.problems, [], 'ledger invariants hold after the tests');
  });
}
