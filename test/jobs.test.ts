import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningService } from '../src/server.js';
import { enqueue, enqueueMany } from '../src/jobs/queries.js';
import { JobRunner, backoffMs } from '../src/jobs/runner.js';
import { RetryLater } from '../src/jobs/types.js';
import { jobHandlers } from '../src/background.js';
import { useTestService } from './support/service.js';

describe('background jobs', () => {
  let service: RunningService;
  const seen: string[] = [];
  useTestService({ merchant: false }, (s) => ({ service } = s));
  before(async () => {
    jobHandlers['test.record'] = async (job) => {
      seen.push(String(job.payload.tag));
    };
    jobHandlers['test.slow'] = async (job) => {
      await new Promise((r) => setTimeout(r, 300));
      seen.push(String(job.payload.tag));
    };
    jobHandlers['test.flaky'] = async (job) => {
      if (job.attempts < 3) throw new Error(`attempt ${job.attempts} failed`);
      seen.push(`flaky-ok-${job.attempts}`);
    };
    jobHandlers['test.broken'] = async () => {
      throw new Error('always broken');
    };
    jobHandlers['test.long'] = async (job) => {
      seen.push(`long-start-${String(job.payload.tag)}`);
      await new Promise((r) => setTimeout(r, 2_500));
      seen.push(`long-end-${String(job.payload.tag)}`);
    };
    jobHandlers['test.later'] = async (job) => {
      if (job.attempts === 1) throw new RetryLater(0);
      seen.push('later-done');
    };
  });
  after(async () => {
    for (const k of Object.keys(jobHandlers)) if (k.startsWith('test.')) delete jobHandlers[k];
  });

  const jobRows = () => service.ctx.db.selectFrom('jobs').selectAll().where('kind', 'like', 'test.%').execute();

  it('runs the jobs of a kind with a batch handler together: done ones completed, a failed one retried', async () => {
    const runs: string[][] = [];
    jobHandlers['test.batch'] = {
      async many(jobs) {
        runs.push(jobs.map((j) => `${String(j.payload.tag)}#${j.attempts}`));
        return jobs.map((j) => (j.payload.tag === 'b2' && j.attempts === 1 ? new Error('b2 failed once') : undefined));
      },
    };
    const runner = new JobRunner(service.ctx, jobHandlers, { backoffBaseMs: 1, backoffMaxMs: 2 });
    // One statement: no poll can take some of them before the others are there.
    await enqueueMany(
      service.ctx.db,
      ['b1', 'b2', 'b3'].map((tag) => ({ kind: 'test.batch', payload: { tag } })),
    );
    for (let i = 0; i < 20 && (await jobRows()).some((r) => r.kind === 'test.batch'); i++) {
      await runner.drain();
      await new Promise((r) => setTimeout(r, 10));
    }
    await runner.stop();
    assert.deepEqual(runs[0]!.sort(), ['b1#1', 'b2#1', 'b3#1'], 'one run for the three');
    assert.deepEqual(runs.slice(1).flat(), ['b2#2'], 'only the failed one again');
    assert.equal((await jobRows()).filter((r) => r.kind === 'test.batch').length, 0);
  });

  it('runs a job once and removes it', async () => {
    await enqueue(service.ctx.db, { kind: 'test.record', payload: { tag: 'one' } });
    await service.workers.jobs.drain();
    assert.deepEqual(
      seen.filter((s) => s === 'one'),
      ['one'],
    );
    assert.equal((await jobRows()).length, 0);
  });

  it('keeps one live job per dedupe key', async () => {
    await enqueue(service.ctx.db, { kind: 'test.record', payload: { tag: 'dedupe' }, dedupeKey: 'k1' });
    await enqueue(service.ctx.db, { kind: 'test.record', payload: { tag: 'dedupe' }, dedupeKey: 'k1' });
    await service.workers.jobs.drain();
    assert.equal(seen.filter((s) => s === 'dedupe').length, 1);
  });

  it('retries a failing job with backoff and parks it as dead after its attempts', async () => {
    const runner = new JobRunner(service.ctx, jobHandlers, { backoffBaseMs: 1, backoffMaxMs: 5 });
    await enqueue(service.ctx.db, { kind: 'test.flaky', maxAttempts: 5 });
    await enqueue(service.ctx.db, { kind: 'test.broken', maxAttempts: 3 });
    for (let i = 0; i < 20; i++) {
      await runner.drain();
      const rows = await jobRows();
      if (rows.length === 1 && rows[0]!.status === 'dead') break;
      await new Promise((r) => setTimeout(r, 10));
    }
    await runner.stop();
    assert.ok(seen.includes('flaky-ok-3'));
    const rows = await jobRows();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.kind, 'test.broken');
    assert.equal(rows[0]!.status, 'dead');
    assert.equal(rows[0]!.attempts, 3);
    assert.match(rows[0]!.last_error ?? '', /always broken/);
    await service.ctx.db.deleteFrom('jobs').where('kind', '=', 'test.broken').execute();
  });

  it('lets a handler ask for a later attempt', async () => {
    await enqueue(service.ctx.db, { kind: 'test.later' });
    await service.workers.jobs.drain();
    await new Promise((r) => setTimeout(r, 10));
    await service.workers.jobs.drain();
    assert.ok(seen.includes('later-done'));
  });

  it('never runs one job in two runners', async () => {
    const runners = [0, 1, 2].map(() => new JobRunner(service.ctx, jobHandlers, { concurrencyMax: 4 }));
    for (let i = 0; i < 30; i++) await enqueue(service.ctx.db, { kind: 'test.record', payload: { tag: `par-${i}` } });
    await Promise.all(runners.map((r) => r.drain()));
    await Promise.all(runners.map((r) => r.stop()));
    for (let i = 0; i < 30; i++) assert.equal(seen.filter((s) => s === `par-${i}`).length, 1, `par-${i}`);
  });

  it('keeps the lease of a job that runs longer than it: another process never runs it too', async () => {
    // Two processes with 1-second leases; the job runs for 2.5 s in the first.
    const first = new JobRunner(service.ctx, jobHandlers, { leaseSeconds: 1 });
    const second = new JobRunner(service.ctx, jobHandlers, { leaseSeconds: 1 });
    await enqueue(service.ctx.db, { kind: 'test.long', payload: { tag: 'lease' } });
    await first.poll();
    assert.deepEqual(
      seen.filter((s) => s === 'long-start-lease'),
      ['long-start-lease'],
    );
    for (let i = 0; i < 8; i++) {
      await new Promise((r) => setTimeout(r, 250));
      await second.poll();
    }
    await Promise.all([first.drain(), second.drain()]);
    await Promise.all([first.stop(), second.stop()]);
    assert.equal(seen.filter((s) => s === 'long-start-lease').length, 1, 'the job ran in one process only');
    assert.equal(seen.filter((s) => s === 'long-end-lease').length, 1);
    assert.equal((await jobRows()).length, 0);
  });

  it('finishes a running job on stop and claims nothing after', async () => {
    const runner = new JobRunner(service.ctx, jobHandlers, {});
    await enqueue(service.ctx.db, { kind: 'test.slow', payload: { tag: 'slow' } });
    await runner.poll();
    await runner.stop();
    assert.ok(seen.includes('slow'), 'the running job completed before stop returned');
    await enqueue(service.ctx.db, { kind: 'test.record', payload: { tag: 'after-stop' } });
    await runner.poll();
    assert.ok(!seen.includes('after-stop'));
    await service.workers.jobs.drain();
  });

  it('backs off exponentially within bounds', () => {
    // [attempt, the jitter's random draw, the delay]: base 1 s, at most 60 s.
    const cases: Array<[number, number, number]> = [
      [1, 1, 1000],
      [4, 1, 8000],
      [30, 1, 60_000],
      [4, 0, 4000],
    ];
    for (const [attempt, draw, delay] of cases)
      assert.equal(
        backoffMs(attempt, 1000, 60_000, () => draw),
        delay,
        `attempt ${attempt}, draw ${draw}`,
      );
  });
});
