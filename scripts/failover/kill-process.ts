/**
 * Two service processes on one PostgreSQL under load while one of them is SIGKILLed
 * (docs/scaling.md "Several machines"): the other keeps answering, and what the dead one held
 * (webhook attempts under their lease, claimed jobs) is taken again when the leases end. A
 * measurement, printed; exits 1 when a check fails. `npx tsx scripts/failover/kill-process.ts`
 * (needs the PostgreSQL server tools, as test:failover).
 *
 * The client sends each write to one process and, when it gets no answer (the killed process
 * refuses connections), retries with the same key on the other: what a load balancer's retry does.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeOne } from './clusters.js';
import { call, Load, requestBoundMs, spawnService, startReceiver, type ServiceProcess } from './load.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number) => Math.round(ms) / 1000;
const failures: string[] = [];
const check = (ok: boolean, what: string) => {
  if (!ok) failures.push(what);
  console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
};

async function main(): Promise<void> {
  const started = performance.now();
  const { server, cleanup } = await makeOne();
  const dirs = [mkdtempSync(join(tmpdir(), 'mwa-kill-a-')), mkdtempSync(join(tmpdir(), 'mwa-kill-b-'))];
  // The receiver answers after 500 ms, so that deliveries are in flight in the process that is killed.
  const receiver = await startReceiver(500);
  const services: ServiceProcess[] = [];
  try {
    const adminToken = `adm_${randomUUID()}`;
    const env = {
      DATABASE_URL: server.url,
      ADMIN_TOKEN: adminToken,
      JOB_LEASE_SECONDS: '5',
      // An attempt's lease is its timeout plus twice it (at least 2 s): 6 s here.
      WEBHOOK_DELIVERY_TIMEOUT_MS: '2000',
      WEBHOOK_RETRY_SCHEDULE_MS: '200,500,1000,2000,2000,2000,2000,2000',
    };
    for (const dir of dirs) services.push(await spawnService({ ...env, DATA_DIR: dir }));
    const [a, b] = services as [ServiceProcess, ServiceProcess];
    let alive = [a, b];
    const load = new Load(() => alive, adminToken);
    await load.setUp(8, receiver.url);
    load.start();
    await sleep(4_000);

    const leased = async () =>
      (
        await server.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries WHERE lease_until > now()')
      )[0]!.n;
    const heldAtKill = await leased();
    const expectedBeforeKill = new Set(load.expectedEvents);
    const killedAt = performance.now();
    a.child.kill('SIGKILL');
    await a.exited;
    // Deliveries at full speed again: the slow answers were only to have some in flight at the kill.
    receiver.setDelay(0);
    // The balancer notices: new requests go to B (retries of those sent to A already do).
    alive = [b];
    await sleep(8_000);
    await load.stop();

    const before = load.successes.filter((s) => s.answeredAt < killedAt && s.answeredAt >= killedAt - 4_000).length / 4;
    const after = load.successes.filter((s) => s.sentAt >= killedAt).length / ((performance.now() - killedAt) / 1000);
    const answeredByB = load.answers.filter((x) => x.sentAt >= killedAt && x.status > 0).length;
    const slowestAfter = Math.max(
      0,
      ...load.answers.filter((x) => x.sentAt >= killedAt - 1_000).map((x) => x.answeredAt - x.sentAt),
    );
    const firstAfter = load.successes
      .filter((s) => s.sentAt >= killedAt)
      .sort((x, y) => x.answeredAt - y.answeredAt)[0];

    // The events of writes acknowledged before the kill: some were in A's hands (leased attempts).
    let missing = [...expectedBeforeKill].filter((e) => !receiver.events.has(e));
    const deadline = performance.now() + 30_000;
    while (missing.length > 0 && performance.now() < deadline) {
      await sleep(200);
      missing = missing.filter((e) => !receiver.events.has(e));
    }
    const allBeforeKillDeliveredS = seconds(performance.now() - killedAt);
    let missingAll = [...load.expectedEvents].filter((e) => !receiver.events.has(e));
    const deadlineAll = performance.now() + 30_000;
    while (missingAll.length > 0 && performance.now() < deadlineAll) {
      await sleep(200);
      missingAll = missingAll.filter((e) => !receiver.events.has(e));
    }
    const abandoned = (
      await server
        .query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE outcome = 'abandoned'")
        .catch(() => [{ n: -1 }])
    )[0]!.n;

    console.log('\nprocess kill: checks');
    console.log(
      `writes acknowledged/s: ${before.toFixed(0)} with two processes, ${after.toFixed(0)} with one after ` +
        `the kill; first write after it in ${firstAfter ? seconds(firstAfter.answeredAt - killedAt) : '-'} s`,
    );
    check(
      answeredByB > 0 && firstAfter !== undefined,
      `the other process kept answering (${answeredByB} requests answered after the kill)`,
    );
    check(
      load.figures.slowestMs < requestBoundMs,
      `every request answered within ${requestBoundMs / 1000} s (slowest around the kill ${seconds(slowestAfter)} s)`,
    );
    check(
      load.figures.refused.length === 0,
      `every write converged on a success with its key (${load.figures.refused.length} other final ` +
        `answers${load.figures.refused.length ? `: ${load.figures.refused.slice(0, 3).join('; ')}` : ''})`,
    );
    check(
      missing.length === 0,
      `every event of a write acknowledged before the kill delivered ` +
        `(${expectedBeforeKill.size}; ${heldAtKill} deliveries were leased at the kill; ${abandoned} attempts ` +
        `abandoned by the dead process and taken again; all delivered ${allBeforeKillDeliveredS} s after the ` +
        `kill)`,
    );
    check(missingAll.length === 0, `every event delivered (${load.expectedEvents.size})`);
    const verdict = await load.verify();
    for (const p of verdict.problems.slice(0, 10)) console.log(`    ${p}`);
    check(
      verdict.lost === 0 && verdict.doubled === 0 && verdict.balanceMismatches === 0,
      `lost ${verdict.lost}, doubled ${verdict.doubled}, balances differing ${verdict.balanceMismatches}`,
    );
    const ledger = await call(b.adminUrl, 'GET', '/admin/v1/ledger/verify', { authorization: `Bearer ${adminToken}` });
    check(
      ledger.status === 200 && ledger.body.ok === true,
      `ledger verification: ${ledger.status} ok=${ledger.body?.ok}`,
    );
    const figures = {
      acknowledged: load.figures.acknowledged,
      writes_per_s_two: Math.round(before),
      writes_per_s_one_after_kill: Math.round(after),
      first_write_after_kill_s: firstAfter ? seconds(firstAfter.answeredAt - killedAt) : null,
      answers_by_status: load.figures.statuses,
      leased_deliveries_at_kill: heldAtKill,
      abandoned_attempts: abandoned,
      events_before_kill_all_delivered_s: allBeforeKillDeliveredS,
      lost: verdict.lost,
      doubled: verdict.doubled,
      seconds_total: seconds(performance.now() - started),
    };
    console.log(`\nprocess kill figures: ${JSON.stringify(figures)}`);
    if (failures.length > 0) {
      console.log(`\nprocess kill: ${failures.length} check(s) failed:\n- ${failures.join('\n- ')}`);
      process.exitCode = 1;
    } else {
      console.log('process kill: every check passed');
    }
  } finally {
    for (const s of services) s.child.kill('SIGKILL');
    await receiver.close();
    cleanup();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error('process kill: could not run:', err);
  process.exitCode = 2;
});
