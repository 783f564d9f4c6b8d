import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { closeBrowser, launchBrowser, attachPhotos } from './support/browser.js';
import { testHostedScreenKey } from './support/hosted.js';
import { useTestService } from './support/service.js';
import { assertAxeClean } from './support/axe.js';
import { approvedCard, kycMember } from './support/fixtures.js';

/**
 * The card screens in headless Chromium (one browser), as a member uses them: the supplement
 * screen (refused without photos, then sent with both) and the reveal screen (the details shown
 * once, after a press). Screenshots go to the temporary directory (CARDS_SCREENSHOTS_DIR to
 * choose) for a person to look at; none is committed.
 */

let service: RunningService;
let client: MerchantWalletClient;
let browser: Browser;
const shots = process.env.CARDS_SCREENSHOTS_DIR ?? tmpdir();

useTestService(
  { config: { hostedScreenKey: testHostedScreenKey, simulatorConfirmDelayMs: 0 } },
  (s) => ({ service, client } = s),
);
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await closeBrowser(browser);
});

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `cards-${name}.png`), fullPage: true });
}

/** A member at KYC level 1 holding 100 USDT: its external id. */
const member = async () => (await kycMember(service, client, { prefix: 'cb' })).external;

test(
  'the supplement screen: refused without photos, then sent with both; ' + 'the application goes back to review',
  async () => {
    const m = await member();
    const virtual = (await client.cards.products()).find((p) => p.form_factor === 'virtual')!;
    const app = await client.cards.apply({ product_id: virtual.id, source_asset: 'USDT' }, { onBehalfOf: m });
    await client.cards.sandboxAdvanceApplication(app.id, 'need_docs');
    const t = await client.cards.createSupplementSession(app.id, { onBehalfOf: m });
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 800, height: 900 } });
    const page = await context.newPage();
    const res = await page.goto(t.hosted_url);
    assert.equal(res?.status(), 200);
    assert.equal(await page.title(), 'Send new photos for your card');
    await shot(page, 'supplement-1-form');
    await assertAxeClean(page, 'the card document supplement screen');

    await page.getByRole('button', { name: 'Send photos' }).click();
    await page.waitForLoadState();
    assert.equal(await page.title(), 'Error: Send new photos for your card');
    const summary = page.getByRole('alert');
    assert.match(await summary.innerText(), /There is a problem/);
    assert.equal(await page.getByLabel('Photo of the document').getAttribute('aria-invalid'), 'true');
    await shot(page, 'supplement-2-errors');

    await attachPhotos(page);
    await page.getByRole('button', { name: 'Send photos' }).click();
    await page.waitForLoadState();
    assert.equal(await page.title(), 'Documents sent');
    await shot(page, 'supplement-3-sent');
    const after = await client.cards.getApplication(app.id, { onBehalfOf: m });
    assert.equal(after.status, 'pending');
    assert.equal(after.supplement?.status, 'submitted');
    // Single use: the link is spent.
    const again = await page.goto(t.hosted_url);
    assert.notEqual(again?.status(), 200);
    await context.close();
  },
);

test('the reveal screen: details shown once after the member presses the button', async () => {
  const m = await member();
  const card = await client.cards.get(await approvedCard(client, m), { onBehalfOf: m });
  const t = await client.cards.createSecureSession(card.id, { onBehalfOf: m });
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 800, height: 700 } });
  const page = await context.newPage();
  assert.equal((await page.goto(t.hosted_url))?.status(), 200);
  assert.equal(await page.title(), 'Show your card details');
  assert.match(await page.locator('main').innerText(), new RegExp(`ending in ${card.last4}`));
  await shot(page, 'reveal-1-ask');
  await assertAxeClean(page, 'the card reveal screen');
  await page.getByRole('button', { name: 'Show card details' }).click();
  await page.waitForLoadState();
  assert.equal(await page.title(), 'Your card details');
  const text = await page.locator('main').innerText();
  assert.match(text, new RegExp(`\\d{4} \\d{4} \\d{4} ${card.last4}`));
  assert.match(text, /CVV\s+\d{3}/);
  await shot(page, 'reveal-2-shown');
  const again = await page.goto(t.hosted_url);
  assert.notEqual(again?.status(), 200);
  await context.close();
});
