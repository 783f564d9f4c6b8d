import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

type Violation = { id: string; impact: string; count: number };

async function run(page: Page): Promise<Violation[]> {
  return page.evaluate(async (source) => {
    (0, eval)(source);
    const axe = (
      globalThis as unknown as {
        axe: {
          run(ctx: Document, o: object): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }>;
        };
      }
    ).axe;
    return (await axe.run(document, { resultTypes: ['violations'] })).violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      count: v.nodes.length,
    }));
  }, axeSource);
}

/**
 * axe-core on the page as it is shown: no critical or serious violation. The screens run no
 * script and some tests browse them with scripts off, so axe runs in a page of its own (scripts
 * on) that is given this page's HTML at this page's address (the document is answered from here,
 * so a single-use ticket is not opened twice; its stylesheets and images load from the service).
 * Evaluated through the browser's debugging protocol, which the CSP does not govern.
 */
export async function assertAxeClean(page: Page, what: string): Promise<void> {
  const url = page.url();
  const html = await page.content();
  const context = await page
    .context()
    .browser()!
    .newContext({ viewport: page.viewportSize() ?? { width: 800, height: 900 } });
  try {
    const copy = await context.newPage();
    await copy.route(url, (route) =>
      route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html }),
    );
    await copy.goto(url);
    const violations = await run(copy);
    assert.deepEqual(
      violations.filter((v) => v.impact === 'critical' || v.impact === 'serious'),
      [],
      `${what}: axe`,
    );
  } finally {
    await context.close();
  }
}
