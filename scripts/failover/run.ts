/**
 * `npm run test:failover`: the service against a primary that dies and a synchronous standby that
 * is promoted, then against that server restarting in place (docs/scaling.md "Failover").
 *
 * Makes the two clusters (clusters.ts), starts the service with the multi-host URL
 * `postgres://…:p1,…:p2/mwa?target_session_attrs=read-write`, runs signed idempotent deposits,
 * withdrawals and confirmations through it with webhook deliveries to a local receiver (load.ts),
 * stops the primary with `pg_ctl stop -m immediate`, promotes the standby, and later stops and
 * starts the promoted server the same way. Checks: every request answered within a bound (no
 * hang), `/readyz` 503 while no primary answers, the service back by itself within 10 s (a write,
 * `/readyz`, the notification connection, the job lanes: every event delivered), every
 * acknowledged write read back once (lost 0, doubled 0), the balances as the answers say, and the
 * ledger check. Prints the figures; exits 1 when a check fails.
 */
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makePair, type Cluster } from './clusters.js';
import { call, Load, requestBoundMs, spawnService, startReceiver, type ServiceProcess } from './load.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const recoverWithinS = 10;
const members = Number(process.env.FAILOVER_MEMBERS ?? 6);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number) => Math.round(ms) / 1000;

const failures: string[] = [];
const check = (ok: boolean, what: string) => {
  if (!ok) failures.push(what);
  console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
};

/** /readyz every 50 ms: when it last answered 200 before `from`, and first after. */
class ReadyWatch {
  samples: Array<{ at: number; status: number }> = [];
  private stopped = false;
  private loop: Promise<void>;

  constructor(private readonly service: ServiceProcess) {
    this.loop = (async () => {
      while (!this.stopped) {
        const res = await call(this.service.publicUrl, 'GET', '/readyz', {});
        this.samples.push({ at: res.answeredAt, status: res.status });
        await sleep(50);
      }
    })();
  }

  firstReadyAfter(t: number): number | undefined {
    return this.samples.find((s) => s.at > t && s.status === 200)?.at;
  }

  notReadyBetween(from: number, to: number): boolean {
    const inside = this.samples.filter((s) => s.at > from + 200 && s.at < to);
    return inside.length > 0 && inside.every((s) => s.status === 503);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}

/** Waits until the server shows the service's notification connection (LISTEN) again: ms after `from`, or undefined. */
async function listenerBack(
  server: Cluster,
  expected: number,
  from: number,
  boundMs: number,
): Promise<number | undefined> {
  while (performance.now() - from < boundMs) {
    try {
      const rows = await server.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = 'mwa' AND query LIKE 'LISTEN %'",
      );
      if (rows[0]!.n >= expected) return performance.now() - from;
    } catch {
      // not up yet
    }
    await sleep(100);
  }
  return undefined;
}

/**
 * Says where each missing event stands (queued for fan-out, its delivery records' state), so that a failure of
 * the delivery check explains itself in CI's output.
 */
async function describeMissing(server: Cluster, missing: readonly string[]): Promise<void> {
  try {
    const keys = missing.slice(0, 20);
    const rows = await server.query<Record<string, unknown>>(
      `SELECT e.type, e.object_id, e.created_at, q.event_seq IS NOT NULL AS queued,
         (SELECT json_agg(json_build_object('status', d.status, 'attempts', d.attempts,
            'next_attempt_at', d.next_attempt_at, 'lease_until', d.lease_until))
          FROM webhook_deliveries d WHERE d.event_id = e.id) AS deliveries
       FROM events e LEFT JOIN webhook_fan_out_queue q ON q.event_seq = e.seq
       WHERE e.type || ' ' || e.object_id = ANY($1::text[])`,
      [keys],
    );
    console.log(
      `    missing events (${missing.length}; first ${keys.length}) as stored at ${new Date().toISOString()}:`,
    );
    for (const r of rows) console.log(`    ${JSON.stringify(r)}`);
  } catch (err) {
    console.log(`    the missing events could not be read: ${(err as Error).message}`);
  }
}

interface Outage {
  name: string;
  downAt: number;
  /** When the promotion (or start) was asked for: until then no server takes writes. */
  bringingUpAt: number;
  /** When it was done (pg_ctl returned). */
  upAt: number;
}

function report(load: Load, watch: ReadyWatch, outage: Outage, listenerMs: number | undefined) {
  const firstWrite = load.successes
    .filter((s) => s.sentAt >= outage.upAt)
    .sort((a, b) => a.answeredAt - b.answeredAt)[0];
  const writeS = firstWrite ? seconds(firstWrite.answeredAt - outage.upAt) : undefined;
  const ready = watch.firstReadyAfter(outage.upAt);
  const readyS = ready ? seconds(ready - outage.upAt) : undefined;
  // Requests sent from the server's loss until the first write acknowledged after it was back.
  const until = firstWrite?.answeredAt ?? outage.upAt;
  const during: Record<string, number> = {};
  for (const a of load.answers)
    if (a.sentAt >= outage.downAt && a.sentAt < until) during[a.status] = (during[a.status] ?? 0) + 1;
  const slowest = Math.max(
    0,
    ...load.answers.filter((a) => a.sentAt >= outage.downAt && a.sentAt < until).map((a) => a.answeredAt - a.sentAt),
  );
  console.log(
    `${outage.name}: no primary for ${seconds(outage.upAt - outage.downAt)} s; after: first write ` +
      `acknowledged in ${writeS} s, /readyz 200 in ${readyS} s, LISTEN back ` +
      `in ${listenerMs === undefined ? '-' : seconds(listenerMs)} s; requests meanwhile ` +
      `answered ${JSON.stringify(during)} (status 0: no answer), slowest ${seconds(slowest)} s`,
  );
  check(
    watch.notReadyBetween(outage.downAt, outage.bringingUpAt),
    `${outage.name}: /readyz answered 503 while no primary answered`,
  );
  check(
    writeS !== undefined && writeS <= recoverWithinS,
    `${outage.name}: a write acknowledged within ${recoverWithinS} s (${writeS} s)`,
  );
  check(
    readyS !== undefined && readyS <= recoverWithinS,
    `${outage.name}: /readyz 200 within ${recoverWithinS} s (${readyS} s)`,
  );
  check(
    listenerMs !== undefined && listenerMs <= recoverWithinS * 1000,
    `${outage.name}: the notification connection listens again within ${recoverWithinS} s`,
  );
  return {
    no_primary_s: seconds(outage.upAt - outage.downAt),
    first_write_s: writeS,
    readyz_s: readyS,
    listen_s: listenerMs === undefined ? null : seconds(listenerMs),
    answers_meanwhile: during,
    slowest_meanwhile_s: seconds(slowest),
  };
}

async function main(): Promise<void> {
  const started = performance.now();
  console.log('failover: making a primary and a synchronous standby');
  const pair = await makePair();
  const { primary, standby } = pair;
  console.log(
    `failover: primary on ${primary.port}, synchronous standby on ${standby.port} ` +
      `(${seconds(performance.now() - started)} s)`,
  );
  const dataDir = mkdtempSync(join(tmpdir(), 'mwa-failover-data-'));
  const receiver = await startReceiver();
  let service: ServiceProcess | undefined;
  try {
    const databaseUrl =
      `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/mwa` +
      `?target_session_attrs=read-write`;
    const adminToken = `adm_${randomUUID()}`;
    service = await spawnService({
      DATABASE_URL: databaseUrl,
      ADMIN_TOKEN: adminToken,
      DATA_DIR: dataDir,
      // Failed deliveries retried soon, so that every event is delivered within the run.
      WEBHOOK_RETRY_SCHEDULE_MS: '200,500,1000,2000,2000,2000,2000,2000',
      // A claim the server committed as it died, its answer lost, holds its records until their lease ends
      // (timeout + 2 × timeout, 45 s by default): a short timeout makes it end within the wait below.
      WEBHOOK_DELIVERY_TIMEOUT_MS: '2000',
    });
    const svc = service;
    console.log(
      `failover: clusters ready, service on ${svc.publicUrl}, DATABASE_URL ${databaseUrl} ` +
        `(${seconds(performance.now() - started)} s)`,
    );
    const load = new Load(() => [svc], adminToken);
    await load.setUp(members, receiver.url);
    const listeners = (
      await primary.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = 'mwa' AND query LIKE 'LISTEN %'",
      )
    )[0]!.n;
    const watch = new ReadyWatch(svc);
    load.start();
    await sleep(3_000);

    // 1. The primary dies; the standby is promoted 2 s later (what Patroni or pg_auto_failover does after its own
    // timeout).
    const before = { ...load.figures.acknowledged };
    const failoverDown = performance.now();
    primary.stopImmediate();
    await sleep(2_000);
    const promoting = performance.now();
    standby.promote();
    const promoted = performance.now();
    const failoverListen = await listenerBack(standby, listeners, promoted, 20_000);
    await sleep(Math.max(0, 5_000 - (performance.now() - promoted)));

    // 2. The promoted server restarts in place.
    const restartDown = performance.now();
    standby.stopImmediate();
    await sleep(2_000);
    const starting = performance.now();
    standby.start();
    const restarted = performance.now();
    const restartListen = await listenerBack(standby, listeners, restarted, 20_000);
    await sleep(Math.max(0, 5_000 - (performance.now() - restarted)));
    await load.stop();
    await watch.stop();

    console.log('\nfailover: checks');
    const failover = report(
      load,
      watch,
      { name: 'failover (stop -m immediate, promote)', downAt: failoverDown, bringingUpAt: promoting, upAt: promoted },
      failoverListen,
    );
    const restart = report(
      load,
      watch,
      {
        name: 'restart in place (stop -m immediate, start)',
        downAt: restartDown,
        bringingUpAt: starting,
        upAt: restarted,
      },
      restartListen,
    );
    const a = load.figures.acknowledged;
    check(
      a.deposits - before.deposits > 0 && a.withdrawals > 0 && a.confirmations > 0,
      `writes of every kind acknowledged (deposits ${a.deposits}, withdrawals ${a.withdrawals}, ` +
        `confirmations ${a.confirmations})`,
    );
    check(
      load.figures.slowestMs < requestBoundMs,
      `every request answered within ${requestBoundMs / 1000} s (slowest ${seconds(load.figures.slowestMs)} s)`,
    );
    check(
      load.figures.refused.length === 0,
      `every write converged on a success with its key (${load.figures.refused.length} other final ` +
        `answers${load.figures.refused.length ? `: ${load.figures.refused.slice(0, 5).join('; ')}` : ''})`,
    );

    // Every event of an acknowledged write delivered (the job lanes and the fan-out came back).
    const deliveredBy = performance.now() + 30_000;
    let missing = [...load.expectedEvents].filter((e) => !receiver.events.has(e));
    while (missing.length > 0 && performance.now() < deliveredBy) {
      await sleep(250);
      missing = missing.filter((e) => !receiver.events.has(e));
    }
    const duplicates = [...receiver.events.values()].filter((n) => n > 1).length;
    if (missing.length > 0) await describeMissing(standby, missing);
    check(
      missing.length === 0,
      `every event of an acknowledged write delivered to the receiver (${load.expectedEvents.size} ` +
        `events, ${missing.length} missing, ${duplicates} delivered more than once)`,
    );

    const verdict = await load.verify();
    for (const p of verdict.problems.slice(0, 20)) console.log(`    ${p}`);
    check(verdict.lost === 0, `acknowledged writes lost: ${verdict.lost}`);
    check(verdict.doubled === 0, `writes doubled: ${verdict.doubled}`);
    check(
      verdict.balanceMismatches === 0,
      `balances equal to the model of the answers (${load.members.length} ` +
        `members; ${verdict.balanceMismatches} differ)`,
    );

    const ledger = await call(svc.adminUrl, 'GET', '/admin/v1/ledger/verify', {
      authorization: `Bearer ${adminToken}`,
    });
    check(
      ledger.status === 200 && ledger.body.ok === true,
      `GET /admin/v1/ledger/verify: ${ledger.status} ` +
        `ok=${ledger.body?.ok}${ledger.body?.ok ? '' : ` ${JSON.stringify(ledger.body).slice(0, 500)}`}`,
    );
    const cli = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/ledger-verify.ts'], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: databaseUrl },
      encoding: 'utf8',
      timeout: 120_000,
    });
    check(
      cli.status === 0,
      `npm run ledger:verify with the multi-host DATABASE_URL: ` +
        `exit ${cli.status}${cli.status === 0 ? '' : `\n${cli.stdout}${cli.stderr}`}`,
    );
    check(svc.child.exitCode === null, 'the service ran throughout without a restart');

    const figures = {
      acknowledged: a,
      attempts: load.figures.attempts,
      answers_by_status: load.figures.statuses,
      slowest_answer_s: seconds(load.figures.slowestMs),
      lost: verdict.lost,
      doubled: verdict.doubled,
      events: load.expectedEvents.size,
      events_missing: missing.length,
      events_delivered_twice: duplicates,
      failover,
      restart,
      seconds_total: seconds(performance.now() - started),
    };
    console.log(`\nfailover figures: ${JSON.stringify(figures)}`);
    if (failures.length > 0) {
      console.log(`\nfailover: ${failures.length} check(s) failed:\n- ${failures.join('\n- ')}`);
      console.log(`\nservice output (last 4000 characters):\n${svc.output().slice(-4000)}`);
      process.exitCode = 1;
    } else {
      console.log('failover: every check passed');
    }
  } finally {
    service?.child.kill('SIGTERM');
    if (service) await Promise.race([service.exited, sleep(15_000)]);
    service?.child.kill('SIGKILL');
    await receiver.close();
    pair.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error('failover: could not run:', err);
  process.exitCode = 2;
});
