import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { BrowserContext } from 'playwright-core';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { contrastRatio, sniffImage, textOn } from '../src/modules/hosted-screens/branding.js';
import { useBrowser } from './support/browser.js';
import { getHostedPage, pngBytes, testHostedScreenKey } from './support/hosted.js';
import { createMerchant, useTestService, keyClient } from './support/service.js';
import { signedInConsole, type ConsoleBrowser } from './support/console.js';

/**
 * Merchant branding (issue 42, point 5): set in the console (name, PNG logo, accent), shown on
 * the merchant's hosted screens and on no other merchant's; the logo upload's refusals; axe on
 * the branded screen.
 */

const browser = useBrowser();
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
let service: RunningService;
let merchantA: string;
let clientA: MerchantWalletClient;
let clientB: MerchantWalletClient;
let owner: ConsoleBrowser;

useTestService({ config: { hostedScreenKey: testHostedScreenKey }, merchant: false }, (s) => ({ service } = s));
before(async () => {
  merchantA = await createMerchant(service, 'Kopi Corner Pte Ltd');
  clientA = await keyClient(service, merchantA);
  clientB = await keyClient(service, await createMerchant(service, 'Teh Tarik Trading Ltd'));
  ({ jar: owner } = await signedInConsole(service, merchantA, 'brand-owner@kopi.example', 'owner'));
});

async function context(opts: { bypassCSP?: boolean; cookies?: boolean } = {}): Promise<BrowserContext> {
  const c = await (
    await browser()
  ).newContext({ viewport: { width: 900, height: 900 }, bypassCSP: opts.bypassCSP ?? false });
  if (opts.cookies) {
    const host = new URL(service.publicUrl).hostname;
    await c.addCookies([...owner.cookies].map(([name, value]) => ({ name, value, domain: host, path: '/console' })));
  }
  return c;
}

/** A multipart post of the branding form, as a browser sends it (fetch, with the owner's cookies). */
async function postBranding(fields: Record<string, string>, logo?: { bytes: Buffer; name: string; type: string }) {
  const form = new FormData();
  form.set('csrf_token', await owner.csrfOf('/console/sandbox/branding'));
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  if (logo) form.set('logo', new Blob([new Uint8Array(logo.bytes)], { type: logo.type }), logo.name);
  const res = await fetch(`${service.publicUrl}/console/sandbox/branding`, {
    method: 'POST',
    body: form,
    headers: { cookie: [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
  });
  return { status: res.status, body: await res.text() };
}

test('text on the accent: white or black, whichever reaches WCAG AA', () => {
  for (const accent of ['#000000', '#ffffff', '#fde047', '#1d4ed8', '#777777', '#808080', '#ff0000', '#00ff00']) {
    assert.ok(contrastRatio(accent, textOn(accent)) >= 4.5, accent);
  }
  assert.equal(textOn('#fde047'), '#000000');
  assert.equal(textOn('#1d4ed8'), '#ffffff');
  assert.equal(sniffImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"></svg>')), undefined);
  assert.equal(sniffImage(Buffer.from('RIFF\0\0\0\0WEBPVP8 ')), 'image/webp');
});

test(
  'the logo upload: too large, not an image, SVG, a bad colour are refused with a message; ' + 'nothing is saved',
  async () => {
    const big = Buffer.concat([pngBytes, Buffer.alloc(256 * 1024)]);
    const tooBig = await postBranding(
      { display_name: 'X', accent: '' },
      { bytes: big, name: 'big.png', type: 'image/png' },
    );
    assert.equal(tooBig.status, 400);
    assert.match(tooBig.body, /The logo is larger than 256 KB/);
    const text = await postBranding(
      { display_name: 'X', accent: '' },
      { bytes: Buffer.from('just text, named like a picture'), name: 'logo.png', type: 'image/png' },
    );
    assert.equal(text.status, 400);
    assert.match(text.body, /not a PNG, JPEG or WebP image/);
    const svg = await postBranding(
      { display_name: 'X', accent: '' },
      {
        bytes: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
        name: 'logo.svg',
        type: 'image/svg+xml',
      },
    );
    assert.equal(svg.status, 400);
    assert.match(svg.body, /SVG is not accepted/);
    const colour = await postBranding({ display_name: 'X', accent: 'red; } body { display: none' });
    assert.equal(colour.status, 400);
    assert.match(colour.body, /#rrggbb/);
    // Without the form's CSRF field: refused like every console form.
    const form = new FormData();
    form.set('display_name', 'Forged');
    const forged = await fetch(`${service.publicUrl}/console/sandbox/branding`, {
      method: 'POST',
      body: form,
      headers: { cookie: [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    assert.equal(forged.status, 403);
    assert.equal(
      await service.ctx.db.selectFrom('merchant_branding').select('merchant_id').executeTakeFirst(),
      undefined,
    );
    // Not an owner: refused on the server.
    const { jar: dev } = await signedInConsole(service, merchantA, 'brand-dev@kopi.example', 'developer');
    assert.equal((await dev.request('GET', '/console/sandbox/branding')).status, 403);
    assert.equal((await dev.submit('/console/sandbox/branding/logo/remove', {}, '/console/sandbox')).status, 403);
  },
);

test(
  "set in the console, shown on the merchant's KYC screen (name, logo, accent, axe clean); another merchant's " +
    'screen shows its own name, no logo',
  async () => {
    const consoleCtx = await context({ cookies: true });
    try {
      const page = await consoleCtx.newPage();
      await page.goto(`${service.publicUrl}/console/sandbox/branding`);
      await page.getByLabel('Display name').fill('Kopi Corner');
      await page.getByLabel('Accent colour').fill('#FDE047');
      await page.getByLabel(/^Logo/).setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: pngBytes });
      await page.getByRole('button', { name: 'Save branding' }).click();
      await page.waitForLoadState();
      assert.match(await page.locator('main').innerText(), /Branding saved/);
      assert.ok(
        await page.locator('#branding-logo').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0),
      );
    } finally {
      await consoleCtx.close();
    }
    const audit = await service.ctx.db
      .selectFrom('console_audit')
      .select(['action', 'environment'])
      .where('merchant_id', '=', merchantA)
      .where('action', '=', 'branding.update')
      .execute();
    assert.equal(audit.length, 2, 'audited in both environments');

    const member = await clientA.members.create({ external_member_id: 'brand-1' });
    const ticket = await clientA.kyc.createSession({ onBehalfOf: member.id });
    const hosted = await context();
    try {
      const page = await hosted.newPage();
      assert.equal((await page.goto(ticket.hosted_url))?.status(), 200);
      assert.equal(await page.locator('.merchant strong').innerText(), 'Kopi Corner');
      assert.ok(
        await page.locator('.merchant-logo').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0),
        'the logo loads under the page CSP',
      );
      const button = await page
        .getByRole('button', { name: 'Send for review' })
        .evaluate((b) => [getComputedStyle(b).backgroundColor, getComputedStyle(b).color]);
      assert.deepEqual(button, ['rgb(253, 224, 71)', 'rgb(0, 0, 0)'], 'the accent, with readable text');
    } finally {
      await hosted.close();
    }
    // The logo as served: the sniffed type, nosniff, cached with an ETag.
    const logoUrl = `${service.publicUrl}/hosted/branding/${merchantA}/logo`;
    const logo = await fetch(logoUrl);
    assert.equal(logo.headers.get('content-type'), 'image/png');
    assert.equal(logo.headers.get('x-content-type-options'), 'nosniff');
    assert.match(logo.headers.get('cache-control') ?? '', /max-age=/);
    assert.deepEqual(Buffer.from(await logo.arrayBuffer()), pngBytes);
    assert.equal((await fetch(logoUrl, { headers: { 'if-none-match': logo.headers.get('etag')! } })).status, 304);

    const axeCtx = await context({ bypassCSP: true });
    try {
      const page = await axeCtx.newPage();
      await page.goto(ticket.hosted_url);
      await page.addScriptTag({ content: axeSource });
      const violations = await page.evaluate(async () => {
        const axe = (
          globalThis as unknown as {
            axe: { run(ctx: Document, o: object): Promise<{ violations: { id: string; impact: string }[] }> };
          }
        ).axe;
        return (await axe.run(document, { resultTypes: ['violations'] })).violations.map(
          (v) => `${v.id} (${v.impact})`,
        );
      });
      assert.deepEqual(
        violations.filter((v) => /critical|serious/.test(v)),
        [],
      );
    } finally {
      await axeCtx.close();
    }

    const other = await clientB.members.create({ external_member_id: 'brand-2' });
    const otherTicket = await clientB.kyc.createSession({ onBehalfOf: other.id });
    const page = (await getHostedPage(service, otherTicket.hosted_url)).text;
    assert.match(page, /for <strong>Teh Tarik Trading Ltd<\/strong>/);
    assert.doesNotMatch(page, /merchant-logo|accent\.css|Kopi/);

    // Removed: the screen names the merchant without a logo; the logo is no longer served.
    const removed = await owner.submit('/console/sandbox/branding/logo/remove', {}, '/console/sandbox/branding');
    assert.equal(removed.status, 200);
    assert.equal((await fetch(logoUrl)).status, 404);
    const again = (await getHostedPage(service, ticket.hosted_url)).text;
    assert.match(again, /for <strong>Kopi Corner<\/strong>/);
    assert.doesNotMatch(again, /merchant-logo/);
  },
);
