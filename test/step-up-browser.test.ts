import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StepUpRequiredError, type MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { closeBrowser, launchBrowser } from './support/browser.js';
import { admin, useTestService } from './support/service.js';
import { assertAxeClean } from './support/axe.js';

/**
 * A member completes a step-up challenge in headless Chromium (docs/step-up.md): the hosted page
 * at `hosted_url` (Chromium resolves `*.localhost` to this machine), one wrong code (the error
 * next to the field), then the code the notifier simulator delivered; the merchant's repeated
 * withdrawal then passes. Screenshots go to the temporary directory (STEP_UP_SCREENSHOT_DIR),
 * never into the repository.
 */

const screenshotDir = process.env.STEP_UP_SCREENSHOT_DIR ?? tmpdir();

let service: RunningService;
let client: MerchantWalletClient;
let merchantId: string;
useTestService({}, (s) => ({ service, client, merchantId } = s));

test('a member completes step-up on the hosted page, then the withdrawal passes', { timeout: 120_000 }, async (t) => {
  await admin(service, 'PUT', `/admin/v1/merchants/${merchantId}/step-up-thresholds`, {
    environment: 'sandbox',
    action: 'withdrawal.create',
    asset: 'USDT',
    amount: '50',
  });
  const member = await client.members.create({ external_member_id: `b-${randomUUID().slice(0, 8)}` });
  await client.deposits.create({ member_id: member.id, asset: 'USDT', amount: '500', tx_hash: `0x${randomUUID()}` });
  const body = { asset: 'USDT', network: 'TRON', address: 'TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW', amount: '150' };

  const refusal = await client.withdrawals.create(body, { onBehalfOf: member.id }).then(
    () => assert.fail('expected step_up_required'),
    (err: unknown) => err,
  );
  assert.ok(refusal instanceof StepUpRequiredError, String(refusal));
  const messages = await admin(service, 'GET', `/admin/v1/notifier/messages?member_id=${member.id}`);
  const code: string = messages.body.data.find((m: any) => m.reference === refusal.challengeId).code;

  const browser = await launchBrowser();
  t.after(() => closeBrowser(browser));
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const response = await page.goto(refusal.hostedUrl);
  assert.equal(response?.status(), 200);
  assert.equal(await page.locator('h1').textContent(), 'Confirm your withdrawal');
  const field = page.getByLabel('Code');
  assert.equal(await field.getAttribute('autocomplete'), 'one-time-code');
  await page.screenshot({ path: join(screenshotDir, 'step-up.png'), fullPage: true });
  await assertAxeClean(page, 'the step-up screen');

  await field.fill(code === '111111' ? '222222' : '111111');
  // Wait for the form's answer itself: waitForLoadState alone can look at the page before the POST navigates.
  const refused = page.waitForResponse((r) => r.request().method() === 'POST');
  await page.getByRole('button', { name: 'Confirm' }).click();
  await refused;
  await page.locator('.field-error').waitFor();
  assert.match(
    (await page.locator('.field-error').textContent()) ?? '',
    /That code is not correct\. You have 4 attempts left\./,
  );
  assert.equal(await page.getByLabel('Code').getAttribute('aria-invalid'), 'true');
  await page.screenshot({ path: join(screenshotDir, 'step-up-error.png'), fullPage: true });

  await page.getByLabel('Code').fill(code);
  const accepted = page.waitForResponse((r) => r.request().method() === 'POST');
  await page.keyboard.press('Enter');
  await accepted;
  await page.locator('h1', { hasText: 'Confirmed' }).waitFor({ timeout: 10_000 });
  assert.equal(await page.locator('h1').textContent(), 'Confirmed');
  await page.screenshot({ path: join(screenshotDir, 'step-up-done.png'), fullPage: true });
  t.diagnostic(`screenshots: ${join(screenshotDir, 'step-up.png')}, step-up-error.png, step-up-done.png`);

  const withdrawal = await refusal.repeat<any>();
  assert.equal(withdrawal.status, 'locked');
  assert.equal(withdrawal.amount, '150.000000');
});
