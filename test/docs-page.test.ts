import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startTestService } from './support/service.js';

/**
 * GET /docs in a real browser: the reference renders from /v1/openapi.json and the page fetches
 * nothing from any host but ours. Needs Debian's chromium (`apt-get install -y chromium`); without
 * it the test fails rather than skips, so a CI run without a browser cannot pass unseen.
 */

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const screenshotPath = process.env.DOCS_SCREENSHOT ?? join(tmpdir(), 'docs.png');

/** A URL that needs no other host: ours, or one that never touches the network. */
function staysLocal(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  if (protocol === 'data:' || protocol === 'blob:' || protocol === 'about:') return true;
  return ['http:', 'https:', 'ws:', 'wss:'].includes(protocol) && hostname === '127.0.0.1';
}

test('GET /docs renders the API reference from our own server only', { timeout: 120_000 }, async (t) => {
  assert.ok(
    existsSync(chromiumPath),
    `headless Chromium not found at ${chromiumPath}: install it with "apt-get update && apt-get install -y chromium" (or set CHROMIUM_PATH)`,
  );
  const service = await startTestService();
  t.after(() => service.close());
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  t.after(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();

  // Every request the page makes: Playwright's view, and the browser's own (which also sees favicon fetches).
  const requested: string[] = [];
  page.on('request', (req) => requested.push(req.url()));
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  cdp.on('Network.requestWillBeSent', (event) => requested.push(event.request.url));
  // Nothing may leave the machine; a stray request fails fast instead of waiting on a timeout.
  await context.route('**/*', (route) => (staysLocal(route.request().url()) ? route.continue() : route.abort('blockedbyclient')));
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));

  const response = await page.goto(`${service.publicUrl}/docs`);
  assert.equal(response?.status(), 200);
  assert.match(response!.headers()['content-type'] ?? '', /^text\/html/);
  assert.match(response!.headers()['content-security-policy'] ?? '', /default-src 'none'/);

  await page.waitForFunction(() => document.body.innerText.includes('/v1/connect/token'), null, { timeout: 60_000 });
  assert.equal(await page.title(), 'Merchant Wallet API reference');
  const text = await page.evaluate(() => document.body.innerText);
  assert.ok(text.includes('Merchant Wallet API'));

  // Every operation of the document is listed (the sidebar names each by its summary, or its path).
  const doc = (await (await fetch(`${service.publicUrl}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { summary?: string }>> };
  const missing: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!text.includes(op.summary ?? path)) missing.push(`${method.toUpperCase()} ${path}`);
    }
  }
  assert.deepEqual(missing, [], 'operations not listed on the page');

  await page.screenshot({ path: screenshotPath });
  t.diagnostic(`screenshot: ${screenshotPath}`);

  assert.ok(requested.some((u) => u.endsWith('/docs/assets/scalar.js')), 'the bundle comes from our server');
  assert.ok(requested.some((u) => u.endsWith('/v1/openapi.json')), 'the page reads our document');
  assert.deepEqual([...new Set(requested.filter((u) => !staysLocal(u)))], [], 'requests to other hosts');
  assert.deepEqual(problems, [], 'errors in the page');
});

test('GET /docs/assets/scalar.js serves the bundle from node_modules', async (t) => {
  const service = await startTestService();
  t.after(() => service.close());
  const res = await fetch(`${service.publicUrl}/docs/assets/scalar.js`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /javascript/);
  const body = await res.text();
  assert.ok(body.length > 100_000 && body.includes('createApiReference'));
});
