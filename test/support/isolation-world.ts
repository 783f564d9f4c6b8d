/**
 * The world of test/isolation-audit.test.ts: merchant A with one object of every kind the public
 * API names, made through the API (sandbox, member X), the same merchant's production side, a
 * second member Y of A, and merchant B with a member of its own. The intruders then ask for A's
 * objects and must be told they do not exist.
 */
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../../src/server.js';
import { fanOut } from '../../src/modules/webhooks/fan-out.js';
import { payNow } from './emv.js';
import { admin, clientFor, createKey, createMerchant, type Credentials } from './service.js';
import { freshIban, payeeAddress, sepa, shipping } from './fixtures.js';

export interface Member {
  id: string;
  external: string;
}

/** Every object of A's sandbox member X, by the name the probes use. */
export interface Objects {
  member: Member;
  deposit: string;
  withdrawal: string;
  quote: string;
  exchangeOrder: string;
  payee: string;
  remittance: string;
  application: string;
  needDocsApplication: string;
  card: string;
  physicalCard: string;
  topup: string;
  transaction: string;
  replacement: string;
  earnOrder: string;
  position: string;
  qrPayment: string;
  endpoint: string;
  delivery: string;
  /** The event of `delivery` (`evt_…`). */
  event: string;
  depositAddress: string;
  profile: string;
  /** Unused hosted-screen tickets of X: a profile update, a card supplement, a step-up challenge. */
  profileTicket: string;
  supplementTicket: string;
  challenge: string;
  /** A's newest journal entry (`jre_…`). */
  ledgerEntry: string;
  /** A's balance monitor (`bmn_…`). */
  monitor: string;
  /** A's export of its deposits (`exp_…`), written. */
  export: string;
}

export interface Party {
  merchantId: string;
  /** A virtual card of `member` (merchant B's only). */
  card?: string;
  creds: Credentials;
  client: MerchantWalletClient;
  member: Member;
}

export interface World {
  /** A's sandbox, acting for X, with every object. */
  a: Party;
  objects: Objects;
  /** A's second sandbox member. */
  y: Member;
  /** A's production side and a production member. */
  aProd: Party;
  /** Another merchant (sandbox) and its member. */
  b: Party;
  /** The account of A's payee: the shared payee entity is the one row tenants may both reach. */
  payeeIban: string;
}

async function newMember(
  service: RunningService,
  c: MerchantWalletClient,
  prefix: string,
  kyc: 0 | 1 | 2 = 2,
): Promise<Member> {
  const external = `${prefix}-${randomUUID().slice(0, 8)}`;
  const m = await c.request<any>({ method: 'POST', path: '/v1/members', body: { external_member_id: external } });
  if (kyc > 0)
    await admin(service, 'POST', `/admin/v1/members/${m.id}/kyc-review`, { decision: 'approved', level: kyc });
  return { id: m.id, external };
}

export async function fund(c: MerchantWalletClient, m: Member, asset: string, amount: string) {
  return c.request<any>({
    method: 'POST',
    path: '/v1/deposits',
    body: { member_id: m.external, asset, amount, tx_hash: `t-${randomUUID()}` },
  });
}

export async function party(
  service: RunningService,
  environment: 'sandbox' | 'production',
  merchantId?: string,
): Promise<Party> {
  merchantId ??= await createMerchant(service);
  const creds = await createKey(service, merchantId, { environment });
  if (creds.pendingScopes.length) {
    const approved = await admin(service, 'POST', `/admin/v1/api-keys/${creds.keyId}/approve`, {});
    if (approved.status !== 200) throw new Error(`approve: ${JSON.stringify(approved.body)}`);
  }
  const client = clientFor(service, creds);
  return {
    merchantId,
    creds,
    client,
    member: await newMember(service, client, environment === 'sandbox' ? 'iso' : 'isop'),
  };
}

async function stepUpChallenge(c: MerchantWalletClient, m: Member, cardId: string): Promise<string> {
  const res = await c.requestRaw({
    method: 'POST',
    path: `/v1/cards/${cardId}/activate`,
    body: { expiry: '01/30', pin: '1234' },
    onBehalfOf: m.external,
  });
  if (res.body?.code !== 'step_up_required') throw new Error(`activation asked no step-up: ${res.rawBody}`);
  return res.body.challenge_id;
}

async function virtualCard(p: Party): Promise<string> {
  const products = (await p.client.request<any>({ method: 'GET', path: '/v1/cards/products' })).data as any[];
  const body = { product_id: products.find((x) => x.form_factor === 'virtual')!.id, source_asset: 'USDT' };
  const application = await p.client.request<any>({
    method: 'POST',
    path: '/v1/cards/applications',
    body,
    onBehalfOf: p.member.external,
  });
  return (
    await p.client.request<any>({
      method: 'POST',
      path: `/v1/sandbox/cards/applications/${application.id}/advance`,
      body: { to: 'approved' },
    })
  ).card_id;
}

/** Builds A's objects, one of each kind, through the API as the member and its merchant would. */
async function objectsOf(service: RunningService, a: Party): Promise<{ objects: Objects; payeeIban: string }> {
  const c = a.client;
  const x = a.member;
  const as = { onBehalfOf: x.external };
  const drain = () => service.workers.jobs.drain();
  // A POST of the merchant's own, and one on behalf of member X: each answers the new object.
  const post = (path: string, body?: object) => c.request<any>({ method: 'POST', path, body });
  const postAs = (path: string, body?: object, extra = {}) =>
    c.request<any>({ method: 'POST', path, body, ...as, ...extra });
  for (const asset of ['USDC', 'BTC', 'EUR', 'USDT']) {
    await admin(service, 'POST', `/admin/v1/merchants/${a.merchantId}/prepaid-credits`, {
      environment: 'sandbox',
      asset,
      amount: asset === 'BTC' ? '10' : '100000',
    });
  }
  const deposit = (await fund(c, x, 'USDT', '5000')).id;
  await fund(c, x, 'SGD', '100');
  const withdrawal = (
    await postAs('/v1/withdrawals', {
      asset: 'USDT',
      network: 'TRON',
      address: 'TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW',
      amount: '10',
    })
  ).id;
  const quote = (
    await postAs(
      '/v1/exchange/quotes',
      { from_asset: 'USDT', to_asset: 'USDC', from_amount: '100', lock: true },
      { idempotencyKey: randomUUID() },
    )
  ).quote_id;
  const exchangeOrder = (
    await postAs('/v1/exchange/orders', { from_asset: 'USDT', to_asset: 'EUR', from_amount: '50' })
  ).id;
  const payeeIban = freshIban();
  const payee = (
    await postAs('/v1/remit/payees', {
      ...sepa,
      fields: { first_name: 'Anna', last_name: 'Muller', 'bank_details.iban': payeeIban, ...payeeAddress },
    })
  ).id;
  const remittance = (await postAs('/v1/remittances', { payee_id: payee, source_asset: 'USDT', source_amount: '100' }))
    .id;

  const products = (await c.request<any>({ method: 'GET', path: '/v1/cards/products' })).data as any[];
  const virtual = products.find((p) => p.form_factor === 'virtual')!.id;
  const physical = products.find((p) => p.form_factor === 'physical')!.id;
  const apply = (product_id: string, extra = {}) =>
    postAs('/v1/cards/applications', { product_id, source_asset: 'USDT', ...extra });
  const advance = (id: string, to: string) => post(`/v1/sandbox/cards/applications/${id}/advance`, { to });
  const application = (await apply(virtual)).id;
  const card = (await advance(application, 'approved')).card_id;
  const needDocsApplication = (await apply(virtual)).id;
  await advance(needDocsApplication, 'need_docs');
  const supplementTicket = (await postAs(`/v1/cards/applications/${needDocsApplication}/supplement-sessions`)).id;
  const physicalCard = (await advance((await apply(physical, { shipping_address: shipping })).id, 'approved')).card_id;
  await post(`/v1/sandbox/cards/${physicalCard}/ship`);
  const challenge = await stepUpChallenge(c, x, physicalCard);
  const topup = (await postAs(`/v1/cards/${card}/topups`, { amount: '200', source_asset: 'USDT' })).id;
  await drain();
  const authorization = await post(`/v1/sandbox/cards/${card}/authorizations`, {
    amount: '5',
    merchant_name: 'SHOP',
    mcc: '5411',
  });
  if (!authorization.approved) throw new Error(`authorisation declined: ${authorization.decline_reason}`);
  // A non-security reason on a card never activated: requested only, the executor never runs here.
  const replacement = (await postAs(`/v1/cards/${physicalCard}/replacements`, { reason: 'not_received' })).id;

  const earnProducts = (await c.request<any>({ method: 'GET', path: '/v1/earn/products' })).data as any[];
  const earn = await postAs('/v1/earn/orders', {
    product_id: earnProducts.find((p) => p.type === 'flexible')!.id,
    amount: '100',
  });
  const qrPayment = (await postAs('/v1/qrpay/payments', { qr_code: payNow({ amount: '3' }), asset: 'SGD' })).id;

  // Subscribed to an event none of this makes: every record is `no_subscriber`, nothing is sent.
  const endpoint = (
    await post('/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/hook', event_types: ['qrpay.order.refunded'] })
  ).id;
  const sessionTicket = (await postAs('/v1/kyc/sessions')).id;
  await post(`/v1/sandbox/hosted-screens/${sessionTicket}/complete`, { outcome: 'submitted' });
  const profile = (
    await service.ctx.db.selectFrom('kyc_profiles').select('id').where('member_id', '=', x.id).executeTakeFirstOrThrow()
  ).id;
  await post(`/v1/sandbox/kyc/${x.external}/review`, { decision: 'approved', level: 2 });
  const profileTicket = (await postAs('/v1/kyc/profile-sessions')).id;
  const depositAddress = (await post('/v1/merchant/deposit-address', { asset: 'USDT', network: 'TRON' })).address;
  const exportId = (
    await post('/v1/exports', {
      kind: 'deposits',
      created_gte: '2020-01-01T00:00:00Z',
      created_lt: '2100-01-01T00:00:00Z',
    })
  ).id as string;
  await drain();
  await fanOut(service.ctx.db);
  const deliveries = (await c.request<any>({ method: 'GET', path: '/v1/webhooks/deliveries', query: { limit: 1 } }))
    .data as any[];
  if (!deliveries.length) throw new Error('no webhook delivery record');
  const transactions = (await c.request<any>({ method: 'GET', path: `/v1/cards/${card}/transactions`, ...as }))
    .data as any[];
  const ledgerEntry = (
    (await c.request<any>({ method: 'GET', path: '/v1/ledger/entries', query: { limit: 1 } })).data as any[]
  )[0].id as string;
  const monitor = (await post('/v1/balance-monitors', { balance: 'custody', asset: 'USDT', below: '1' })).id as string;
  const objects = {
    member: x,
    deposit,
    withdrawal,
    quote,
    exchangeOrder,
    payee,
    remittance,
    application,
    needDocsApplication,
    card,
    physicalCard,
    topup,
    transaction: transactions[0].id,
    replacement,
    earnOrder: earn.id,
    position: earn.position_id,
    qrPayment,
    endpoint,
    delivery: deliveries[0].id,
    event: deliveries[0].event_id,
    depositAddress,
    profile,
    profileTicket,
    supplementTicket,
    challenge,
    ledgerEntry,
    monitor,
    export: exportId,
  };
  return { objects, payeeIban };
}

export async function buildWorld(service: RunningService): Promise<World> {
  const a = await party(service, 'sandbox');
  const { objects, payeeIban } = await objectsOf(service, a);
  const y = await newMember(service, a.client, 'isoy');
  await fund(a.client, y, 'USDT', '1000');
  const aProd = await party(service, 'production', a.merchantId);
  const b = await party(service, 'sandbox');
  await fund(b.client, b.member, 'USDT', '1000');
  b.card = await virtualCard(b);
  return { a, objects, y, aProd, b, payeeIban };
}
