import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import type { RunningService } from '../src/server.js';
import type { ServiceContext } from '../src/service-context.js';
import { enqueue } from '../src/jobs/queries.js';
import { JobRunner } from '../src/jobs/runner.js';
import { RetryLater } from '../src/jobs/types.js';
import { createWorkers } from '../src/jobs/workers.js';
import { loggerOptions } from '../src/platform/telemetry/request-log.js';
import { rawRequest } from './support/raw-http.js';
import { useTestService } from './support/service.js';

interface LogLine {
  level: number;
  msg: string;
  job?: string;
  job_id?: string;
  attempt?: number;
  attempts_max?: number;
  step?: string;
  err?: { type: string; message: string; stack: string };
}

const levelError = 50;

describe('background failures', () => {
  let service: RunningService;
  const lines: LogLine[] = [];
  // The service's own logger (Fastify's pino with the listeners' options), writing into `lines`.
  const log = Fastify({
    logger: { ...loggerOptions('debug'), stream: { write: (line: string) => void lines.push(JSON.parse(line)) } },
  }).log;

  useTestService({ log, merchant: false }, (s) => ({ service } = s));

  /** The value of one sample of the operator listener's /metrics, 0 when absent. */
  async function sample(name: string, labels: string): Promise<number> {
    const res = await rawRequest(`${service.adminUrl}/metrics`);
    assert.equal(res.status, 200);
    const line = res.text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  }

  const linesOf = (job: string) => lines.filter((l) => l.job === job && l.level === levelError);

  it('a job whose handler throws is logged with its job, id, attempt and error, and counted in /metrics', async () => {
    const before = await sample('background_failures_total', 'job="test.explodes"');
    const runner = new JobRunner(
      service.ctx,
      {
        'test.explodes': async () => {
          throw new Error('handler exploded');
        },
      },
      { backoffBaseMs: 1, backoffMaxMs: 2 },
    );
    await enqueue(service.ctx.db, { kind: 'test.explodes', maxAttempts: 2 });
    const row = await service.ctx.db
      .selectFrom('jobs')
      .select('id')
      .where('kind', '=', 'test.explodes')
      .executeTakeFirstOrThrow();
    for (let i = 0; i < 50 && linesOf('test.explodes').length < 2; i++) {
      await runner.drain();
      await new Promise((r) => setTimeout(r, 10));
    }
    await runner.stop();

    const logged = linesOf('test.explodes');
    assert.deepEqual(
      logged.map((l) => l.attempt),
      [1, 2],
    );
    for (const l of logged) {
      assert.equal(l.job_id, String(row.id));
      assert.equal(l.attempts_max, 2);
      assert.equal(l.err?.message, 'handler exploded');
      assert.match(l.err?.stack ?? '', /handler exploded\n\s+at /, 'the stack goes to the log');
    }
    assert.match(logged[1]!.msg, /last attempt.*dead/);
    assert.equal(await sample('background_failures_total', 'job="test.explodes"'), before + 2);
    assert.equal(await sample('background_job_runs_total', 'job="test.explodes",outcome="error"'), 1);
    assert.equal(await sample('background_job_runs_total', 'job="test.explodes",outcome="dead"'), 1);
    const metrics = await rawRequest(`${service.adminUrl}/metrics`);
    assert.ok(!metrics.text.includes('handler exploded'), 'the error text stays in the log');
    const alerts = await fetch(`${service.adminUrl}/admin/v1/alerts?kind=job.dead`, {
      headers: { authorization: `Bearer ${service.adminToken}` },
    });
    const dead = (
      (await alerts.json()) as { data: { kind: string; object: string; object_id: string; message: string }[] }
    ).data;
    assert.deepEqual(
      dead.map((a) => [a.kind, a.object, a.object_id]),
      [['job.dead', 'job', String(row.id)]],
      'the operator is alerted once, when the job is parked',
    );
    assert.match(dead[0]!.message, /test\.explodes failed 2 times.*handler exploded/);
    // The operator resolves it: gone from the open list, listed as resolved.
    const adminHeaders = { authorization: `Bearer ${service.adminToken}` };
    const resolved = await fetch(`${service.adminUrl}/admin/v1/alerts/${(dead[0] as { id?: string }).id}/resolve`, {
      method: 'POST',
      headers: adminHeaders,
    });
    assert.equal(resolved.status, 200);
    assert.deepEqual(await resolved.json(), { id: (dead[0] as { id?: string }).id, resolved: true });
    const open = await fetch(`${service.adminUrl}/admin/v1/alerts?kind=job.dead`, { headers: adminHeaders });
    assert.deepEqual(((await open.json()) as { data: unknown[] }).data, []);
    const unknown = await fetch(`${service.adminUrl}/admin/v1/alerts/alr_unknown/resolve`, {
      method: 'POST',
      headers: adminHeaders,
    });
    assert.equal(((await unknown.json()) as { code: string }).code, 'not_found');
    await service.ctx.db.deleteFrom('jobs').where('kind', '=', 'test.explodes').execute();
  });

  it('a job is parked as dead only together with its operator alert (one transaction)', async () => {
    // The alert cannot be written: the job must not be parked without it; it stays claimed and
    // runs again when its lease ends, when the alert is raised with the parking.
    const ctx: ServiceContext = {
      ...service.ctx,
      alertOperator: async () => {
        throw new Error('alert store down');
      },
    };
    const runner = new JobRunner(
      ctx,
      {
        'test.unalerted': async () => {
          throw new Error('always fails');
        },
      },
      { backoffBaseMs: 1, backoffMaxMs: 2 },
    );
    await enqueue(service.ctx.db, { kind: 'test.unalerted', maxAttempts: 1 });
    for (let i = 0; i < 50 && !lines.some((l) => l.step === 'record' && l.job === 'test.unalerted'); i++) {
      await runner.drain();
      await new Promise((r) => setTimeout(r, 10));
    }
    await runner.stop();
    const row = await service.ctx.db
      .selectFrom('jobs')
      .select(['status', 'attempts'])
      .where('kind', '=', 'test.unalerted')
      .executeTakeFirstOrThrow();
    assert.notEqual(row.status, 'dead', 'not parked without its alert');
    assert.equal(row.attempts, 1);
    assert.equal(await sample('background_job_runs_total', 'job="test.unalerted",outcome="dead"'), 0);
    await service.ctx.db.deleteFrom('jobs').where('kind', '=', 'test.unalerted').execute();
  });

  it('a deferral (RetryLater) is not a failure', async () => {
    let runs = 0;
    const runner = new JobRunner(service.ctx, {
      'test.defers': async () => {
        if (++runs === 1) throw new RetryLater(0, 'not yet');
      },
    });
    await enqueue(service.ctx.db, { kind: 'test.defers' });
    for (let i = 0; i < 50 && runs < 2; i++) {
      await runner.drain();
      await new Promise((r) => setTimeout(r, 10));
    }
    await runner.stop();
    assert.equal(runs, 2);
    assert.equal(linesOf('test.defers').length, 0);
    assert.equal(await sample('background_failures_total', 'job="test.defers"'), 0);
    assert.equal(await sample('background_job_runs_total', 'job="test.defers",outcome="later"'), 1);
    assert.ok(lines.some((l) => l.job === 'test.defers' && l.msg === 'background job deferred' && l.attempt === 1));
  });

  it('a ticker that throws is logged with its name, its failed runs in a row and the error, and counted', async () => {
    const workers = createWorkers(service.ctx, false, {
      handlers: {},
      tickers: [
        {
          name: 'test.ticker',
          intervalMs: 60_000,
          run: async () => {
            throw new TypeError('ticker exploded');
          },
        },
      ],
    });
    await workers.tick();
    await workers.tick();
    await workers.stop();
    const logged = linesOf('test.ticker');
    assert.deepEqual(
      logged.map((l) => l.attempt),
      [1, 2],
    );
    assert.equal(logged[0]!.err?.type, 'TypeError');
    assert.equal(logged[0]!.err?.message, 'ticker exploded');
    assert.equal(await sample('background_failures_total', 'job="test.ticker"'), 2);
    assert.equal(await sample('background_job_runs_total', 'job="test.ticker",outcome="error"'), 2);
  });

  it("the runner's own database failure (claiming jobs) is logged and counted, not swallowed", async () => {
    const before = await sample('background_failures_total', 'job="jobs.claim"');
    const unreachable = {
      getExecutor: () => {
        throw new Error('database unreachable');
      },
    } as unknown as ServiceContext['db'];
    const runner = new JobRunner({ ...service.ctx, db: unreachable }, { 'test.never': async () => {} });
    await runner.poll();
    await runner.stop();
    const logged = linesOf('jobs.claim');
    assert.equal(logged.length, 1);
    assert.equal(logged[0]!.err?.message, 'database unreachable');
    assert.equal(await sample('background_failures_total', 'job="jobs.claim"'), before + 1);
  });
});
