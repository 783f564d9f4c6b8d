/**
 * The `mwa` binary as a user runs it: packages/cli/bin/mwa.js over the package's entry, bundled
 * here with esbuild the way scripts/build-package.mjs bundles dist/esm/index.js (the SDK from its
 * sources), against a service with its background workers. `mwa listen --forward-to` delivers
 * each event that `mwa trigger <type>` caused, for every triggerable type, to a local receiver,
 * signed so that the `standardwebhooks` package verifies it, within 5 seconds; the stream
 * survives a dropped connection without losing or repeating an event; exit statuses and --help.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { build } from 'esbuild';
import { Webhook } from 'standardwebhooks';
import type { RunningService } from '../../../src/server.js';
import { allScopes, baseUrlFor, createKey, createMerchant, startTestService } from '../../../test/support/service.js';
import { newBuildDir } from '../../../scripts/test-build.mjs';
import { triggerableTypes } from '../src/index.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** packages/cli/bin/mwa.js beside a bundle of src/index.ts at ../dist/esm/index.js, as in the package. */
async function buildBinary(): Promise<string> {
  const dir = newBuildDir('mwa');
  await build({
    absWorkingDir: root,
    entryPoints: { 'dist/esm/index': 'packages/cli/src/index.ts' },
    outdir: dir,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20.19',
    keepNames: true,
    logLevel: 'warning',
    // The workspace link resolves to the SDK's dist/, which a fresh clone has not built.
    alias: { '@merchant-wallet/sdk': join(root, 'packages/sdk/src/index.ts') },
  });
  mkdirSync(join(dir, 'bin'));
  copyFileSync(join(root, 'packages/cli/bin/mwa.js'), join(dir, 'bin/mwa.js'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  return join(dir, 'bin/mwa.js');
}

interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
  event: { event_id: string; event_type: string; data: { id: string } };
  at: number;
}

describe('the mwa binary against a service', () => {
  let service: RunningService;
  let bin: string;
  let env: Record<string, string>;
  let keyId = '';
  let prodMerchant = '';
  let receiver: Server;
  let receiverPort = 0;
  const deliveries: Delivery[] = [];
  let listen: ChildProcess | undefined;
  const listenLines: Record<string, unknown>[] = [];

  before(async () => {
    [service, bin] = await Promise.all([
      startTestService({
        // The reference's rate limits as they are: some 40 mwa runs in a minute share one token
        // (the token cache), where an exchange per run would meet the 20 exchanges a minute a key gets.
        config: {
          workers: true,
          jobPollIntervalMs: 50,
          simulatorConfirmDelayMs: 50,
          upstreamReconcileDelayMs: 100,
          upstreamCallTimeoutMs: 300,
        },
      }),
      buildBinary(),
    ]);
    const merchantId = await createMerchant(service);
    const creds = await createKey(service, merchantId, { scopes: [...allScopes, 'events:read'] });
    keyId = creds.keyId;
    prodMerchant = await createMerchant(service, 'Production merchant');
    env = {
      PATH: process.env.PATH ?? '',
      HOME: mkdtempSync(join(tmpdir(), 'mwa-home-')),
      XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'mwa-config-')),
      MWA_BASE_URL: baseUrlFor(service, 'sandbox'),
      MWA_CLIENT_ID: creds.clientId,
      MWA_API_KEY: creds.apiKey,
      MWA_SIGNING_KEY: creds.signingKey,
    };
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        deliveries.push({ headers: req.headers, body, event: JSON.parse(body), at: Date.now() });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverPort = (receiver.address() as AddressInfo).port;
  });

  after(async () => {
    listen?.kill('SIGKILL');
    receiver?.close();
    await service?.close();
  });

  function mwa(
    args: string[],
    extraEnv: Record<string, string> = {},
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [bin, ...args], {
        env: { ...env, ...extraEnv },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      const t0 = Date.now();
      child.on('close', (code) => {
        if (process.env.MWA_TEST_TIMES) console.log(`# mwa ${args.join(' ')}: ${Date.now() - t0} ms`);
        resolve({ code, stdout, stderr });
      });
    });
  }

  async function waitFor<T>(what: string, find: () => T | undefined, ms: number): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = find();
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it(
    'mwa listen --forward-to delivers, signed for standardwebhooks, within 5 s, the event each mwa trigger caused; ' +
      'a dropped stream resumes without a loss or a repeat',
    async () => {
      // localhost: the CLI connects to the loopback address itself (RFC 6761) and sends the name.
      listen = spawn(
        process.execPath,
        [bin, 'listen', '--forward-to', `http://localhost:${receiverPort}/hooks`, '--json'],
        { env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let buffered = '';
      let listenErr = '';
      listen.stdout!.on('data', (d: Buffer) => {
        buffered += d.toString();
        let nl;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          listenLines.push(JSON.parse(buffered.slice(0, nl)));
          buffered = buffered.slice(nl + 1);
        }
      });
      listen.stderr!.on('data', (d: Buffer) => (listenErr += d.toString()));
      const ready = (await waitFor('listen ready', () => listenLines.find((l) => l['ready'] === true), 20_000).catch(
        (err) => {
          throw new Error(`${err.message}\n${listenErr}`);
        },
      )) as { secret: string; forward_to: string };
      assert.match(ready.secret, /^whsec_/);
      assert.equal(ready.forward_to, `http://localhost:${receiverPort}/hooks`);
      const verifier = new Webhook(ready.secret);

      const check = async (type: string) => {
        const r = await mwa(['trigger', type, '--json']);
        assert.equal(r.code, 0, `trigger ${type}: ${r.stderr}`);
        const result = JSON.parse(r.stdout) as { event_type: string; id: string };
        assert.equal(result.event_type, type);
        const exited = Date.now();
        const d = await waitFor(
          `${type} (${result.id}) delivered`,
          () => deliveries.find((x) => x.event.event_type === type && x.event.data.id === result.id),
          5_000,
        );
        assert.ok(d.at - exited <= 5_000);
        // Throws unless webhook-id, webhook-timestamp and webhook-signature verify over the exact body.
        const verified = verifier.verify(d.body, {
          'webhook-id': String(d.headers['webhook-id']),
          'webhook-timestamp': String(d.headers['webhook-timestamp']),
          'webhook-signature': String(d.headers['webhook-signature']),
        }) as { event_id: string };
        assert.equal(verified.event_id, d.event.event_id);
        assert.equal(d.headers['webhook-id'], d.event.event_id);
        assert.equal(d.headers['host'], `localhost:${receiverPort}`);
        await waitFor(
          `the listen line of ${d.event.event_id}`,
          () => listenLines.find((l) => l['event_id'] === d.event.event_id && l['status'] === 204),
          2_000,
        );
      };
      // The flows that wait for an upstream's answer run side by side (qrpay.order.failed, which makes the
      // QR provider refuse this merchant's payments for a moment, runs alone).
      const slow = ['qrpay.order.completed', 'remittance.order.completed', 'card.topup.credited'];
      for (const type of triggerableTypes.filter((t) => !slow.includes(t))) await check(type);
      await Promise.all(slow.map(check));
      assert.deepEqual(new Set(deliveries.map((d) => d.event.event_type)).size >= triggerableTypes.length, true);

      // The service drops every connection: listen reconnects with Last-Event-ID and gets what was written meanwhile.
      const before = new Set(deliveries.map((d) => d.event.event_id));
      service.publicApp.server.closeAllConnections();
      await check('deposit.credited');
      await check('withdrawal.settled');
      assert.ok(
        listenLines.some((l) => typeof l['disconnected'] === 'string'),
        'the stream was dropped',
      );
      const resumed = listenLines.find((l) => l['reconnected'] === 1) as { last_event_id: string } | undefined;
      assert.ok(resumed, 'and resumed');
      assert.ok(before.has(resumed.last_event_id), 'after an event received before the drop');

      const ids = deliveries.map((d) => d.event.event_id);
      assert.equal(new Set(ids).size, ids.length, 'no event forwarded twice');
      // Every event of the merchant reached the receiver (the triggers' other events too: locked, pending, ...).
      const all = await mwa(['events', 'list', '--limit', '500', '--json']);
      assert.equal(all.code, 0, all.stderr);
      const kept = (JSON.parse(all.stdout) as { data: { event_id: string }[] }).data.map((e) => e.event_id);
      await waitFor(
        'every kept event forwarded',
        () => (kept.every((id) => ids.includes(id)) ? true : undefined),
        5_000,
      );
      assert.deepEqual([...kept].sort(), [...ids].sort());

      // Ctrl-C / SIGTERM ends listen cleanly.
      const exited = new Promise<number | null>((r) => listen!.once('exit', (code) => r(code)));
      listen.kill('SIGTERM');
      assert.equal(await exited, 0);
      listen = undefined;
    },
  );

  it(
    'events get, clock, request: output and exit statuses (0 done, 1 an API error, 2 a usage error); --help; ' +
      'trigger refuses a production key',
    async () => {
      const help = await mwa(['--help']);
      assert.equal(help.code, 0);
      assert.match(help.stdout, /Usage: mwa <command>/);
      const triggerHelp = await mwa(['trigger', '--help']);
      assert.equal(triggerHelp.code, 0);
      assert.match(triggerHelp.stdout, /kyc\.profile\.approved/);
      const usage = await mwa(['clock', 'advance', '90x']);
      assert.equal(usage.code, 2);
      assert.match(usage.stderr, /invalid duration "90x"/);
      const noCreds = await mwa(['clock'], { MWA_CLIENT_ID: '' });
      assert.equal(noCreds.code, 2);
      assert.match(noCreds.stderr, /no credentials: set MWA_CLIENT_ID/);

      const clock = await mwa(['clock', '--json']);
      assert.equal(clock.code, 0, clock.stderr);
      const before = Date.parse(JSON.parse(clock.stdout).now);
      const advanced = await mwa(['clock', 'advance', '1h30m', '--json']);
      assert.equal(advanced.code, 0, advanced.stderr);
      const moved = JSON.parse(advanced.stdout) as { now: string; advanced_seconds: number };
      assert.equal(moved.advanced_seconds, 5400);
      assert.ok(Date.parse(moved.now) - before >= 5_400_000);

      const list = await mwa(['events', 'list', '--type', 'deposit.*', '--limit', '1', '--json']);
      assert.equal(list.code, 0, list.stderr);
      const [newest] = (JSON.parse(list.stdout) as { data: { event_id: string; event_type: string }[] }).data;
      assert.equal(newest!.event_type, 'deposit.credited');
      const one = await mwa(['events', 'get', newest!.event_id, '--json']);
      assert.equal(one.code, 0, one.stderr);
      assert.equal(JSON.parse(one.stdout).event_id, newest!.event_id);

      const missing = await mwa(['events', 'get', 'evt_00000000-0000-4000-8000-000000000000', '--json']);
      assert.equal(missing.code, 1);
      assert.equal(JSON.parse(missing.stderr).error.code, 'not_found');
      assert.equal(JSON.parse(missing.stderr).error.status, 404);

      // request: signed, with an idempotency key, on behalf of a member.
      const created = await mwa([
        'request',
        'POST',
        '/v1/members',
        '--data',
        '{"external_member_id":"cli-request-1"}',
        '--json',
      ]);
      assert.equal(created.code, 0, created.stderr);
      assert.equal(JSON.parse(created.stdout).external_member_id, 'cli-request-1');
      const balances = await mwa(['request', 'get', '/v1/balances', '--member', 'cli-request-1', '--json']);
      assert.equal(balances.code, 0, balances.stderr);
      assert.ok(Array.isArray(JSON.parse(balances.stdout).data));
      const duplicate = await mwa([
        'request',
        'POST',
        '/v1/members',
        '--data',
        '{"external_member_id":"cli-request-1"}',
      ]);
      assert.equal(duplicate.code, 1);
      assert.match(duplicate.stderr, /409 duplicate_resource/);

      const replay = await mwa([
        'events',
        'replay',
        'whe_00000000-0000-4000-8000-000000000000',
        '--since',
        '1h',
        '--json',
      ]);
      assert.equal(replay.code, 1);
      assert.equal(JSON.parse(replay.stderr).error.status, 404);
      // A real endpoint: the deposit.credited events of the first test (before the endpoint existed) are queued to it.
      const endpoint = await mwa([
        'request',
        'POST',
        '/v1/webhooks/endpoints',
        '--data',
        JSON.stringify({ url: `http://127.0.0.1:${receiverPort}/endpoint`, event_types: ['deposit.credited'] }),
        '--json',
      ]);
      assert.equal(endpoint.code, 0, endpoint.stderr);
      const endpointId = JSON.parse(endpoint.stdout).id as string;
      const replayed = await mwa(['events', 'replay', endpointId, '--since', '3d', '--json']);
      assert.equal(replayed.code, 0, replayed.stderr);
      const queued = JSON.parse(replayed.stdout) as { id: string; queued: number };
      assert.equal(queued.id, endpointId);
      assert.ok(queued.queued >= 2, `queued ${queued.queued}`);

      // A production key: trigger refuses before it makes anything up (no member, no deposit).
      const prod = await createKey(service, prodMerchant, { environment: 'production', scopes: allScopes });
      const refused = await mwa(['trigger', 'deposit.credited'], {
        MWA_BASE_URL: baseUrlFor(service, 'production'),
        MWA_CLIENT_ID: prod.clientId,
        MWA_API_KEY: prod.apiKey,
        MWA_SIGNING_KEY: prod.signingKey,
      });
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, /mwa trigger works in the sandbox only/);
      assert.equal(
        (await service.ctx.db.selectFrom('members').select('id').where('merchant_id', '=', prodMerchant).execute())
          .length,
        0,
      );

      // Every sandbox run of this file used the token the first one obtained (tokens.json, 0600, beside no secret).
      const tokens = await service.ctx.db
        .selectFrom('access_tokens')
        .select('token_hash')
        .where('key_id', '=', keyId)
        .execute();
      assert.equal(tokens.length, 1);
      const cache = join(env.HOME!, '.cache', 'mwa', 'tokens.json');
      assert.equal(statSync(cache).mode & 0o777, 0o600);
      assert.ok(!readFileSync(cache, 'utf8').includes(env.MWA_API_KEY!));
    },
  );
});
