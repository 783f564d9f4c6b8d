/**
 * Issue 37's figures as a platform's traffic looks: writes and reads spread over many merchants
 * (and members), each merchant under its UNSCALED rate-limit quota (docs/rate-limits.md:
 * per merchant and environment, `deposits` 60/min, `members_write` 300/min, `orders` 120/min,
 * `reads` 1,200/min), against a server started as a deployment runs it
 * (`startDeploymentServer`: default configuration, log level info, RATE_LIMIT_SCALE unset).
 *
 * How a figure stays under the quotas: each merchant ("tenant") of a figure is used by that
 * figure only, and gets a budget of requests in its bucket: 90 % of the quota, less every hit its
 * set-up made in that bucket and the probe. Since all of a tenant's hits (set-up, probe, warm-up,
 * measurement) fall within about a minute, the sliding-window estimate (previous × weight +
 * current) never passes the budget, whatever the minute boundaries. Requests go round robin over
 * the tenants, so each gets total/tenants. The number of tenants is sized from the rate the figure
 * could reach (twice its target against `pgbench -N`, or against bare Fastify for reads; at least
 * `BENCH_SPREAD_MIN_MERCHANTS`, 46), and the load stops when the budgets are spent (the figure is
 * then measured over the time it ran and says so). Every answer's status is counted: any 429 makes
 * the figure invalid (printed as such), and the first body of each non-2xx status is kept.
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import autocannon from 'autocannon';
import { signRequest } from '@merchant-wallet/sdk';
import { adminCall, benchMerchant, connections, SetupError, warmupSeconds, type BenchServer } from './support.js';

export const quotas = { deposits: 60, members_write: 300, orders: 120, reads: 1200 } as const;
export type Bucket = keyof typeof quotas;
/** Share of a quota a tenant may use in one figure, set-up included. */
const quotaShare = Number(process.env.BENCH_QUOTA_SHARE ?? 0.9);
const minTenants = Number(process.env.BENCH_SPREAD_MIN_MERCHANTS ?? 46);
const maxTenants = Number(process.env.BENCH_SPREAD_MAX_MERCHANTS ?? 800);
const setupConcurrency = Number(process.env.BENCH_SETUP_CONCURRENCY ?? 8);
const membersPerTenant = Number(process.env.BENCH_SPREAD_MEMBERS ?? 4);

const allScopes = [
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
const TRON = 'TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW';
const sepa = {
  country_code: 'DE',
  currency: 'EUR',
  payment_method: 'LOCAL',
  clearing_system: 'SEPA',
  entity_type: 'INDIVIDUAL',
};
const payeeAddress = {
  'address.country': 'DE',
  'address.city': 'Berlin',
  'address.street_address': 'Unter den Linden 1',
  'address.postal_code': '10117',
};

function freshIban(): string {
  const bban = `37040044${String(Math.floor(Math.random() * 1e10)).padStart(10, '0')}`;
  const n = BigInt(`${bban}131400`);
  return `DE${String(98n - (n % 97n)).padStart(2, '0')}${bban}`;
}

export interface Member {
  id: string;
  external: string;
  card?: string;
  payee?: string;
}

export interface Tenant {
  merchantId: string;
  host: string;
  token: string;
  signingKey: string;
  members: Member[];
  /** Hits this tenant's set-up made, per bucket. */
  hits: Record<Bucket, number>;
}

/** What a tenant needs for a figure. */
export type Kind = 'members' | 'deposits' | 'withdrawals' | 'exchange' | 'remittance' | 'card-topups' | 'reads';

async function tenant(server: BenchServer, kind: Kind, index: number): Promise<Tenant> {
  const {
    merchant: m,
    key,
    host,
    client,
  } = await benchMerchant(server, `bench ${kind} ${index}`, allScopes, {
    maxAttempts: 1,
  });
  const hits: Record<Bucket, number> = { deposits: 0, members_write: 0, orders: 0, reads: 0 };
  const call = async (
    bucket: Bucket,
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    onBehalfOf?: string,
  ): Promise<any> => {
    hits[bucket]++;
    const res = await client.requestRaw({ method, path, body, onBehalfOf });
    if (res.status >= 300) throw new SetupError(`${method} ${path}`, res.status, res.rawBody);
    return res.body;
  };
  try {
    const token = await client.getToken();
    const members: Member[] = [];
    if (kind !== 'members') {
      for (let i = 0; i < membersPerTenant; i++) {
        const external = `b${index}-${i}-${randomUUID().slice(0, 8)}`;
        const created = await call('members_write', 'POST', '/v1/members', { external_member_id: external });
        members.push({ id: created.id, external });
      }
    }
    const money = kind === 'withdrawals' || kind === 'exchange' || kind === 'remittance' || kind === 'card-topups';
    if (money) {
      for (const asset of ['USDT', 'EUR'])
        await adminCall(server, 'POST', `/admin/v1/merchants/${m.id}/prepaid-credits`, {
          environment: 'sandbox',
          asset,
          amount: '1000000',
        });
      for (const x of members) {
        await adminCall(server, 'POST', `/admin/v1/members/${x.id}/kyc-review`, { decision: 'approved', level: 2 });
        const asset = kind === 'remittance' ? 'EUR' : 'USDT';
        await call('deposits', 'POST', '/v1/deposits', {
          member_id: x.external,
          asset,
          amount: '100000',
          tx_hash: `0x${randomUUID()}`,
        });
      }
    }
    if (kind === 'remittance') {
      for (const x of members) {
        x.payee = (
          await call(
            'orders',
            'POST',
            '/v1/remit/payees',
            {
              ...sepa,
              fields: { first_name: 'Anna', last_name: 'Muller', 'bank_details.iban': freshIban(), ...payeeAddress },
            },
            x.external,
          )
        ).id;
      }
    }
    if (kind === 'card-topups') {
      const products = (await call('reads', 'GET', '/v1/cards/products')).data as { id: string; form_factor: string }[];
      const product = products.find((p) => p.form_factor === 'virtual');
      if (!product) throw new SetupError('GET /v1/cards/products', 200, 'no virtual card product');
      for (const x of members) {
        const application = await call(
          'orders',
          'POST',
          '/v1/cards/applications',
          { product_id: product.id, source_asset: 'USDT' },
          x.external,
        );
        x.card = (
          await call('orders', 'POST', `/v1/sandbox/cards/applications/${application.id}/advance`, { to: 'approved' })
        ).card_id;
      }
    }
    return { merchantId: m.id, host, token, signingKey: key.signing_key, members, hits };
  } finally {
    client.close();
  }
}

/** `count` tenants for a figure, made `setupConcurrency` at a time. */
export async function makeTenants(server: BenchServer, kind: Kind, count: number): Promise<Tenant[]> {
  const out: Tenant[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(setupConcurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await tenant(server, kind, i);
      }
    }),
  );
  return out;
}

/** One request of a figure: who sends it, where, with what. */
export interface Call {
  t: Tenant;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  onBehalfOf?: string;
}

/** The figures spread over tenants: bucket, what a request is, the target and what it is a ratio of. */
export interface SpreadSpec {
  id: string;
  name: string;
  kind: Kind;
  bucket: Bucket;
  /** The n-th request a tenant sends in this figure (n counts that tenant's requests). */
  call: (t: Tenant, n: number) => Call;
}

const member = (t: Tenant, n: number) => t.members[n % t.members.length]!;

export const writeSpecs: SpreadSpec[] = [
  {
    id: 'deposits-spread',
    name: 'signed POST /v1/deposits, spread over merchants',
    kind: 'deposits',
    bucket: 'deposits',
    call: (t, n) => ({
      t,
      method: 'POST',
      path: '/v1/deposits',
      body: { member_id: member(t, n).id, asset: 'USDT', amount: '1.5', tx_hash: `0x${randomUUID()}` },
    }),
  },
  {
    id: 'members',
    name: 'signed POST /v1/members, spread over merchants',
    kind: 'members',
    bucket: 'members_write',
    call: (t) => ({ t, method: 'POST', path: '/v1/members', body: { external_member_id: `s-${randomUUID()}` } }),
  },
  {
    id: 'withdrawals',
    name: 'signed POST /v1/withdrawals, spread over merchants',
    kind: 'withdrawals',
    bucket: 'orders',
    call: (t, n) => ({
      t,
      method: 'POST',
      path: '/v1/withdrawals',
      body: { asset: 'USDT', network: 'TRON', address: TRON, amount: '20' },
      onBehalfOf: member(t, n).external,
    }),
  },
  {
    id: 'exchange',
    name: 'signed POST /v1/exchange/orders (market), spread over merchants',
    kind: 'exchange',
    bucket: 'orders',
    call: (t, n) => ({
      t,
      method: 'POST',
      path: '/v1/exchange/orders',
      body: { from_asset: 'USDT', to_asset: 'EUR', from_amount: '10' },
      onBehalfOf: member(t, n).external,
    }),
  },
  {
    id: 'remittance',
    name: 'signed POST /v1/remittances, spread over merchants',
    kind: 'remittance',
    bucket: 'orders',
    call: (t, n) => {
      const x = member(t, n);
      return {
        t,
        method: 'POST',
        path: '/v1/remittances',
        body: { payee_id: x.payee, source_asset: 'EUR', source_amount: '10' },
        onBehalfOf: x.external,
      };
    },
  },
  {
    id: 'card-topups',
    name: 'signed POST /v1/cards/{id}/topups, spread over merchants',
    kind: 'card-topups',
    bucket: 'orders',
    call: (t, n) => {
      const x = member(t, n);
      return {
        t,
        method: 'POST',
        path: `/v1/cards/${x.card}/topups`,
        body: { amount: '10', source_asset: 'USDT' },
        onBehalfOf: x.external,
      };
    },
  },
];

export const readSpec: SpreadSpec = {
  id: 'read-deployment',
  name: 'authenticated GET /v1/balances, spread over merchants and members',
  kind: 'reads',
  bucket: 'reads',
  call: (t, n) => ({ t, method: 'GET', path: '/v1/balances', onBehalfOf: member(t, n).external }),
};

/** The tenants needed for `requests` requests of a figure in `bucket` (set-up hits as `kind` makes them). */
export function tenantsFor(spec: SpreadSpec, requests: number): { count: number; perTenant: number } {
  const setupHits: Record<Kind, Partial<Record<Bucket, number>>> = {
    members: {},
    deposits: { members_write: membersPerTenant },
    reads: { members_write: membersPerTenant },
    withdrawals: { members_write: membersPerTenant, deposits: membersPerTenant },
    exchange: { members_write: membersPerTenant, deposits: membersPerTenant },
    remittance: { members_write: membersPerTenant, deposits: membersPerTenant, orders: membersPerTenant },
    'card-topups': {
      members_write: membersPerTenant,
      deposits: membersPerTenant,
      orders: 2 * membersPerTenant,
      reads: 1,
    },
  };
  const perTenant = Math.floor(quotas[spec.bucket] * quotaShare) - (setupHits[spec.kind][spec.bucket] ?? 0) - 1;
  const count = Math.min(maxTenants, Math.max(minTenants, Math.ceil(requests / perTenant)));
  return { count, perTenant };
}

function headersOf(c: Call): Record<string, string> {
  if (c.method === 'GET') {
    return {
      host: c.t.host,
      authorization: `Bearer ${c.t.token}`,
      ...(c.onBehalfOf ? { 'x-on-behalf-of': c.onBehalfOf } : {}),
    };
  }
  const raw = JSON.stringify(c.body);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const nonce = randomUUID();
  return {
    host: c.t.host,
    authorization: `Bearer ${c.t.token}`,
    'content-type': 'application/json',
    'x-idempotency-key': randomUUID(),
    'x-timestamp': timestamp,
    'x-nonce': nonce,
    'x-signature': signRequest({
      method: 'POST',
      pathWithQuery: c.path,
      timestamp,
      nonce,
      rawBody: raw,
      signingKey: c.t.signingKey,
    }),
    ...(c.onBehalfOf ? { 'x-on-behalf-of': c.onBehalfOf } : {}),
  };
}

/**
 * The requests of a figure over its tenants, round robin, each tenant within `perTenant`
 * requests in all (probe, warm-up and measurement).
 */
export class Pool {
  private n = 0;
  private readonly used: number[];
  constructor(
    readonly spec: SpreadSpec,
    readonly tenants: Tenant[],
    readonly perTenant: number,
  ) {
    this.used = tenants.map(() => 0);
  }
  get sent(): number {
    return this.n;
  }
  get cap(): number {
    return this.tenants.length * this.perTenant;
  }
  get exhausted(): boolean {
    return this.n >= this.cap;
  }
  get maxPerTenant(): number {
    return Math.max(0, ...this.used);
  }
  next(): Call {
    const i = this.n++ % this.tenants.length;
    const t = this.tenants[i]!;
    return this.spec.call(t, this.used[i]!++);
  }
}

/** One request of the pool sent alone, its answer read whole: a set-up check before the load. */
export async function probe(server: BenchServer, pool: Pool): Promise<{ status: number; body: string }> {
  const c = pool.next();
  const raw = c.body === undefined ? undefined : JSON.stringify(c.body);
  const headers = headersOf(c);
  // fetch cannot set Host: node:http can.
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${server.publicUrl}${c.path}`, { method: c.method, headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(raw);
  });
}

export interface SpreadFigures {
  name: string;
  /** 2xx answers per second of the measured run. */
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** Answers by status (warm-up not included) and 429s over warm-up and measurement. */
  statuses: Record<string, number>;
  tooManyRequests: number;
  /** The first body of each non-2xx status seen (warm-up included). */
  samples: Record<string, string>;
  seconds: number;
  stoppedEarly: boolean;
  merchants: number;
  members: number;
  budgetPerMerchant: number;
  maxRequestsPerMerchant: number;
  valid: boolean;
}

interface Run {
  result: any;
  seconds: number;
  statuses: Record<string, number>;
  stoppedEarly: boolean;
}

/** autocannon over the pool for `duration` seconds, stopped early when the budgets are spent. */
function runPool(url: string, pool: Pool, duration: number, samples: Record<string, string>): Promise<Run> {
  const statuses: Record<string, number> = {};
  let stoppedEarly = false;
  let instance: any;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    instance = autocannon(
      {
        url,
        connections,
        duration,
        requests: [
          {
            setupRequest: (req: any) => {
              if (pool.exhausted && !stoppedEarly) {
                stoppedEarly = true;
                setImmediate(() => instance.stop());
              }
              const c = pool.next();
              req.method = c.method;
              req.path = c.path;
              req.headers = headersOf(c);
              if (c.body !== undefined) req.body = JSON.stringify(c.body);
              else req.body = Buffer.alloc(0);
              return req;
            },
            onResponse: (status: number, body: string) => {
              statuses[status] = (statuses[status] ?? 0) + 1;
              if ((status < 200 || status >= 300) && samples[status] === undefined)
                samples[status] = String(body).slice(0, 600);
            },
          },
        ],
      } as any,
      (err: unknown, result: any) => {
        if (err) reject(err);
        else resolve({ result, seconds: (performance.now() - started) / 1000, statuses, stoppedEarly });
      },
    );
  });
}

/** A figure over a pool: warm-up (same load, not counted; its 429s are), then the measurement. */
export async function loadPool(url: string, pool: Pool, duration: number): Promise<SpreadFigures> {
  const samples: Record<string, string> = {};
  let warm429 = 0;
  if (warmupSeconds > 0) warm429 = (await runPool(url, pool, warmupSeconds, samples)).statuses['429'] ?? 0;
  const run = await runPool(url, pool, duration, samples);
  const ok = Object.entries(run.statuses)
    .filter(([s]) => Number(s) >= 200 && Number(s) < 300)
    .reduce((a, [, n]) => a + n, 0);
  const tooMany = (run.statuses['429'] ?? 0) + warm429;
  const non2xx = Object.entries(run.statuses)
    .filter(([s]) => Number(s) < 200 || Number(s) >= 300)
    .reduce((a, [, n]) => a + n, 0);
  return {
    name: pool.spec.name,
    rps: Math.round(ok / run.seconds),
    p50: run.result.latency.p50,
    p99: run.result.latency.p99,
    errors: run.result.errors,
    non2xx,
    statuses: run.statuses,
    tooManyRequests: tooMany,
    samples,
    seconds: Math.round(run.seconds * 100) / 100,
    stoppedEarly: run.stoppedEarly,
    merchants: pool.tenants.length,
    members: pool.tenants.reduce((a, t) => a + t.members.length, 0),
    budgetPerMerchant: pool.perTenant,
    maxRequestsPerMerchant: pool.maxPerTenant,
    valid: tooMany === 0 && non2xx === 0 && run.result.errors === 0,
  };
}

/** Sets up the tenants of a write figure for `expectedRate`/s and probes one request. */
export async function preparePool(
  server: BenchServer,
  spec: SpreadSpec,
  expectedRate: number,
  seconds: number,
  rounds = 1,
): Promise<Pool> {
  const requests = Math.ceil(expectedRate * (warmupSeconds + seconds) * rounds * 1.1);
  const { count, perTenant } = tenantsFor(spec, requests);
  const started = performance.now();
  const tenants = await makeTenants(server, spec.kind, count);
  console.log(
    `    ${spec.id}: ${count} merchants × ${tenants[0]?.members.length ?? 0} members set up ` +
      `in ${((performance.now() - started) / 1000).toFixed(1)} s; budget ${perTenant} requests each ` +
      `(${quotas[spec.bucket]}/min ${spec.bucket} quota, unscaled), for up ` +
      `to ${Math.round((count * perTenant) / ((warmupSeconds + seconds) * rounds))}/s`,
  );
  const pool = new Pool(spec, tenants, perTenant);
  const p = await probe(server, pool);
  if (p.status >= 300) throw new SetupError(`probe ${spec.name}`, p.status, p.body);
  return pool;
}
