import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningService } from '../src/server.js';
import { startTestService } from './support/service.js';
import { testHostedScreenKey } from './support/hosted.js';
import { consoleClient } from './support/console.js';

/**
 * The first start's demo merchant gets a console owner whose credentials are printed with the API
 * key. A file of its own: the demo merchant is made only on an empty database (on PostgreSQL each
 * test file has one).
 */

test('the demo merchant made at a first start has a console owner whose printed credentials sign in', async () => {
  const printed: string[] = [];
  const original = console.log;
  console.log = (line: string) => printed.push(line);
  let demoService: RunningService | undefined;
  try {
    demoService = await startTestService({ config: { hostedScreenKey: testHostedScreenKey }, announce: true });
  } finally {
    console.log = original;
  }
  try {
    const demo = demoService.demo!;
    assert.equal(demo.console_email, 'owner@demo-merchant.test');
    assert.ok(
      printed.some(
        (l) => l.includes(demo.console_email!) && l.includes(demo.console_password!) && l.includes('/console'),
      ),
      'printed with the API key',
    );
    const jar = consoleClient(demoService);
    const signIn = await jar.submit('/console/sign-in', {
      email: demo.console_email!,
      password: demo.console_password!,
    });
    assert.equal(signIn.status, 303);
    const page = await jar.request('GET', '/console/sandbox/keys');
    assert.equal(page.status, 200);
    assert.match(page.body, new RegExp(demo.client_id));
    assert.match(page.body, /Demo merchant/);
  } finally {
    await demoService.close();
  }
});
