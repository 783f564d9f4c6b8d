import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { admin, newMerchantClient, useTestService } from './support/service.js';
import { getHostedPage, jpegBytes, pngBytes, postHostedPage, testHostedScreenKey } from './support/hosted.js';
import { shipping } from './support/fixtures.js';

/**
 * Hosted-screen tickets through HTTP, the cases that cross areas (docs/hosted-screens.md): what a
 * ticket is bound to beyond its member, and what voids it.
 */

let service: RunningService;
let client: MerchantWalletClient;

useTestService(
  { config: { hostedScreenKey: testHostedScreenKey, simulatorConfirmDelayMs: 0 } },
  (s) => ({ service, client } = s),
);

/** A member at KYC level 1 with 100 USDT and a physical-card application waiting for documents. */
async function applicationNeedingDocs() {
  const external = `h-${randomUUID().slice(0, 8)}`;
  const m = await client.members.create({ external_member_id: external });
  await admin(service, 'POST', `/admin/v1/members/${m.id}/kyc-review`, { decision: 'approved', level: 1 });
  await client.deposits.create({ member_id: external, asset: 'USDT', amount: '100', tx_hash: `t-${randomUUID()}` });
  const physical = (await client.cards.products()).find((p) => p.form_factor === 'physical')!;
  const app = await client.cards.apply(
    { product_id: physical.id, source_asset: 'USDT', shipping_address: shipping },
    { onBehalfOf: external },
  );
  await client.cards.sandboxAdvanceApplication(app.id, 'need_docs');
  return { external, app };
}

test(
  'a hosted screen names the merchant whose member it is for (issue 42: ' + 'not only "the app that sent you here")',
  async () => {
    const { external, app } = await applicationNeedingDocs();
    const session = await client.cards.createSupplementSession(app.id, { onBehalfOf: external });
    const page = await getHostedPage(service, session.hosted_url);
    assert.equal(page.status, 200);
    const merchant = await service.ctx.db
      .selectFrom('hosted_tickets as t')
      .innerJoin('merchants as m', 'm.id', 't.merchant_id')
      .select('m.name')
      .where('t.id', '=', session.id)
      .executeTakeFirstOrThrow();
    assert.ok(merchant.name.length > 0);
    assert.ok(
      page.text.includes(
        `<header class="merchant"><p>A secure page of this service, for ` +
          `<strong>${merchant.name.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</strong></p></header>`,
      ),
      'the merchant is named above the screen',
    );
  },
);

describe('card supplement tickets', () => {
  test(
    'a supplement ticket is bound to its work order: once that one is submitted, its other links never reach ' +
      'the next',
    async () => {
      const { external, app } = await applicationNeedingDocs();
      const first = await client.cards.createSupplementSession(app.id, { onBehalfOf: external });
      const spare = await client.cards.createSupplementSession(app.id, { onBehalfOf: external });
      // The member sends the photos through the first link (the page, as a browser).
      const page = await getHostedPage(service, first.hosted_url);
      const sent = await postHostedPage(service, first.hosted_url, {
        fields: { csrf_token: page.csrfToken! },
        cookie: page.cookie,
        files: [
          { name: 'document_image', filename: 'doc.png', type: 'image/png', data: pngBytes },
          { name: 'selfie_image', filename: 'me.jpg', type: 'image/jpeg', data: jpegBytes },
        ],
      });
      assert.equal(sent.status, 200, sent.text);
      // The issuer asks for documents again: a new work order on the same application.
      const again = await client.cards.sandboxAdvanceApplication(app.id, 'need_docs');
      assert.equal(again.supplement!.status, 'pending');
      // The spare link of the first work order is void: no page, no sandbox completion.
      assert.equal((await getHostedPage(service, spare.hosted_url)).status, 410);
      await assert.rejects(client.hostedScreens.sandboxComplete(spare.id, 'submitted'), {
        status: 400,
        code: 'state_invalid',
      });
      assert.equal((await client.cards.getApplication(app.id, { onBehalfOf: external })).supplement!.status, 'pending');
      // A link issued for the new work order works.
      const fresh = await client.cards.createSupplementSession(app.id, { onBehalfOf: external });
      await client.hostedScreens.sandboxComplete(fresh.id, 'submitted');
      assert.equal(
        (await client.cards.getApplication(app.id, { onBehalfOf: external })).supplement!.status,
        'submitted',
      );
    },
  );

  test('the sandbox submission voids the other links of the work order too', async () => {
    const { external, app } = await applicationNeedingDocs();
    const first = await client.cards.createSupplementSession(app.id, { onBehalfOf: external });
    const spare = await client.cards.createSupplementSession(app.id, { onBehalfOf: external });
    await client.hostedScreens.sandboxComplete(first.id, 'submitted');
    await client.cards.sandboxAdvanceApplication(app.id, 'need_docs');
    await assert.rejects(client.hostedScreens.sandboxComplete(spare.id, 'submitted'), {
      status: 400,
      code: 'state_invalid',
    });
  });
});

describe('hosted-screen settings', () => {
  test('origins that normalise to the same one are kept once, not refused', async () => {
    const other = await newMerchantClient(service);
    const set = await other.client.hostedScreens.putSettings({
      frame_ancestors: ['HTTPS://Shop.Example:443', 'https://shop.example', 'https://*.shop.example'],
    });
    assert.deepEqual(set.frame_ancestors, ['https://shop.example', 'https://*.shop.example']);
    assert.deepEqual((await other.client.hostedScreens.getSettings()).frame_ancestors, [
      'https://shop.example',
      'https://*.shop.example',
    ]);
  });
});
