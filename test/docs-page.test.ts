import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useBrowser } from './support/browser.js';
import type { RunningService } from '../src/server.js';
import { useTestService } from './support/service.js';

/**
 * GET /docs in a real browser: the reference renders from /v1/openapi.json and the page fetches
 * nothing from any host but ours. The browser comes with `npm ci` (see support/browser.ts); when
 * none can be started the test fails rather than skips, so a run without a browser cannot pass unseen.
 */

const screenshotPath = process.env.DOCS_SCREENSHOT ?? join(tmpdir(), 'docs.png');

/** A URL that needs no other host: ours, or one that never touches the network. */
function staysLocal(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  if (protocol === 'data:' || protocol === 'blob:' || protocol === 'about:') return true;
  return ['http:', 'https:', 'ws:', 'wss:'].includes(protocol) && hostname === '127.0.0.1';
}

// One service and one browser for the file's tests.
let service: RunningService;
useTestService({ merchant: false }, (s) => ({ service } = s));
const browser = useBrowser();

test('GET /docs renders the API reference from our own server only', { timeout: 120_000 }, async (t) => {
  const context = await (await browser()).newContext({ viewport: { width: 1400, height: 1000 } });
  t.after(() => context.close());
  const page = await context.newPage();

  // Every request the page makes: Playwright's view, and the browser's own (which also sees favicon fetches).
  const requested: string[] = [];
  page.on('request', (req) => requested.push(req.url()));
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  cdp.on('Network.requestWillBeSent', (event) => requested.push(event.request.url));
  // Nothing may leave the machine; a stray request fails fast instead of waiting on a timeout.
  await context.route('**/*', (route) =>
    staysLocal(route.request().url()) ? route.continue() : route.abort('blockedbyclient'),
  );
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
  const doc = (await (await fetch(`${service.publicUrl}/v1/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { summary?: string }>>;
  };
  const missing: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!text.includes(op.summary ?? path)) missing.push(`${method.toUpperCase()} ${path}`);
    }
  }
  assert.deepEqual(missing, [], 'operations not listed on the page');

  // A picture for a person to look at, not an assertion: the page of ~300 operations can keep a
  // busy machine's renderer past any sensible wait (a CI run timed out at 30 s), so it is best effort.
  await page.screenshot({ path: screenshotPath, timeout: 10_000 }).then(
    () => t.diagnostic(`screenshot: ${screenshotPath}`),
    (err: Error) => t.diagnostic(`no screenshot: ${err.message.split('\n')[0]}`),
  );

  assert.ok(
    requested.some((u) => u.endsWith('/docs/assets/scalar.js')),
    'the bundle comes from our server',
  );
  assert.ok(
    requested.some((u) => u.endsWith('/v1/openapi.json')),
    'the page reads our document',
  );
  assert.deepEqual([...new Set(requested.filter((u) => !staysLocal(u)))], [], 'requests to other hosts');
  assert.deepEqual(problems, [], 'errors in the page');
});

test('GET /docs/assets/scalar.js serves the bundle from node_modules', async () => {
  const res = await fetch(`${service.publicUrl}/docs/assets/scalar.js`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /javascript/);
  const body = await res.text();
  assert.ok(body.length > 100_000 && body.includes('createApiReference'));
});
