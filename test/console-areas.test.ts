import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { screenshotsIn, useBrowser } from './support/browser.js';
import { payNow } from './support/emv.js';
import { testHostedScreenKey } from './support/hosted.js';
import { admin, useTestService, instantUpstreams } from './support/service.js';
import { consolePassword, inviteConsoleUser, signedInConsole } from './support/console.js';
import { sepaPayee, shipping } from './support/fixtures.js';

/**
 * The console's order pages of the other areas (QR payments, remittances, exchange, earn, cards)
 * and the sandbox test helpers: each list shows an order made through the API, each detail its
 * state history and ledger postings; a helper used from the page changes what its API call
 * changes, is audited, and is refused to a viewer on the server. Screenshots of the new pages
 * (wide and phone width) go to CONSOLE_SCREENSHOTS_DIR or /tmp/console-shots2.
 */

const shot = screenshotsIn(process.env.CONSOLE_SCREENSHOTS_DIR ?? '/tmp/console-shots2');
const browser = useBrowser();
let service: RunningService;
let merchantId: string;
let client: MerchantWalletClient;

/** One member with an order in every area, made through the API. */
const made: Record<string, string> = {};

useTestService(
  {
    config: {
      hostedScreenKey: testHostedScreenKey,
      ...instantUpstreams,
    },
    merchant: { name: 'Kopi Corner Pte Ltd' },
  },
  (s) => ({ service, merchantId, client } = s),
);
before(async () => {
  const m = `a-${randomUUID().slice(0, 8)}`;
  const member = await client.members.create({ external_member_id: m });
  made.member = member.id;
  made.external = m;
  await admin(service, 'POST', `/admin/v1/members/${member.id}/kyc-review`, { decision: 'approved', level: 1 });
  for (const [asset, amount] of [
    ['USDT', '2000'],
    ['SGD', '100'],
    ['EUR', '100'],
  ] as const) {
    await client.deposits.create({ member_id: m, asset, amount, tx_hash: `t-${randomUUID()}` });
  }
  const qr = await client.requestRaw({
    method: 'POST',
    path: '/v1/qrpay/payments',
    body: { qr_code: payNow(), amount: '12.5', asset: 'SGD' },
    onBehalfOf: m,
    idempotencyKey: randomUUID(),
  });
  assert.ok(qr.status < 300, JSON.stringify(qr.body));
  made.qr = (qr.body as { id: string }).id;
  const payee = await client.remittance.createPayee(sepaPayee(), { onBehalfOf: m });
  made.remittance = (
    await client.remittance.create(
      { payee_id: payee.id, source_asset: 'USDT', source_amount: '100' },
      { onBehalfOf: m },
    )
  ).id;
  const q = await client.exchange.quote(
    { from_asset: 'USDT', to_asset: 'EUR', from_amount: '100', lock: true },
    { onBehalfOf: m },
  );
  made.exchange = (await client.exchange.execute({ quote_id: q.quote_id! }, { onBehalfOf: m })).id;
  const flexible = (await client.earn.products()).find((p) => p.type === 'flexible')!;
  made.earn = (await client.earn.subscribe({ product_id: flexible.id, amount: '100' }, { onBehalfOf: m })).id;
  const physical = (await client.cards.products()).find((p) => p.form_factor === 'physical')!;
  made.application = (
    await client.cards.apply(
      { product_id: physical.id, source_asset: 'USDT', shipping_address: shipping },
      { onBehalfOf: m },
    )
  ).id;
  await service.workers.jobs.drain();
});

test(
  'every area: the list shows the order made through the API; its page shows the state history and the ledger ' +
    'postings',
  async () => {
    const { jar } = await signedInConsole(service, merchantId, 'reader@kopi.example', 'viewer');
    for (const [path, id] of [
      ['/qr-payments', made.qr],
      ['/remittances', made.remittance],
      ['/exchange', made.exchange],
      ['/earn', made.earn],
    ] as const) {
      const list = await jar.request('GET', `/console/sandbox${path}`);
      assert.equal(list.status, 200, path);
      assert.ok(list.body.includes(`href="/console/sandbox${path}/${id}"`), `${path} lists ${id}`);
      assert.match(list.body, /<caption>[^<]+, newest first<\/caption>/);
      const detail = await jar.request('GET', `/console/sandbox${path}/${id}`);
      assert.equal(detail.status, 200, `${path}/${id}`);
      // An earn subscription emits no event (the settlement does): its history says so.
      const events =
        path === '/earn'
          ? /<h2>State history<\/h2><div class="card"><p><strong>Events:<\/strong> No events\./
          : /<h2>State history<\/h2><div class="table-wrap"[^>]*><table><caption>Events<\/caption>/;
      assert.match(detail.body, events, `${path}: events`);
      assert.match(detail.body, /<caption>Postings<\/caption>/, `${path}: postings`);
      assert.match(detail.body, /<code>[a-z_.]+\.created<\/code>|<code>[a-z_.]+<\/code>/);
    }
    const positions = await jar.request('GET', '/console/sandbox/earn-positions');
    assert.ok(positions.body.includes(`href="/console/sandbox/earn/${made.earn}"`), 'the position links its order');
    // Another merchant's order, or an unknown id, is not found; production has none of them.
    assert.equal((await jar.request('GET', `/console/production/qr-payments/${made.qr}`)).status, 404);
    assert.equal((await jar.request('GET', '/console/sandbox/remittances/rmt_nope')).status, 404);
    // A viewer sees the helpers page without forms, and is refused a helper on the server.
    const helpers = await jar.request('GET', '/console/sandbox/helpers');
    assert.equal(helpers.status, 200);
    assert.ok(!helpers.body.includes('action="/console/sandbox/helpers/application"'), 'no form for a viewer');
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(helpers.body)![1]!;
    const refused = await jar.request('POST', '/console/sandbox/helpers/application', {
      csrf_token: csrf,
      application_id: made.application,
      to: 'approved',
    });
    assert.equal(refused.status, 403);
    assert.equal(
      (await client.cards.getApplication(made.application!, { onBehalfOf: made.external })).status,
      'pending',
      'the refused helper changed nothing',
    );
    assert.equal((await jar.request('GET', '/console/production/helpers')).status, 404, 'sandbox only');
  },
);

test(
  'sandbox helpers from the page: the application approved (card, fee history), shipped, an authorisation, a ' +
    'KYC review; each audited',
  async () => {
    const { jar } = await signedInConsole(service, merchantId, 'helper@kopi.example', 'developer');
    const csrf = await jar.csrfOf('/console/sandbox/helpers');
    const page = await jar.request('GET', '/console/sandbox/helpers');
    assert.ok(page.body.includes(`<code>${made.application}</code>`), 'the pending application is listed');
    const approved = await jar.request('POST', '/console/sandbox/helpers/application', {
      csrf_token: csrf,
      application_id: made.application,
      to: 'approved',
    });
    assert.equal(approved.status, 200, approved.body.slice(0, 500));
    assert.match(approved.body, /is now approved/);
    const again = await jar.request('POST', '/console/sandbox/helpers/application', {
      csrf_token: csrf,
      application_id: 'cap_nope',
      to: 'approved',
    });
    assert.equal(again.status, 400);
    assert.match(again.body, /role="alert"/);
    const cards = await jar.request('GET', '/console/sandbox/cards');
    const cardId = /href="\/console\/sandbox\/cards\/(crd_[^"]+)"/.exec(cards.body)?.[1];
    assert.ok(cardId, "the approved application's card is listed");
    made.card = cardId;

    const shipped = await jar.request('POST', '/console/sandbox/helpers/ship', { csrf_token: csrf, card_id: cardId });
    assert.equal(shipped.status, 200);
    assert.match(shipped.body, /is shipped/);
    // Not active yet: the authorisation is declined and recorded as a transaction.
    const badAuth = await jar.request('POST', '/console/sandbox/helpers/authorization', {
      csrf_token: csrf,
      card_id: cardId,
      amount: '5',
      merchant_name: 'Shop',
      mcc: '54',
    });
    assert.equal(badAuth.status, 400, "the route's schema: four-digit MCC");
    const auth = await jar.request('POST', '/console/sandbox/helpers/authorization', {
      csrf_token: csrf,
      card_id: cardId,
      amount: '5.00',
      merchant_name: 'Kopi Shop',
      mcc: '5812',
    });
    assert.equal(auth.status, 200, auth.body.slice(0, 500));
    assert.match(auth.body, /Declined \(|Approved: /);

    const detail = await jar.request('GET', `/console/sandbox/cards/${cardId}`);
    assert.equal(detail.status, 200);
    assert.match(detail.body, /<caption>Card transactions, newest first<\/caption>/);
    assert.ok(detail.body.includes('Kopi Shop'), "the authorisation is among the card's transactions");
    assert.match(detail.body, /<caption>Events<\/caption>/);
    const appEvents = await jar.request('GET', `/console/sandbox/cards/${cardId}`);
    assert.match(appEvents.body, /card\.[a-z_]+/, "the card's events");

    // KYC: the member has no pending review: the area's refusal is shown.
    const kyc = await jar.request('POST', '/console/sandbox/helpers/kyc', {
      csrf_token: csrf,
      member: made.external,
      decision: 'approved',
      level: '1',
    });
    assert.equal(kyc.status, 400);
    assert.match(kyc.body, /role="alert"/);

    // A hosted screen completed from the page, as the sandbox call does: the KYC submission then waits
    // for review, which the KYC helper decides.
    const reviewed = await client.members.create({ external_member_id: 'console-kyc-screen' });
    const ticket = await client.kyc.createSession({ onBehalfOf: reviewed.id });
    const badOutcome = await jar.request('POST', '/console/sandbox/helpers/hosted-screen', {
      csrf_token: csrf,
      ticket_id: ticket.id,
      outcome: 'maybe',
    });
    assert.equal(badOutcome.status, 400);
    const completed = await jar.request('POST', '/console/sandbox/helpers/hosted-screen', {
      csrf_token: csrf,
      ticket_id: ticket.id,
      outcome: 'submitted',
    });
    assert.equal(completed.status, 200, completed.body.slice(0, 500));
    assert.match(completed.body, new RegExp(`Ticket ${ticket.id} is completed`));
    const twice = await jar.request('POST', '/console/sandbox/helpers/hosted-screen', {
      csrf_token: csrf,
      ticket_id: ticket.id,
      outcome: 'submitted',
    });
    assert.equal(twice.status, 400, 'a used ticket: the area refuses, as the API call does');
    const review = await jar.request('POST', '/console/sandbox/helpers/kyc', {
      csrf_token: csrf,
      member: reviewed.id,
      decision: 'approved',
      level: '1',
    });
    assert.equal(review.status, 200, review.body.slice(0, 500));
    assert.equal(((await client.members.get(reviewed.id)) as { kyc_level: number }).kyc_level, 1);

    const owner = await signedInConsole(service, merchantId, 'boss@kopi.example', 'owner');
    const audit = await owner.jar.request('GET', '/console/sandbox/audit');
    for (const action of [
      'sandbox.card_application_advance',
      'sandbox.card_ship',
      'sandbox.card_authorization',
      'sandbox.hosted_screen_complete',
      'sandbox.kyc_review',
    ])
      assert.ok(audit.body.includes(`<code>${action}</code>`), action);
    assert.equal(
      audit.body.split('<code>sandbox.kyc_review</code>').length - 1,
      1,
      'the refused review is not recorded as a change; the one that passed is',
    );
  },
);

test('the new pages in a browser: keyboard, labels, phone width; screenshots', async () => {
  const invite = await inviteConsoleUser(service, merchantId, 'look@kopi.example', 'owner');
  for (const width of [1200, 390]) {
    const context = await (await browser()).newContext({ viewport: { width, height: 900 }, javaScriptEnabled: false });
    const page = await context.newPage();
    if (width === 1200) {
      await page.goto(`${service.publicUrl}${invite.invite_path}`);
      await page.getByLabel('New password', { exact: true }).fill(consolePassword);
      await page.getByLabel('New password again').fill(consolePassword);
      await page.getByRole('button', { name: 'Set password' }).click();
    } else {
      await page.goto(`${service.publicUrl}/console/sign-in`);
      await page.getByLabel('E-mail address').fill('look@kopi.example');
    }
    await page.getByLabel('Password').fill(consolePassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/console\/sandbox$/);
    const pages: [string, string][] = [
      ['qr-payments', `/qr-payments/${made.qr}`],
      ['remittances', `/remittances/${made.remittance}`],
      ['exchange', `/exchange/${made.exchange}`],
      ['earn', `/earn/${made.earn}`],
      ['earn-positions', ''],
      ['cards', `/cards/${made.card ?? ''}`],
      ['helpers', ''],
    ];
    for (const [list, detail] of pages) {
      await page.goto(`${service.publicUrl}/console/sandbox/${list}`);
      assert.equal(await page.locator('h1').count(), 1);
      if (width < 500) {
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 1, `${list} fits a phone (${overflow}px over)`);
      }
      await shot(page, `${list}-${width}`);
      if (detail && !detail.endsWith('/')) {
        await page.goto(`${service.publicUrl}/console/sandbox${detail}`);
        assert.ok(await page.getByRole('heading', { name: 'State history' }).isVisible(), `${detail}: the history`);
        // A declined authorisation moves no money: the card itself has no ledger entry yet.
        const caption = list === 'cards' ? 'Card transactions, newest first' : 'Postings';
        assert.ok(
          await page.getByRole('table', { name: caption }).isVisible(),
          `${detail}: the ${caption} table by its caption`,
        );
        await shot(page, `${list}-detail-${width}`);
      }
    }
    // The helpers page by keyboard: labels reach the fields, the form posts.
    if (width === 1200) {
      await page.goto(`${service.publicUrl}/console/sandbox/helpers`);
      await page.getByLabel('Member').fill(made.external!);
      await page.getByLabel('Member').press('Tab');
      await page.keyboard.press('Tab');
      await page.getByRole('button', { name: 'Decide review' }).focus();
      await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/console/sandbox/helpers/kyc')),
        page.keyboard.press('Enter'),
      ]);
      await page.waitForLoadState();
      await page.getByRole('alert').waitFor({ timeout: 5000 });
      assert.match(await page.getByRole('alert').innerText(), /no KYC profile/, "the area's refusal shows as an alert");
      await shot(page, `helpers-problem-${width}`);
    }
    await context.close();
  }
});

test(
  'the console reads exchange orders as the API does: a lock past its end shows expired before the ticker ' +
    'voids it',
  async () => {
    const { jar } = await signedInConsole(service, merchantId, 'lock-reader@kopi.example', 'viewer');
    const q = await client.exchange.quote(
      { from_asset: 'USDT', to_asset: 'EUR', from_amount: '10', lock: true },
      { onBehalfOf: made.external! },
    );
    const before = await jar.request('GET', `/console/sandbox/exchange/${q.quote_id}`);
    assert.match(before.body, /<span class="badge warn">quoted<\/span>/);
    assert.doesNotMatch(before.body, /<span class="badge bad">expired<\/span>/);
    // Time passes with no ticker (the test service runs no workers); last in this file, as it moves the merchant's
    // clock.
    await service.ctx.db
      .insertInto('sandbox_clocks')
      .values({ merchant_id: merchantId, offset_ms: '61000' })
      .onConflict((oc) => oc.column('merchant_id').doUpdateSet({ offset_ms: sql`sandbox_clocks.offset_ms + 61000` }))
      .execute();
    const after = await jar.request('GET', `/console/sandbox/exchange/${q.quote_id}`);
    assert.equal(after.status, 200);
    assert.match(after.body, /<span class="badge bad">expired<\/span>/, 'the order and its history show expired');
  },
);
