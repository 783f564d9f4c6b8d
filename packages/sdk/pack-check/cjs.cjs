// Run by scripts/check-package.sh in a scratch project where the packed SDK is installed: the
// package as a user's CommonJS module gets it (require), against a running server.
const assert = require('node:assert/strict');
const { randomBytes, randomUUID } = require('node:crypto');
const sdk = require('@merchant-wallet/sdk');
const { MerchantWalletClient, MerchantWalletError, MerchantWalletNotFoundError, signWebhook, webhooks } = sdk;

const resolved = require.resolve('@merchant-wallet/sdk');
assert.match(resolved, /\/node_modules\/@merchant-wallet\/sdk\/dist\/cjs\/index\.cjs$/, `resolved to ${resolved}`);

async function main() {
  const client = new MerchantWalletClient({
    baseUrl: process.env.MW_BASE_URL,
    connectHost: process.env.MW_CONNECT_HOST,
    clientId: process.env.MW_CLIENT_ID,
    apiKey: process.env.MW_API_KEY,
    signingKey: process.env.MW_SIGNING_KEY,
  });
  try {
    assert.ok((await client.getToken()).length > 0);
    const externalId = `cjs-${randomUUID().slice(0, 8)}`;
    const member = await client.members.create({ external_member_id: externalId });
    assert.equal(member.external_member_id, externalId);
    const deposit = await client.deposits.create({ member_id: externalId, asset: 'USDT', network: 'TRON', amount: '25.5', tx_hash: `0x${randomUUID().replace(/-/g, '')}` });
    assert.equal(deposit.status, 'credited');
    const usdt = (await client.balances.list({ onBehalfOf: externalId })).find((b) => b.asset === 'USDT');
    assert.match(usdt ? usdt.available : '', /^25\.50*$/);
    await assert.rejects(client.members.get(`nobody-${randomUUID().slice(0, 8)}`), (e) => e instanceof MerchantWalletNotFoundError && e instanceof MerchantWalletError && e.status === 404);

    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const body = JSON.stringify({ event_id: 'evt_2', event_type: 'qrpay.order.failed', created_at: new Date().toISOString(), merchant_id: 'm', livemode: false, data: { object: 'qrpay_order', id: 'qrp_2', external_member_id: externalId, status: 'failed', status_version: 1 } });
    const stale = Math.floor(Date.now() / 1000) - 600;
    const headers = { 'webhook-id': 'evt_2', 'webhook-timestamp': String(stale), 'webhook-signature': signWebhook({ secret, id: 'evt_2', timestamp: stale, body }) };
    assert.throws(() => webhooks.constructEvent(body, headers, secret), { code: 'webhook_timestamp_out_of_range' });
    assert.equal(webhooks.constructEvent(body, headers, secret, { toleranceSeconds: 900 }).event_type, 'qrpay.order.failed');
    console.log(`cjs: ok (member ${member.id}, deposit ${deposit.id}, USDT available ${usdt.available})`);
  } finally {
    client.close();
  }
}
main().catch((err) => {
  console.error(err);
  process.exit(1);
});
