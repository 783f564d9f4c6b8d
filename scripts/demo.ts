/**
 * `npm run demo`: a merchant's day through the SDK. Starts the service on a temporary embedded
 * database, or uses a running one when DEMO_BASE_URL and DEMO_CREDENTIALS (path to a
 * demo-credentials.json) are set.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MerchantWalletClient, verifyWebhookSignature } from '@merchant-wallet/sdk';
import { startService, type RunningService } from '../src/server.js';
import { crc16 } from '../src/modules/qrpay/index.js';

/** An EMVCo merchant-presented PayNow QR string, as a shop's sticker would carry. */
function payNowQr(amount: string): string {
  const tlv = (id: string, value: string) => `${id}${String(value.length).padStart(2, '0')}${value}`;
  const account = tlv('00', 'SG.PAYNOW') + tlv('01', '2') + tlv('02', '201403121W') + tlv('03', '1');
  const body =
    tlv('00', '01') +
    tlv('01', '12') +
    tlv('26', account) +
    tlv('52', '5812') +
    tlv('53', '702') +
    tlv('54', amount) +
    tlv('58', 'SG') +
    tlv('59', 'KOPI CORNER') +
    tlv('60', 'Singapore') +
    '6304';
  return body + crc16(body);
}

const step = (title: string) => console.log(`\n\x1b[1m▸ ${title}\x1b[0m`);
/** Steps left out, with why: said where they would have run and again at the end. */
const skipped: string[] = [];
function skip(what: string, why: string): void {
  skipped.push(`${what}: ${why}`);
  console.log(`  skipped: ${what}. ${why}`);
}
/** Against your own server the demo has no operator token: it cannot raise a member's KYC level (operator API). */
const noOperator =
  'It needs the member at KYC level 1, which only the operator grants (POST ' +
  '/admin/v1/members/{id}/kyc-review); run `npm run demo` without DEMO_BASE_URL to see it on a temporary ' +
  'service.';
const show = (value: unknown) => console.log(JSON.stringify(value, null, 2).replace(/^/gm, '  '));

let service: RunningService | undefined;
let baseUrl = process.env.DEMO_BASE_URL;
let creds: { client_id: string; api_key: string; signing_key: string };
if (baseUrl && process.env.DEMO_CREDENTIALS) {
  creds = JSON.parse(readFileSync(process.env.DEMO_CREDENTIALS, 'utf8'));
} else {
  step('Starting the service on a temporary embedded database');
  service = await startService({
    logger: false,
    config: {
      port: 0,
      adminPort: 0,
      databaseUrl: 'memory://',
      dataDir: mkdtempSync(join(tmpdir(), 'mwa-demo-')),
      jobPollIntervalMs: 50,
      simulatorConfirmDelayMs: 500,
      upstreamReconcileDelayMs: 500,
    },
  });
  creds = service.demo!;
  baseUrl = `http://api-sandbox.localhost:${new URL(service.publicUrl).port}`;
  console.log(`  public API ${service.publicUrl} (sandbox host ${baseUrl}), operator API ${service.adminUrl}`);
}

const client = new MerchantWalletClient({
  baseUrl,
  connectHost: '127.0.0.1',
  clientId: creds.client_id,
  apiKey: creds.api_key,
  signingKey: creds.signing_key,
});

let endpointId: string | undefined;
try {
  step('Exchange the API key for an access token');
  await client.getToken();
  const info = client.tokenInfo()!;
  show({
    token_type: info.token_type,
    expired_at: new Date(info.expired_at * 1000).toISOString(),
    scopes: info.scopes.length + ' scopes',
  });

  step('Subscribe a webhook endpoint (a local receiver that checks every signature)');
  const received: string[] = [];
  let secret = '';
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const ok = verifyWebhookSignature({ secret, headers: req.headers as Record<string, string>, body });
      received.push(`${JSON.parse(body).event_type} (signature ${ok ? 'valid' : 'INVALID'})`);
      res.writeHead(ok ? 200 : 400).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const port = (receiver.address() as { port: number }).port;
  const endpoint = (await client.webhooks.createEndpoint({
    url: `http://127.0.0.1:${port}/hooks`,
    event_types: ['*'],
  })) as any;
  endpointId = endpoint.id;
  secret = endpoint.secret;
  show({ id: endpoint.id, url: endpoint.url, event_types: endpoint.event_types });

  const external = `alice-${Date.now()}`;
  step(`Create a member (${external})`);
  show(await client.members.create({ external_member_id: external }));

  step('Report a deposit of 250 USDT (always signed)');
  show(
    await client.deposits.create({
      member_id: external,
      asset: 'USDT',
      network: 'TRON',
      amount: '250',
      tx_hash: `0x${Date.now().toString(16)}`,
    }),
  );

  step("The member's balances");
  show(await client.balances.list({ onBehalfOf: external }));

  step('Withdraw 100 USDT on TRON for the member (amount + network fee are locked)');
  const w = (await client.withdrawals.create(
    { asset: 'USDT', network: 'TRON', address: 'TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW', amount: '100' },
    { onBehalfOf: external },
  )) as any;
  show(w);
  show(await client.balances.list({ onBehalfOf: external }));

  step('The merchant paid out on chain: confirm the withdrawal');
  show(await client.withdrawals.confirm(w.id));
  step('Confirming again replays; it never posts twice');
  show(await client.withdrawals.confirm(w.id));

  step("Balances now: the member's, then the merchant's custody");
  show(await client.balances.list({ onBehalfOf: external }));
  show(await client.merchant.balances());

  step('The member pays a PayNow QR code of 12.50 SGD (frozen first, settled when the provider confirms)');
  await client.deposits.create({ member_id: external, asset: 'SGD', amount: '50', tx_hash: `bank-${Date.now()}` });
  const qr = payNowQr('12.50');
  show(await client.request({ method: 'POST', path: '/v1/qrpay/decode', body: { qr_code: qr }, onBehalfOf: external }));
  let payment = await client.request<any>({
    method: 'POST',
    path: '/v1/qrpay/payments',
    body: { qr_code: qr, asset: 'SGD' },
    onBehalfOf: external,
  });
  show({ id: payment.id, status: payment.status, amount: payment.amount, merchant_name: payment.merchant_name });
  for (let i = 0; i < 50 && payment.status === 'processing'; i++) {
    await new Promise((r) => setTimeout(r, 200));
    payment = await client.request<any>({
      method: 'GET',
      path: `/v1/qrpay/payments/${payment.id}`,
      onBehalfOf: external,
    });
  }
  show({ id: payment.id, status: payment.status, status_version: payment.status_version });
  show((await client.balances.list({ onBehalfOf: external })).filter((b: any) => b.asset === 'SGD'));

  step(
    service
      ? 'Remittance: the payee form for a German IBAN, a payee, a name check, settlement dates, then 20 USDT to EUR'
      : 'Remittance: the payee form for a German IBAN, a payee, a name check, settlement dates (the transfer ' +
          'itself is skipped, see below)',
  );
  const form = await client.remittance.formSchema({
    country_code: 'DE',
    currency: 'EUR',
    payment_method: 'LOCAL',
    clearing_system: 'SEPA',
    entity_type: 'INDIVIDUAL',
  });
  show(
    form.fields.map(
      (f) => `${f.key}${f.required ? ' (required)' : ''}: ${f.type}${f.refresh_on_change ? ', refresh on change' : ''}`,
    ),
  );
  const payee = await client.remittance.createPayee(
    {
      country: 'DE',
      currency: 'EUR',
      method: 'LOCAL',
      clearing: 'SEPA',
      entity: 'INDIVIDUAL',
      nickname: 'Max',
      fields: {
        first_name: 'Max',
        last_name: 'Musterman',
        'bank_details.iban': 'de89 3704 0044 0532 0130 00',
        'address.country': 'DE',
        'address.city': 'Köln',
        'address.street_address': 'Heidestr. 17',
        'address.postal_code': '51147',
      },
    },
    { onBehalfOf: external },
  );
  show(payee);
  show(await client.remittance.verifyPayee(payee.id, { onBehalfOf: external }));
  show(await client.remittance.conversionDates({ currency: 'EUR' }));
  if (service) {
    // The member needs KYC level 1 for remittances: the operator's review (locally only).
    const memberId = (await client.members.get(external)).id;
    await fetch(`${service.adminUrl}/admin/v1/members/${memberId}/kyc-review`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approved', level: 1 }),
    });
    let remit = await client.remittance.create(
      { payee_id: payee.id, source_asset: 'USDT', source_amount: '20' },
      { onBehalfOf: external },
    );
    show(remit);
    for (let i = 0; i < 50 && (remit.status === 'pending' || remit.status === 'processing'); i++) {
      await new Promise((r) => setTimeout(r, 200));
      remit = await client.remittance.get(remit.id, { onBehalfOf: external });
    }
    show({ id: remit.id, status: remit.status, status_version: remit.status_version, payout_date: remit.payout_date });
    show((await client.balances.list({ onBehalfOf: external })).filter((b: any) => b.asset === 'USDT'));
  } else {
    skip('the remittance of 20 USDT to EUR', noOperator);
  }

  if (!service) {
    skip('exchange (a locked quote of 50 USDT to BTC, executed)', noOperator);
    skip(
      'cards (a virtual card, a top-up, a simulated purchase and a declined one)',
      `${noOperator} The card steps also use the sandbox helpers of extensions 8.`,
    );
  }
  if (service) {
    step(
      'Exchange: a locked quote of 50 USDT to BTC (an order in state quoted), then its execution at the quoted numbers',
    );
    const quote = await client.exchange.quote(
      { from_asset: 'usdt', to_asset: 'btc', from_amount: '50', lock: true },
      { onBehalfOf: external },
    );
    show(quote);
    show(await client.exchange.get(quote.quote_id!, { onBehalfOf: external }));
    const order = await client.exchange.execute({ quote_id: quote.quote_id! }, { onBehalfOf: external });
    show(order);
    show(
      (await client.balances.list({ onBehalfOf: external })).filter(
        (b: any) => b.asset === 'USDT' || b.asset === 'BTC',
      ),
    );
  }

  if (service) {
    step('Cards: a virtual card (opening fee frozen, then charged), a quote and a top-up of 25 USDT, then a purchase');
    const virtual = (await client.cards.products()).find((p) => p.form_factor === 'virtual')!;
    const application = await client.cards.apply(
      { product_id: virtual.id, source_asset: 'USDT' },
      { onBehalfOf: external },
    );
    const cardId = (await client.cards.sandboxAdvanceApplication(application.id, 'approved')).card_id!;
    show(await client.cards.get(cardId, { onBehalfOf: external }));
    show(await client.cards.quoteTopUp(cardId, { amount: '25', source_asset: 'USDT' }, { onBehalfOf: external }));
    let topUp = await client.cards.topUp(cardId, { amount: '25', source_asset: 'USDT' }, { onBehalfOf: external });
    show(topUp);
    for (let i = 0; i < 50 && (topUp.status === 'pending' || topUp.status === 'processing'); i++) {
      await new Promise((r) => setTimeout(r, 200));
      topUp = await client.cards.getTopUp(cardId, topUp.id, { onBehalfOf: external });
    }
    show({
      id: topUp.id,
      status: topUp.status,
      status_version: topUp.status_version,
      arrival_amount: topUp.arrival_amount,
    });
    step('A simulated purchase: the card network authorises 7.80 USD at a coffee shop, then clears it');
    const purchase = await client.cards.sandboxAuthorize(cardId, {
      amount: '7.80',
      merchant_name: 'Kopi Corner',
      mcc: '5814',
    });
    show(purchase);
    show(await client.cards.sandboxClear(cardId, { transaction_id: purchase.transaction_id }));
    step('A blocked merchant category is declined with its reason');
    await client.cards.setMerchantRules(cardId, { rule_type: 'black', mcc_list: ['7995'] }, { onBehalfOf: external });
    show(await client.cards.sandboxAuthorize(cardId, { amount: '5', merchant_name: 'Lucky Casino', mcc: '7995' }));
    const transactions: unknown[] = [];
    for await (const t of client.cards.listTransactions(cardId, { onBehalfOf: external })) transactions.push(t);
    show(transactions);
    show(
      (await client.balances.list({ onBehalfOf: external })).filter(
        (b: any) => b.asset === 'USDT' || b.asset === 'USD',
      ),
    );
  }

  step('Webhook delivery log');
  const deadline = Date.now() + 5000;
  while (received.length < 10 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const deliveries: any[] = [];
  for await (const d of client.webhooks.deliveries({})) deliveries.push(d);
  show(
    deliveries.map((d) => ({
      id: d.id,
      event_type: d.event_type,
      status: d.status,
      attempts: d.attempts,
      last_http_status: d.last_http_status,
    })),
  );
  console.log('  received by the endpoint:');
  for (const r of received) console.log(`    ${r}`);
  receiver.close();

  step('Clean up: delete the webhook endpoint (its receiver is closed)');
  show(await client.webhooks.deleteEndpoint(endpoint.id));
  endpointId = undefined;
  if (skipped.length) {
    step('Skipped');
    for (const s of skipped) console.log(`  - ${s}`);
  }
} finally {
  // A failed run also removes its endpoint: none is left enabled toward a receiver that is gone.
  if (endpointId)
    await client.webhooks
      .deleteEndpoint(endpointId)
      .catch((err: unknown) => console.log(`  could not delete webhook endpoint ${endpointId}: ${String(err)}`));
  client.close();
  await service?.close();
}
