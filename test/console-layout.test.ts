import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import type { BrowserContext, Page } from 'playwright-core';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { screenshotsIn, useBrowser } from './support/browser.js';
import { testHostedScreenKey } from './support/hosted.js';
import { admin, createKey, createMerchant, useTestService, keyClient } from './support/service.js';
import { signedInConsole } from './support/console.js';
import { rowById, TRON } from './support/fixtures.js';

/**
 * The console as a merchant's people see it at laptop (1280 px) and phone (390 px) width (issue 42):
 * no list page scrolls sideways and every status and action cell is on screen at 1280 px; rows
 * stack and the navigation folds on a phone; every irreversible action asks first, on a page
 * naming the object and the money, and the message after it names the object; axe-core finds no
 * critical or serious violation. Screenshots go to CONSOLE_SCREENSHOTS_DIR or /tmp/console-layout.
 */

const shot = screenshotsIn(process.env.CONSOLE_SCREENSHOTS_DIR ?? '/tmp/console-layout');
const browser = useBrowser();
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
let service: RunningService;
let merchantId: string;
let client: MerchantWalletClient;
let ownerCookies: Map<string, string>;
const withdrawals: string[] = [];
let keyId = '';
let endpointId = '';

const listPages = [
  '',
  '/keys',
  '/webhooks',
  '/deliveries',
  '/events',
  '/api-log',
  '/members',
  '/withdrawals',
  '/deposits',
  '/ledger',
  '/exports',
  '/qr-payments',
  '/remittances',
  '/exchange',
  '/earn',
  '/earn-positions',
  '/cards',
  '/tools',
  '/helpers',
  '/audit',
];

useTestService(
  { config: { hostedScreenKey: testHostedScreenKey, webhookRetryScheduleMs: [60_000, 60_000] }, merchant: false },
  (s) => ({ service } = s),
);
before(async () => {
  merchantId = await createMerchant(service, 'Kopi Corner Pte Ltd');
  keyId = await createKey(service, merchantId).then((k) => k.keyId);
  client = await keyClient(service, merchantId);
  const { jar } = await signedInConsole(service, merchantId, 'layout-owner@kopi.example', 'owner');
  ownerCookies = jar.cookies;
  // An endpoint nobody listens on: its deliveries fail, so the deliveries list has attempts and a Redeliver column.
  await jar.submit('/console/sandbox/webhooks', { url: 'http://127.0.0.1:9/hook', event_types: '*' });
  await jar.submit(
    '/console/sandbox/balance-monitors',
    { balance: 'custody', asset: 'USDT', below: '10' },
    '/console/sandbox',
  );
  endpointId = (
    await service.ctx.db
      .selectFrom('webhook_endpoints')
      .select('id')
      .where('merchant_id', '=', merchantId)
      .executeTakeFirstOrThrow()
  ).id;
  const m = `layout-${randomUUID().slice(0, 8)}`;
  const member = await client.members.create({ external_member_id: m });
  await admin(service, 'POST', `/admin/v1/members/${member.id}/kyc-review`, { decision: 'approved', level: 1 });
  for (const [asset, amount] of [
    ['USDT', '500'],
    ['EUR', '50'],
  ] as const) {
    await client.deposits.create({
      member_id: m,
      asset,
      amount,
      tx_hash: `0x${randomUUID().replace(/-/g, '')}${randomUUID().replace(/-/g, '')}`,
    });
  }
  for (const amount of ['20', '35.5', '12']) {
    withdrawals.push(
      (await client.withdrawals.create({ asset: 'USDT', network: 'TRON', address: TRON, amount }, { onBehalfOf: m }))
        .id,
    );
  }
  const q = await client.exchange.quote(
    { from_asset: 'USDT', to_asset: 'EUR', from_amount: '100', lock: true },
    { onBehalfOf: m },
  );
  await client.exchange.execute({ quote_id: q.quote_id! }, { onBehalfOf: m });
  // The outbox relay (tick) makes the deliveries; the drain attempts them (they fail: nobody listens).
  await service.workers.tick();
  await service.workers.jobs.drain();
});

async function ownerContext(width: number, opts: { js?: boolean } = {}): Promise<BrowserContext> {
  // axe runs as a script: that context bypasses the CSP (the console itself has no script to run).
  const context = await (
    await browser()
  ).newContext({ viewport: { width, height: 900 }, javaScriptEnabled: opts.js ?? false, bypassCSP: opts.js ?? false });
  const host = new URL(service.publicUrl).hostname;
  await context.addCookies([...ownerCookies].map(([name, value]) => ({ name, value, domain: host, path: '/console' })));
  return context;
}

/** Runs `use` on a page of a new owner's context `width` px wide, closing the context afterwards. */
async function asOwner(width: number, use: (page: Page) => Promise<void>, opts: { js?: boolean } = {}) {
  const context = await ownerContext(width, opts);
  try {
    await use(await context.newPage());
  } finally {
    await context.close();
  }
}

const url = (path: string) => `${service.publicUrl}/console/sandbox${path}`;

/** What overflows: the page, a table box, or a status/action cell outside the viewport or its box. */
function overflowAt(page: Page) {
  return page.evaluate(() => {
    const problems: string[] = [];
    const vw = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > vw)
      problems.push(`page ${document.documentElement.scrollWidth} px wide`);
    for (const wrap of document.querySelectorAll('.table-wrap')) {
      const name = wrap.querySelector('caption')?.textContent ?? '?';
      if (wrap.scrollWidth > wrap.clientWidth + 1)
        problems.push(`table "${name}" ${wrap.scrollWidth} px in a ${wrap.clientWidth} px box`);
      const box = wrap.getBoundingClientRect();
      const headers = [...wrap.querySelectorAll('th')].map((th) => th.textContent ?? '');
      for (const row of wrap.querySelectorAll('tbody tr')) {
        [...row.children].forEach((cell, i) => {
          if (!/^(Status|Actions)$/.test(headers[i] ?? '')) return;
          const r = cell.getBoundingClientRect();
          if (r.right > Math.min(vw, box.right) + 1 || r.width === 0)
            problems.push(`"${name}" ${headers[i]} cell at ${Math.round(r.left)}-${Math.round(r.right)} px`);
        });
      }
    }
    return problems;
  });
}

test(
  '1280 px: no list page scrolls sideways, every status and action cell is on screen; 390 px: rows stack, the ' +
    'navigation folds',
  async () => {
    const wide = await ownerContext(1280);
    const phone = await ownerContext(390);
    try {
      const page = await wide.newPage();
      const problems: string[] = [];
      for (const path of listPages) {
        await page.goto(url(path));
        assert.equal(await page.locator('h1').count(), 1, path);
        problems.push(...(await overflowAt(page)).map((p) => `${path || '/'}: ${p}`));
        await shot(page, `1280${path.replace('/', '-') || '-balances'}`);
      }
      // Lists show short ids (prefix and the last characters); the whole id is on the detail page, selectable in one
      // go.
      assert.deepEqual(problems, [], 'at 1280 px');
      await page.goto(url('/withdrawals'));
      const w = withdrawals[0]!;
      const listed = page.getByRole('row').filter({ hasText: w });
      assert.equal(
        await listed.locator('code.id [aria-hidden="true"]').first().innerText(),
        `wdr_…${w.slice(-6)}`,
        'the list shows the short form',
      );
      await page.getByRole('link', { name: w }).click();
      assert.equal(await page.locator('h1').innerText(), `Withdrawal ${w}`);

      const small = await phone.newPage();
      const phoneProblems: string[] = [];
      for (const path of listPages) {
        await small.goto(url(path));
        const width = await small.evaluate(() => document.documentElement.scrollWidth);
        if (width > 390) phoneProblems.push(`${path || '/'}: ${width} px wide at 390 px`);
        if (
          [
            '/withdrawals',
            '/deliveries',
            '/api-log',
            '/deposits',
            '/keys',
            '/webhooks',
            '/exchange',
            '/tools',
          ].includes(path)
        ) {
          await shot(small, `390${path.replace('/', '-')}`);
        }
      }
      // Detail pages too: a withdrawal (ids whole), an event (its webhook body wraps).
      const event = await service.ctx.db
        .selectFrom('events')
        .select('id')
        .where('merchant_id', '=', merchantId)
        .orderBy('seq', 'desc')
        .executeTakeFirstOrThrow();
      for (const path of [`/withdrawals/${withdrawals[0]}`, `/events/${event.id}`]) {
        await small.goto(url(path));
        const width = await small.evaluate(() => document.documentElement.scrollWidth);
        if (width > 390) phoneProblems.push(`${path}: ${width} px wide at 390 px`);
      }
      assert.deepEqual(phoneProblems, [], 'at 390 px');
      // The heading comes before the links: the navigation is folded behind "Menu" until opened.
      await small.goto(url('/withdrawals'));
      const h1 = await small.locator('h1').boundingBox();
      assert.ok(h1 && h1.y < 250, `the heading is near the top (${h1?.y})`);
      assert.equal(await small.getByRole('link', { name: 'Deposits' }).isVisible(), false);
      await small.getByText('Menu', { exact: true }).click();
      assert.equal(await small.getByRole('link', { name: 'Deposits' }).isVisible(), true);
      // A stacked row: each cell under its column's name, the status and the actions visible.
      const row = small.getByRole('row').filter({ hasText: withdrawals[1]! });
      assert.ok(await row.getByRole('link', { name: 'Fail' }).isVisible());
      const box = await row.getByRole('link', { name: 'Fail' }).boundingBox();
      assert.ok(box && box.x + box.width <= 390, 'the action is on screen');
    } finally {
      await wide.close();
      await phone.close();
    }
  },
);

test(
  'every irreversible action asks first, naming the object and the money; ' + 'the message after it names the object',
  async () => {
    await asOwner(1280, async (page) => {
      const w = withdrawals[0]!;
      const short = `wdr_…${w.slice(-6)}`;
      // Fail a withdrawal: one click shows a question, nothing changes; the second fails it.
      await page.goto(url('/withdrawals'));
      await page.getByRole('row').filter({ hasText: w }).getByRole('link', { name: 'Fail' }).click();
      assert.equal(await page.locator('h1').innerText(), 'Fail the withdrawal?');
      assert.match(await page.locator('main').innerText(), new RegExp(`Fail withdrawal ${short} for 20\\.0+ USDT\\?`));
      assert.equal((await client.withdrawals.get(w)).status, 'locked', 'asking changed nothing');
      await shot(page, 'confirm-fail', { fullPage: false });
      await page.getByRole('button', { name: /^Yes, fail it and return 20\.0+ USDT$/ }).click();
      assert.match(
        await page.getByRole('status').innerText(),
        new RegExp(`Withdrawal ${short} for 20\\.0+ USDT is failed`),
      );
      assert.equal((await client.withdrawals.get(w)).status, 'failed');

      // Confirm a payout: the page names the amount and the address; "Cancel" goes back and changes nothing.
      const w2 = withdrawals[1]!;
      await page.goto(url(`/withdrawals/${w2}`));
      await page.getByRole('link', { name: 'Confirm payout' }).click();
      assert.match(await page.locator('main').innerText(), new RegExp(`35\\.50+ USDT to TRON ${TRON}`));
      await page.getByRole('link', { name: 'Cancel, go back' }).click();
      assert.equal((await client.withdrawals.get(w2)).status, 'locked');
      await page.getByRole('link', { name: 'Confirm payout' }).click();
      await page.getByRole('button', { name: /^Yes, confirm the payout of 35\.50+ USDT$/ }).click();
      assert.match(
        await page.getByRole('status').innerText(),
        new RegExp(`Withdrawal wdr_…${w2.slice(-6)} for 35\\.50+ USDT is confirmed`),
      );

      // The others: each first control leads to a question, and the object is unchanged until "Yes".
      const asks: [string, string, string, () => Promise<void>][] = [
        [
          '/webhooks',
          'Delete',
          'Delete the endpoint?',
          async () => assert.ok(await rowById(service, 'webhook_endpoints', endpointId)),
        ],
        ['/webhooks', 'Roll secret', 'Roll the signing secret?', async () => undefined],
        [
          `/keys/${keyId}`,
          'Disable key',
          'Disable the key?',
          async () => assert.equal((await rowById(service, 'api_keys', keyId)).disabled, false),
        ],
        [`/keys/${keyId}`, 'Rotate key', 'Rotate the key?', async () => undefined],
        ['/tools', 'Reset sandbox logs', 'Reset the sandbox logs?', async () => undefined],
        [
          '',
          'Remove',
          'Remove the balance monitor?',
          async () =>
            assert.equal((await service.ctx.db.selectFrom('balance_monitors').select('id').execute()).length, 1),
        ],
        ['/tools', 'Advance clock', 'Move the sandbox clock?', async () => undefined],
      ];
      for (const [path, control, question, unchanged] of asks) {
        await page.goto(url(path));
        await page
          .getByRole(control === 'Advance clock' || control === 'Rotate key' ? 'button' : 'link', { name: control })
          .first()
          .click();
        assert.equal(await page.locator('h1').innerText(), question, control);
        assert.match(await page.locator('main').innerText(), /cannot be undone/);
        await unchanged();
      }
      // Delete the endpoint: the message names it.
      await page.goto(url('/webhooks'));
      await page.getByRole('link', { name: 'Delete' }).click();
      assert.match(await page.locator('main').innerText(), /http:\/\/127\.0\.0\.1:9\/hook/);
      await page.getByRole('button', { name: 'Yes, delete the endpoint' }).click();
      assert.match(
        await page.getByRole('status').innerText(),
        new RegExp(
          `The endpoint ${endpointId.slice(0, endpointId.indexOf('_') + 1)}…${endpointId.slice(-6)} is deleted`,
        ),
      );
    });
  },
);

test(
  'the create form previews the allow-list: the meaning of each entry, and a key with entries that can never ' +
    'match is not made without "Save anyway"',
  async () => {
    await asOwner(1280, async (page) => {
      await page.goto(url('/keys'));
      const before = (
        await service.ctx.db.selectFrom('api_keys').select('id').where('merchant_id', '=', merchantId).execute()
      ).length;
      await page.getByLabel('balances:read').check();
      await page.getByLabel(/IP allow-list/).fill('203.0.113.7\nnot-an-ip\n10.1.*');
      await page.getByRole('button', { name: 'Preview allow-list' }).click();
      const preview = await page.getByRole('table', { name: 'Preview: what each line matches' }).innerText();
      assert.match(preview, /203\.0\.113\.7\s+exactly 203\.0\.113\.7/);
      assert.match(preview, /not-an-ip\s+nothing/);
      assert.match(preview, /10\.1\.\*\s+nothing/);
      assert.equal(
        await page.getByLabel(/IP allow-list/).inputValue(),
        '203.0.113.7\nnot-an-ip\n10.1.*',
        'the draft is kept',
      );
      await page.getByRole('button', { name: 'Create key' }).click();
      assert.match(
        await page.getByRole('alert').innerText(),
        /These lines can never match any address: not-an-ip, 10\.1\.\*/,
      );
      assert.equal(
        (await service.ctx.db.selectFrom('api_keys').select('id').where('merchant_id', '=', merchantId).execute())
          .length,
        before,
        'no key yet',
      );
      await page.getByRole('button', { name: 'Save anyway' }).click();
      assert.match(await page.locator('.secret').innerText(), /shown only once/);
    });
  },
);

test(
  'sandbox pages say which clock their times are on: the banner, real-time columns marked, both clocks on the ' +
    'tools page once they differ',
  async () => {
    await asOwner(1280, async (page) => {
      await page.goto(url('/api-log'));
      assert.match(
        await page.getByRole('banner').innerText(),
        /Times are on your sandbox clock unless marked “real time”/,
      );
      assert.equal(await page.getByRole('columnheader').first().innerText(), 'Time (real time)');
      await page.goto(url('/tools'));
      await page.getByRole('button', { name: 'Advance clock' }).click();
      await page.getByRole('button', { name: /^Yes, move it forward by/ }).click();
      assert.match(await page.locator('main').innerText(), /\(sandbox clock\); real time is \d{4}-\d\d-\d\d/);
      // A preset in force stays listed, with its expiry, after the form has reset.
      await page.getByLabel('Provider').selectOption('card');
      await page.getByLabel('Answer').selectOption('reject');
      await page.getByRole('button', { name: 'Set behaviour' }).click();
      await page.goto(url('/tools'));
      assert.match(
        await page.getByRole('table', { name: 'Behaviours in force' }).innerText(),
        /card\s+reject\s+\d{4}-\d\d-\d\d/,
      );
      await page.goto(`${service.publicUrl}/console/production/api-log`);
      assert.doesNotMatch(
        await page.locator('body').innerText(),
        /real time|sandbox clock/,
        'production has one clock',
      );
    });
  },
);

test('axe-core: no critical or serious violation on any console page', async () => {
  await asOwner(
    1280,
    async (page) => {
      const found: string[] = [];
      // Every page of the navigation, plus a detail page and a confirmation page.
      for (const path of [
        ...listPages,
        '/branding',
        '/account',
        `/keys/${keyId}`,
        `/withdrawals/${withdrawals[2]}/fail`,
      ]) {
        await page.goto(url(path));
        await page.addScriptTag({ content: axeSource });
        const result = await page.evaluate(async () => {
          const axe = (
            globalThis as unknown as {
              axe: {
                run(
                  ctx: Document,
                  o: object,
                ): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }>;
              };
            }
          ).axe;
          return (await axe.run(document, { resultTypes: ['violations'] })).violations.map((v) => ({
            id: v.id,
            impact: v.impact,
            count: v.nodes.length,
          }));
        });
        for (const v of result)
          if (v.impact === 'critical' || v.impact === 'serious' || v.id === 'region')
            found.push(`${path || '/'}: ${v.id} (${v.impact}, ${v.count})`);
      }
      assert.deepEqual(found, []);
    },
    { js: true },
  );
});
