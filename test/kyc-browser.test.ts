import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { closeBrowser, launchBrowser, attachPhotos } from './support/browser.js';
import { testHostedScreenKey } from './support/hosted.js';
import { assertAxeClean } from './support/axe.js';
import { useTestService } from './support/service.js';

/**
 * The KYC screens in headless Chromium, as a member uses them: the form filled and sent with two
 * image uploads (after one refused attempt), then the pre-filled profile update. Screenshots of
 * each screen go to the temporary directory (KYC_SCREENSHOTS_DIR to choose) for a person to look
 * at; none is committed.
 */

let service: RunningService;
let client: MerchantWalletClient;
let browser: Browser;
const shots = process.env.KYC_SCREENSHOTS_DIR ?? tmpdir();

useTestService({ config: { hostedScreenKey: testHostedScreenKey } }, (s) => ({ service, client } = s));
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await closeBrowser(browser);
});

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `kyc-${name}.png`), fullPage: true });
}

test('the KYC form: refused with errors next to the fields, then sent with both images', async () => {
  const m = await client.members.create({ external_member_id: 'browser-1' });
  const t = await client.kyc.createSession({ onBehalfOf: m.id });
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 800, height: 900 } });
  const page = await context.newPage();
  const res = await page.goto(t.hosted_url);
  assert.equal(res?.status(), 200);
  assert.equal(await page.title(), 'Confirm your identity');
  await shot(page, '1-form');
  await assertAxeClean(page, 'the KYC screen');

  await page.getByLabel('First name').fill('Grace');
  await page.getByLabel('Date of birth').fill('1985-12-09');
  await page.getByLabel('Nationality').selectOption('US');
  await page.getByLabel('Type of document').selectOption('passport');
  await page.getByLabel('Document number').fill('p1234567');
  await page
    .getByLabel('Photo of the document')
    .setInputFiles({ name: 'passport.txt', mimeType: 'image/png', buffer: Buffer.from('not really an image') });
  await page.getByLabel('Address line 1').fill('1 Compiler Road');
  await page.getByLabel('Town or city').fill('Arlington');
  await page.getByLabel('Postal code').fill('22201');
  await page.getByLabel('Country', { exact: true }).selectOption('US');
  await page.getByRole('button', { name: 'Send for review' }).click();
  await page.waitForLoadState();

  assert.equal(await page.title(), 'Error: Confirm your identity');
  const summary = page.getByRole('alert');
  assert.match(await summary.innerText(), /There is a problem/);
  assert.match(await summary.innerText(), /Enter your last name/);
  assert.match(await summary.innerText(), /must be a JPEG or PNG image/);
  assert.match(await summary.innerText(), /Choose a photo of your face/);
  // Each error is tied to its field; the values entered are still there.
  const lastName = page.getByLabel('Last name');
  assert.equal(await lastName.getAttribute('aria-invalid'), 'true');
  assert.equal(
    await page.locator(`#${await lastName.getAttribute('aria-describedby')}`).textContent(),
    'Error: Enter your last name',
  );
  assert.equal(await page.getByLabel('First name').inputValue(), 'Grace');
  assert.equal(await page.getByLabel('Nationality').inputValue(), 'US');
  // The summary links move to their field.
  await summary.getByRole('link', { name: 'Enter your last name' }).click();
  assert.ok(page.url().endsWith('#f-last_name'));
  await shot(page, '2-errors');

  await lastName.fill('Hopper');
  await attachPhotos(page);
  await page.getByRole('button', { name: 'Send for review' }).click();
  await page.waitForLoadState();
  assert.equal(await page.title(), 'Details sent');
  await shot(page, '3-sent');

  const member = await client.members.get(m.id);
  assert.equal(member.kyc_profile_status, 'pending_review');
  const profile = await service.ctx.db
    .selectFrom('kyc_profiles')
    .selectAll()
    .where('member_id', '=', m.id)
    .executeTakeFirstOrThrow();
  assert.deepEqual(
    [profile.first_name, profile.last_name, profile.document_number, profile.address_country],
    ['Grace', 'Hopper', 'P1234567', 'US'],
  );

  // Back to the form: the ticket is spent.
  assert.equal((await page.goto(t.hosted_url))?.status(), 410);
  await context.close();
});

test('the profile update: pre-filled, images kept, then back to review at level 0', async () => {
  const m = await client.members.create({ external_member_id: 'browser-2' });
  await client.hostedScreens.sandboxComplete((await client.kyc.createSession({ onBehalfOf: m.id })).id, 'submitted');
  await client.kyc.sandboxReview(m.id, { decision: 'approved' });
  assert.equal((await client.members.get(m.id)).kyc_level, 1);
  const before = await service.ctx.db
    .selectFrom('kyc_profiles')
    .selectAll()
    .where('member_id', '=', m.id)
    .executeTakeFirstOrThrow();

  const t = await client.kyc.createProfileSession({ onBehalfOf: m.id });
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await page.goto(t.hosted_url);
  assert.equal(await page.title(), 'Update your identity details');
  await assertAxeClean(page, 'the profile update screen');
  assert.equal(await page.getByLabel('First name').inputValue(), 'Sandbox');
  assert.equal(await page.getByLabel('Town or city').inputValue(), 'Berlin');
  assert.equal(await page.getByLabel('Nationality').inputValue(), 'DE');
  await shot(page, '4-update');

  // Keyboard only: the first field is reached with Tab and changed.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'f-first_name');
  await page.getByLabel('Town or city').fill('Hamburg');
  await page.getByLabel('Postal code').fill('20095');
  await page.getByRole('button', { name: 'Send changes for review' }).press('Enter');
  await page.waitForLoadState();
  assert.equal(await page.title(), 'Changes sent');
  await shot(page, '5-update-sent');

  const after = await service.ctx.db
    .selectFrom('kyc_profiles')
    .selectAll()
    .where('member_id', '=', m.id)
    .executeTakeFirstOrThrow();
  assert.deepEqual([after.city, after.postal_code, after.first_name], ['Hamburg', '20095', 'Sandbox']);
  assert.deepEqual(
    [after.document_image_id, after.selfie_image_id],
    [before.document_image_id, before.selfie_image_id],
    'images kept',
  );
  const member = await client.members.get(m.id);
  assert.deepEqual([member.kyc_profile_status, member.kyc_level], ['pending_review', 0]);
  await context.close();
});
