/**
 * The load of the failover and process-kill checks (scripts/failover/*.ts): signed, idempotent
 * deposits, withdrawals and withdrawal confirmations through the real HTTP API, each retried with
 * the same idempotency key (and body) until it has a final answer, as a merchant's client does
 * after a 5xx, a lost connection or `idempotency_in_progress`. A model is built from the answers
 * alone; `verify` then reads every acknowledged write back through the API and compares.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { signRequest } from '@merchant-wallet/sdk';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface Answer {
  status: number;
  body: any;
  /** When the request was sent and answered (ms, performance.now()). */
  sentAt: number;
  answeredAt: number;
  /** A failure to get any answer (connection refused or reset, client timeout). */
  error?: string;
}

/** A request that gets no answer within this long counts as hung (and fails the check). */
export const requestBoundMs = 15_000;

/** A write still failing after this long is given up (and reported as refused): the script never hangs. */
const writeRetryBoundMs = 60_000;

export function call(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  const target = new URL(base);
  const sentAt = performance.now();
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: target.port,
        path,
        method,
        headers: { host: target.host, ...headers },
        timeout: requestBoundMs + 5_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, sentAt, answeredAt: performance.now() });
        });
        res.on('error', (err) =>
          resolve({ status: 0, body: undefined, sentAt, answeredAt: performance.now(), error: err.message }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve({ status: 0, body: undefined, sentAt, answeredAt: performance.now(), error: err.code ?? err.message }),
    );
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export interface ServiceProcess {
  child: ChildProcess;
  publicUrl: string;
  adminUrl: string;
  output: () => string;
  exited: Promise<unknown>;
}

/** The service as `npm start` runs it, from the sources (tsx): its own process, its own environment. */
export async function spawnService(env: Record<string, string>): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    // Quotas raised: the load measures failover, not the limiter.
    env: { ...process.env, PORT: '0', ADMIN_PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT_SCALE: '1000', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = once(child, 'exit');
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const m = /Merchant Wallet API on (\S+) \(operator API on (\S+)\)/.exec(out);
    // The Host header chooses the environment (sandbox); every connection goes to 127.0.0.1 (`call`).
    if (m)
      return {
        child,
        publicUrl: `http://api-sandbox.localhost:${new URL(m[1]!).port}`,
        adminUrl: m[2]!.replace(/\/$/, ''),
        output: () => out,
        exited,
      };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`service did not start:\n${out}`);
}

/** A webhook receiver on 127.0.0.1 that notes each event it is sent (answers 200, after `delayMs`). */
export async function startReceiver(
  delayMs = 0,
): Promise<{ url: string; events: Map<string, number>; setDelay(ms: number): void; close(): Promise<void> }> {
  const events = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const e = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event_type: string; data: { id: string } };
        const key = `${e.event_type} ${e.data.id}`;
        events.set(key, (events.get(key) ?? 0) + 1);
      } catch {
        // not an event
      }
      setTimeout(() => res.end('ok'), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    events,
    setDelay: (ms: number) => {
      delayMs = ms;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Decimal string → units of 10^-18 (the model's arithmetic; never a JS number). */
export function units(s: string): bigint {
  const [whole, frac = ''] = s.split('.');
  return BigInt(whole!) * 10n ** 18n + BigInt((frac + '0'.repeat(18)).slice(0, 18));
}

const tron = 'TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW';

interface Credentials {
  merchantId: string;
  clientId: string;
  apiKey: string;
  signingKey: string;
}

interface Member {
  external: string;
  available: bigint;
  withdrawing: bigint;
  /** Withdrawals acknowledged and still locked (confirm candidates). */
  locked: string[];
}

export interface Figures {
  attempts: number;
  acknowledged: { deposits: number; withdrawals: number; confirmations: number };
  /** Answers by status during the whole run (0: no answer: refused, reset or timed out). */
  statuses: Record<string, number>;
  /** Final answers that are no success (a failure of the check unless expected). */
  refused: string[];
  slowestMs: number;
}

/** Merchant, key, members and a webhook endpoint through the APIs, then the load on demand. */
export class Load {
  private creds!: Credentials;
  private readonly tokens = new Map<string, string>();
  readonly members: Member[] = [];
  readonly deposits = new Map<string, { amount: bigint; member: string }>();
  readonly withdrawals = new Map<string, { debit: bigint; member: string; status: 'locked' | 'settled' }>();
  readonly expectedEvents = new Set<string>();
  readonly figures: Figures = {
    attempts: 0,
    acknowledged: { deposits: 0, withdrawals: 0, confirmations: 0 },
    statuses: {},
    refused: [],
    slowestMs: 0,
  };
  /** Every write answered 2xx: when it was sent and answered (for the time to recover). */
  readonly successes: Array<{ sentAt: number; answeredAt: number }> = [];
  /** Every attempt's answer (status 0: none), for the figures of an outage. */
  readonly answers: Array<{ sentAt: number; answeredAt: number; status: number }> = [];
  private stopping = false;

  /** `services`: the processes requests go to, in turn (one, or several behind an imagined balancer). */
  constructor(
    private services: () => ServiceProcess[],
    private readonly adminToken: string,
  ) {}

  private service(i: number): ServiceProcess {
    const all = this.services();
    return all[i % all.length]!;
  }

  async admin(method: string, path: string, body: unknown): Promise<any> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const res = await call(
        this.service(attempt).adminUrl,
        method,
        path,
        { 'content-type': 'application/json', authorization: `Bearer ${this.adminToken}` },
        JSON.stringify(body),
      );
      if (res.status >= 200 && res.status < 300) return res.body;
      if (res.status > 0 && res.status < 500)
        throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`${method} ${path}: no answer`);
  }

  async setUp(memberCount: number, webhookUrl: string): Promise<void> {
    const merchant = await this.admin('POST', '/admin/v1/merchants', { name: `failover ${new Date().toISOString()}` });
    const key = await this.admin('POST', `/admin/v1/merchants/${merchant.id}/api-keys`, {
      environment: 'sandbox',
      scopes: [
        'members:write',
        'deposits:write',
        'withdrawals:write',
        'balances:read',
        'webhooks:write',
        'merchant:read',
      ],
    });
    this.creds = { merchantId: merchant.id, clientId: key.client_id, apiKey: key.api_key, signingKey: key.signing_key };
    const endpoint = await this.write(0, 'POST', '/v1/webhooks/endpoints', {
      url: webhookUrl,
      event_types: ['deposit.credited', 'withdrawal.locked', 'withdrawal.settled'],
    });
    if (endpoint.status !== 201)
      throw new Error(`webhook endpoint: ${endpoint.status} ${JSON.stringify(endpoint.body)}`);
    for (let i = 0; i < memberCount; i++) {
      const external = `fo-${i}-${randomUUID().slice(0, 8)}`;
      const res = await this.write(i, 'POST', '/v1/members', { external_member_id: external });
      if (res.status !== 201) throw new Error(`member: ${res.status} ${JSON.stringify(res.body)}`);
      this.members.push({ external, available: 0n, withdrawing: 0n, locked: [] });
    }
  }

  private async token(base: string): Promise<string | undefined> {
    const cached = this.tokens.get(base);
    if (cached) return cached;
    const res = await call(base, 'POST', '/v1/connect/token', {
      'x-client-id': this.creds.clientId,
      'x-api-key': this.creds.apiKey,
    });
    if (res.status !== 200) return undefined;
    this.tokens.set(base, res.body.auth_token);
    return res.body.auth_token;
  }

  /** One signed write, retried with the same key and body until it has a final answer. */
  async write(n: number, method: string, path: string, payload: unknown, member?: string): Promise<Answer> {
    const key = randomUUID();
    const body = JSON.stringify(payload);
    const giveUpAt = performance.now() + writeRetryBoundMs;
    for (let attempt = 0; ; attempt++) {
      const base = this.service(n + attempt).publicUrl;
      const token = await this.token(base);
      let res: Answer;
      if (!token) {
        res = {
          status: 0,
          body: undefined,
          sentAt: performance.now(),
          answeredAt: performance.now(),
          error: 'no token',
        };
      } else {
        const timestamp = String(Math.floor(Date.now() / 1000));
        const nonce = randomUUID();
        this.figures.attempts++;
        res = await call(
          base,
          method,
          path,
          {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'x-idempotency-key': key,
            'x-timestamp': timestamp,
            'x-nonce': nonce,
            'x-signature': signRequest({
              method,
              pathWithQuery: path,
              timestamp,
              nonce,
              rawBody: body,
              signingKey: this.creds.signingKey,
            }),
            ...(member ? { 'x-on-behalf-of': member } : {}),
          },
          body,
        );
        this.figures.statuses[res.status] = (this.figures.statuses[res.status] ?? 0) + 1;
        this.answers.push({ sentAt: res.sentAt, answeredAt: res.answeredAt, status: res.status });
        this.figures.slowestMs = Math.max(this.figures.slowestMs, res.answeredAt - res.sentAt);
      }
      if (res.status === 401 && res.body?.code === 'invalid_token') {
        this.tokens.delete(base);
        continue;
      }
      const retry =
        res.status === 0 || res.status >= 500 || (res.status === 409 && res.body?.code === 'idempotency_in_progress');
      if (!retry || performance.now() > giveUpAt) {
        if (res.status >= 200 && res.status < 300)
          this.successes.push({ sentAt: res.sentAt, answeredAt: res.answeredAt });
        return res;
      }
      await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** Math.min(attempt, 4), 500)));
    }
  }

  async get(n: number, path: string, member?: string): Promise<Answer> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const base = this.service(n + attempt).publicUrl;
      const token = await this.token(base);
      if (token) {
        const res = await call(base, 'GET', path, {
          authorization: `Bearer ${token}`,
          ...(member ? { 'x-on-behalf-of': member } : {}),
        });
        if (res.status === 401) this.tokens.delete(base);
        else if (res.status > 0 && res.status < 500) return res;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`GET ${path}: no answer`);
  }

  private refused(what: string, res: Answer): void {
    this.figures.refused.push(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  }

  /** One member's writes, one after another (so its model is exact), until `stop`. */
  private async memberLoop(n: number): Promise<void> {
    const m = this.members[n]!;
    let i = 0;
    while (!this.stopping) {
      i++;
      if (m.locked.length > 0 && i % 3 === 0) {
        const id = m.locked.shift()!;
        const res = await this.write(n, 'POST', `/v1/withdrawals/${id}/confirm`, {});
        if (res.status !== 200) {
          this.refused(`confirm ${id}`, res);
          continue;
        }
        const w = this.withdrawals.get(id)!;
        w.status = 'settled';
        m.withdrawing -= w.debit;
        this.figures.acknowledged.confirmations++;
        this.expectedEvents.add(`withdrawal.settled ${id}`);
      } else if (m.available >= units('40') && i % 3 === 1) {
        const amount = String(1 + (i % 9));
        const res = await this.write(
          n,
          'POST',
          '/v1/withdrawals',
          { asset: 'USDT', network: 'TRON', address: tron, amount },
          m.external,
        );
        if (res.status !== 201) {
          this.refused(`withdrawal ${amount}`, res);
          continue;
        }
        if (units(res.body.amount) !== units(amount)) this.refused('withdrawal amount', res);
        const debit = units(res.body.amount) + units(res.body.fee);
        m.available -= debit;
        m.withdrawing += debit;
        m.locked.push(res.body.id);
        this.withdrawals.set(res.body.id, { debit, member: m.external, status: 'locked' });
        this.figures.acknowledged.withdrawals++;
        this.expectedEvents.add(`withdrawal.locked ${res.body.id}`);
      } else {
        const amount = `${10 + (i % 90)}.${String(i % 100).padStart(2, '0')}`;
        const res = await this.write(n, 'POST', '/v1/deposits', {
          member_id: m.external,
          asset: 'USDT',
          amount,
          tx_hash: `0x${randomUUID().replace(/-/g, '')}${randomUUID().replace(/-/g, '')}`,
        });
        if (res.status !== 201) {
          this.refused(`deposit ${amount}`, res);
          continue;
        }
        if (units(res.body.amount) !== units(amount)) this.refused('deposit amount', res);
        m.available += units(amount);
        this.deposits.set(res.body.id, { amount: units(amount), member: m.external });
        this.figures.acknowledged.deposits++;
        this.expectedEvents.add(`deposit.credited ${res.body.id}`);
      }
    }
  }

  private loops: Promise<void>[] = [];

  start(): void {
    this.stopping = false;
    this.loops = this.members.map((_, n) => this.memberLoop(n));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
  }

  /** Every acknowledged write read back through the API; the balances against the model. */
  async verify(): Promise<{ lost: number; doubled: number; balanceMismatches: number; problems: string[] }> {
    const problems: string[] = [];
    let lost = 0;
    let doubled = 0;
    let balanceMismatches = 0;
    const all = async (path: string) => {
      const ids: Array<{ id: string; amount: string; status?: string; fee?: string }> = [];
      let cursor: string | null = null;
      do {
        const res = await this.get(0, `${path}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
        ids.push(...res.body.data);
        cursor = res.body.has_more ? res.body.next_cursor : null;
      } while (cursor);
      return ids;
    };
    const stored = await all('/v1/deposits');
    const storedIds = new Set(stored.map((d) => d.id));
    for (const [id, d] of this.deposits) {
      const res = await this.get(0, `/v1/deposits/${id}`);
      if (res.status !== 200 || units(res.body.amount) !== d.amount) {
        lost++;
        problems.push(`deposit ${id} acknowledged, read back ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
    for (const d of stored) {
      if (!this.deposits.has(d.id)) {
        doubled++;
        problems.push(`deposit ${d.id} stored but never acknowledged (a retry wrote it again?)`);
      }
    }
    if (storedIds.size !== stored.length) problems.push('a deposit listed twice');
    const storedW = await all('/v1/withdrawals');
    for (const [id, w] of this.withdrawals) {
      const res = await this.get(0, `/v1/withdrawals/${id}`);
      if (res.status !== 200 || res.body.status !== w.status) {
        lost++;
        problems.push(
          `withdrawal ${id} acknowledged as ${w.status}, read back ${res.status} ${JSON.stringify(res.body)}`,
        );
      }
    }
    for (const w of storedW) {
      if (!this.withdrawals.has(w.id)) {
        doubled++;
        problems.push(`withdrawal ${w.id} stored but never acknowledged`);
      }
    }
    for (const m of this.members) {
      const res = await this.get(0, '/v1/balances', m.external);
      const usdt = (res.body.data as Array<{ asset: string; available: string; withdrawing: string }>).find(
        (b) => b.asset === 'USDT',
      );
      const available = usdt ? units(usdt.available) : 0n;
      const withdrawing = usdt ? units(usdt.withdrawing) : 0n;
      if (available !== m.available || withdrawing !== m.withdrawing) {
        balanceMismatches++;
        problems.push(
          `member ${m.external}: available ${usdt?.available}, withdrawing ${usdt?.withdrawing}; the answers ` +
            `say ${m.available}, ${m.withdrawing} (10^-18)`,
        );
      }
    }
    return { lost, doubled, balanceMismatches, problems };
  }
}
