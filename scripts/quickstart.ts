/**
 * `npm run example`: the SDK example of docs/quickstart.md, against the server `npm start` runs.
 *
 * Reads the demo credentials the first start wrote (`$DATA_DIR/demo-credentials.json`, default
 * `data/`), then creates a member, reports a deposit for it and reads its balances. The member's
 * external id is new on every run, so the example works after the curl quick start and when run
 * again. `PORT` (default 8080) says where the server listens.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MerchantWalletClient } from '@merchant-wallet/sdk';

const credentialsFile = join(process.env.DATA_DIR ?? 'data', 'demo-credentials.json');
let creds: { client_id: string; api_key: string; signing_key: string };
try {
  creds = JSON.parse(readFileSync(credentialsFile, 'utf8'));
} catch {
  console.error(`${credentialsFile} not found: start the server once with \`npm start\` (same DATA_DIR) first.`);
  process.exit(1);
}

const client = new MerchantWalletClient({
  // The Host header chooses the environment; the connection goes to 127.0.0.1.
  baseUrl: `http://api-sandbox.localhost:${process.env.PORT ?? '8080'}`,
  connectHost: '127.0.0.1',
  clientId: creds.client_id,
  apiKey: creds.api_key,
  signingKey: creds.signing_key,
});

try {
  const externalId = `example-${randomUUID().slice(0, 8)}`;
  const member = await client.members.create({ external_member_id: externalId });
  console.log('member', member);

  const txHash = `0x${randomUUID().replace(/-/g, '')}`;
  const deposit = await client.deposits.create({
    member_id: externalId,
    asset: 'USDT',
    amount: '100',
    tx_hash: txHash,
  });
  console.log('deposit', deposit);

  const balances = await client.balances.list({ onBehalfOf: externalId });
  console.log('balances', balances);
} finally {
  client.close();
}
