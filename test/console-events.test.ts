import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { useBrowser } from './support/browser.js';
import { consolePassword, inviteConsoleUser, signedInConsole } from './support/console.js';
import { pumpWebhooks, startReceiver } from './support/webhook-receiver.js';
import { useTestService } from './support/service.js';

/**
 * The console's events (issue 40, point 5): the Events page with the API's filters, an event's
 * page (its body and deliveries), an object's history linking to its events, and the Replay form
 * on an endpoint's page (a form post: no script), allowed to a developer, refused to a viewer,
 * audited; in a browser with JavaScript off, by labels.
 */

const browser = useBrowser();
let service: RunningService;
let merchantId: string;
let client: MerchantWalletClient;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let failing = true;
let endpointId: string;
let depositId: string;

useTestService(
  { config: { workers: false }, merchant: { name: 'Events Pte Ltd' } },
  (s) => ({ service, merchantId, client } = s),
);
before(async () => {
  receiver = await startReceiver(() => (failing ? 500 : 200));
  endpointId = (
    (await client.webhooks.createEndpoint({ url: receiver.url(), event_types: ['deposit.credited'] })) as { id: string }
  ).id;
  const external = `ce-${randomUUID()}`;
  await client.members.create({ external_member_id: external });
  depositId = (
    (await client.deposits.create({
      member_id: external,
      asset: 'USDT',
      amount: '10',
      tx_hash: `t-${randomUUID()}`,
    })) as { id: string }
  ).id;
  await pumpWebhooks(service, async () => receiver.received.length >= 1);
});
after(async () => {
  await receiver?.close();
});

test('the Events page filters as the API does; an event and an object link to each other', async () => {
  const { jar } = await signedInConsole(service, merchantId, 'viewer@events.example', 'viewer');
  const all = await jar.request('GET', '/console/sandbox/events');
  assert.equal(all.status, 200);
  assert.ok(
    all.body.includes('<code>deposit.credited</code>') && all.body.includes('<code>member.created</code>') === false,
  );
  const eventId = /\/console\/sandbox\/events\/(evt_[^"]+)"/.exec(all.body)![1]!;
  assert.ok((await jar.request('GET', '/console/sandbox/events?type=withdrawal.*')).body.includes('No events match.'));
  assert.ok((await jar.request('GET', '/console/sandbox/events?type=deposit.*')).body.includes(eventId));
  assert.ok(
    (await jar.request('GET', `/console/sandbox/events?object_id=${depositId}&delivery_success=false`)).body.includes(
      eventId,
    ),
  );
  assert.ok(
    (await jar.request('GET', '/console/sandbox/events?delivery_success=true')).body.includes('No events match.'),
  );
  assert.ok(
    (await jar.request('GET', '/console/sandbox/events?created_gte=2999-01-01T00:00:00Z')).body.includes(
      'No events match.',
    ),
  );
  assert.match((await jar.request('GET', '/console/sandbox/events?created_lt=soon')).body, /Not a time: created_lt/);
  const one = await jar.request('GET', `/console/sandbox/events/${eventId}`);
  assert.equal(one.status, 200);
  assert.ok(one.body.includes(`/console/sandbox/webhooks/${endpointId}`), 'its delivery links to the endpoint');
  assert.equal((await jar.request('GET', `/console/sandbox/events/evt_${randomUUID()}`)).status, 404);
  const deposit = await jar.request('GET', `/console/sandbox/deposits/${depositId}`);
  assert.ok(deposit.body.includes(`/console/sandbox/events/${eventId}`), "the deposit's history links to its event");
  // A viewer sees the endpoint but no Replay form, and a post is refused and changes nothing.
  const endpoint = await jar.request('GET', `/console/sandbox/webhooks/${endpointId}`);
  assert.equal(endpoint.status, 200);
  assert.ok(!endpoint.body.includes('Replay events'));
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(all.body)?.[1] ?? '';
  const refused = await jar.request('POST', `/console/sandbox/webhooks/${endpointId}/replay`, {
    csrf_token: csrf,
    since: new Date(Date.now() - 3_600_000).toISOString(),
    only_failed: 'true',
  });
  assert.notEqual(refused.status, 200);
});

test("Replay on the endpoint's page, in a browser without JavaScript, by labels; audited", async () => {
  const invite = await inviteConsoleUser(service, merchantId, 'dev@events.example', 'developer');
  const context = await (
    await browser()
  ).newContext({ viewport: { width: 1200, height: 900 }, javaScriptEnabled: false });
  try {
    const page = await context.newPage();
    await page.goto(`${service.publicUrl}${invite.invite_path}`);
    await page.getByLabel('New password', { exact: true }).fill(consolePassword);
    await page.getByLabel('New password again').fill(consolePassword);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByLabel('Password').fill(consolePassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/console\/sandbox$/);
    await page.getByRole('link', { name: 'Events' }).click();
    await page.getByLabel('Type').fill('deposit.*');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/\/events\?type=deposit/);
    assert.ok(await page.getByRole('table', { name: 'Events, newest first' }).isVisible());
    await page.goto(`${service.publicUrl}/console/sandbox/webhooks`);
    await page.getByRole('link', { name: receiver.url() }).click();
    await page.waitForURL(/\/webhooks\/whe_/);
    failing = false;
    await page.getByLabel('From').fill(new Date(Date.now() - 3_600_000).toISOString());
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.getByRole('status').waitFor({ timeout: 5000 });
    assert.match(await page.getByRole('status').innerText(), /1 delivery queued/);
    await pumpWebhooks(service, async () => receiver.received.length >= 2);
    // An endpoint disabled: the area's refusal shows.
    await client.webhooks.disableEndpoint(endpointId);
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.getByRole('alert').waitFor({ timeout: 5000 });
    assert.match(await page.getByRole('alert').innerText(), /disabled/);
  } finally {
    await context.close();
  }
  const owner = await signedInConsole(service, merchantId, 'owner@events.example', 'owner');
  const audit = await owner.jar.request('GET', '/console/sandbox/audit');
  assert.equal(
    audit.body.split('<code>webhook_endpoint.replay</code>').length - 1,
    1,
    'the replay is audited; the refused one is not',
  );
});
