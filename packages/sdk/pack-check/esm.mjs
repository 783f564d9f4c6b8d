// Run by scripts/check-package.sh in a scratch project where the packed SDK is installed: the
// package as a user's ES module gets it (import), against a running server.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { MerchantWalletClient, MerchantWalletError, MerchantWalletNotFoundError, signWebhook, webhooks } from '@merchant-wallet/sdk';

const resolved = import.meta.resolve('@merchant-wallet/sdk');
assert.match(resolved, /\/node_modules\/@merchant-wallet\/sdk\/dist\/esm\/index\.js$/, `resolved to ${resolved}`);

const client = new MerchantWalletClient({
  baseUrl: process.env.MW_BASE_URL,
  connectHost: process.env.MW_CONNECT_HOST,
  clientId: process.env.MW_CLIENT_ID,
  apiKey: process.env.MW_API_KEY,
  signingKey: process.env.MW_SIGNING_KEY,
});
try {
  assert.ok((await client.getToken()).length > 0);
  const externalId = `esm-${randomUUID().slice(0, 8)}`;
  const member = await client.members.create({ external_member_id: externalId });
  assert.equal(member.external_member_id, externalId);
  const deposit = await client.deposits.create({ member_id: externalId, asset: 'USDT', network: 'TRON', amount: '100', tx_hash: `0x${randomUUID().replace(/-/g, '')}` });
  assert.equal(deposit.status, 'credited');
  const usdt = (await client.balances.list({ onBehalfOf: externalId })).find((b) => b.asset === 'USDT');
  assert.match(usdt?.available ?? '', /^100(\.0+)?$/);
  await assert.rejects(client.members.get(`nobody-${randomUUID().slice(0, 8)}`), (e) => e instanceof MerchantWalletNotFoundError && e instanceof MerchantWalletError && e.status === 404);

  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const body = JSON.stringify({ event_id: 'evt_1', event_type: 'qrpay.order.completed', created_at: new Date().toISOString(), merchant_id: 'm', livemode: false, data: { object: 'qrpay_order', id: 'qrp_1', external_member_id: externalId, status: 'completed', status_version: 1 } });
  const ts = Math.floor(Date.now() / 1000);
  const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(ts), 'webhook-signature': signWebhook({ secret, id: 'evt_1', timestamp: ts, body }) };
  assert.equal(webhooks.constructEvent(body, headers, secret).event_id, 'evt_1');
  assert.throws(() => webhooks.constructEvent(body.replace('completed', 'failed'), headers, secret), { code: 'webhook_signature_mismatch' });
  console.log(`esm: ok (member ${member.id}, deposit ${deposit.id}, USDT available ${usdt.available})`);
} finally {
  client.close();
}
