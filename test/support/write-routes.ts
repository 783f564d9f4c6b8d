/**
 * A valid request for every signed public write, with its preconditions built through the API
 * (test/idempotency-audit.test.ts drives each one through the idempotency and signing rules).
 * Each `prepare` builds fresh preconditions, so a case can be sent any number of times.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../../src/server.js';
import { admin } from './service.js';
import { payNow } from './emv.js';
import { freshIban, payeeAddress, sepa, shipping, TRON } from './fixtures.js';

export interface WriteCall {
  /** The path as sent (ids filled in). */
  path: string;
  body?: unknown;
  onBehalfOf?: string;
  stepUp?: string;
}

export interface PreparedWrite extends WriteCall {
  /** Another valid request on the same route (another body, or another object in the path). */
  other: WriteCall;
}

/** Keyed by the route as the OpenAPI document names it: `POST /v1/cards/{id}/topups`. */
export type WriteCases = Record<string, () => Promise<PreparedWrite>>;

export function writeCases(
  service: () => RunningService,
  client: () => MerchantWalletClient,
  merchantId: () => string,
): WriteCases {
  const c = () => client();
  const ok = async <T = any>(opts: Parameters<MerchantWalletClient['requestRaw']>[0]): Promise<T> => {
    const res = await c().requestRaw(opts);
    assert.ok(res.status < 300, `${opts.method} ${opts.path}: ${res.status} ${res.rawBody}`);
    return res.body as T;
  };
  const post = <T = any>(path: string, body?: unknown, onBehalfOf?: string) =>
    ok<T>({ method: 'POST', path, body, onBehalfOf });

  /** A member at KYC level 1 with 1000 USDT, 500 EUR and 100 SGD available. */
  async function member(options: { kyc?: boolean } = {}) {
    const external = `ia-${randomUUID().slice(0, 8)}`;
    const m = await post('/v1/members', { external_member_id: external });
    if (options.kyc !== false)
      await admin(service(), 'POST', `/admin/v1/members/${m.id}/kyc-review`, { decision: 'approved', level: 1 });
    for (const [asset, amount] of [
      ['USDT', '1000'],
      ['EUR', '500'],
      ['SGD', '100'],
    ]) {
      await post('/v1/deposits', { member_id: external, asset, amount, tx_hash: `ia-${randomUUID()}` });
    }
    return external;
  }
  const product = async (form: 'virtual' | 'physical') =>
    (await c().cards.products()).find((p) => p.form_factor === form)!.id;
  async function application(m: string, form: 'virtual' | 'physical' = 'virtual') {
    return post(
      '/v1/cards/applications',
      {
        product_id: await product(form),
        source_asset: 'USDT',
        ...(form === 'physical' ? { shipping_address: shipping } : {}),
      },
      m,
    );
  }
  async function card(m: string, form: 'virtual' | 'physical' = 'virtual'): Promise<string> {
    const app = await application(m, form);
    return (await post(`/v1/sandbox/cards/applications/${app.id}/advance`, { to: 'approved' })).card_id;
  }
  /** An active virtual card with 500 USDT topped up (confirmed). */
  async function fundedCard(m: string) {
    const id = await card(m);
    await post(`/v1/cards/${id}/topups`, { amount: '500' }, m);
    await service().workers.jobs.drain();
    return id;
  }
  const authorization = async (cardId: string) =>
    (
      await post(`/v1/sandbox/cards/${cardId}/authorizations`, {
        amount: '5',
        merchant_name: 'Corner Shop',
        mcc: '5411',
      })
    ).transaction_id as string;
  const payee = async (m: string) =>
    (
      await post(
        '/v1/remit/payees',
        {
          ...sepa,
          fields: { first_name: 'Anna', last_name: 'Muller', 'bank_details.iban': freshIban(), ...payeeAddress },
        },
        m,
      )
    ).id as string;
  const kycSubmitted = async (m: string) => {
    const ticket = await post('/v1/kyc/sessions', undefined, m);
    await post(`/v1/sandbox/hosted-screens/${ticket.id}/complete`, { outcome: 'submitted' });
  };
  const withdrawal = async (m: string) =>
    (await post('/v1/withdrawals', { asset: 'USDT', network: 'TRON', address: TRON, amount: '20' }, m)).id as string;
  /** An endpoint; the oldest are deleted first so as to stay under the 20 an environment may have. */
  async function endpoint() {
    const listed = (
      (await ok<any>({ method: 'GET', path: '/v1/webhooks/endpoints' })).data as { id: string; created_at: string }[]
    ).sort((x, y) => x.created_at.localeCompare(y.created_at));
    for (const e of listed.slice(0, Math.max(0, listed.length - 10)))
      await ok({ method: 'DELETE', path: `/v1/webhooks/endpoints/${e.id}` });
    return newEndpoint();
  }
  const newEndpoint = async () =>
    (await post('/v1/webhooks/endpoints', { url: `http://127.0.0.1:9/${randomUUID()}`, event_types: ['*'] }))
      .id as string;
  const earnProduct = async (type: 'flexible' | 'fixed') =>
    (await ok<any>({ method: 'GET', path: '/v1/earn/products' })).data.find((p: any) => p.type === type).id as string;
  async function remittance(m: string) {
    const order = await post(
      '/v1/remittances',
      { payee_id: await payee(m), source_asset: 'EUR', source_amount: '10' },
      m,
    );
    for (let i = 0; i < 5; i++) {
      await service().workers.jobs.drain();
      await service().workers.tick();
      if ((await ok<any>({ method: 'GET', path: `/v1/remittances/${order.id}`, onBehalfOf: m })).status === 'completed')
        return order.id as string;
    }
    throw new Error('the remittance did not complete');
  }
  /** A shipped physical card, and the step-up challenge its activation needs, completed. */
  async function activation(m: string): Promise<WriteCall> {
    const id = await card(m, 'physical');
    await post(`/v1/sandbox/cards/${id}/ship`);
    const detail = await ok<any>({ method: 'GET', path: `/v1/cards/${id}`, onBehalfOf: m });
    const body = {
      expiry: `${String(detail.exp_month).padStart(2, '0')}/${String(detail.exp_year).slice(-2)}`,
      pin: '1234',
    };
    const first = await c().requestRaw({ method: 'POST', path: `/v1/cards/${id}/activate`, body, onBehalfOf: m });
    assert.equal(first.body.code, 'step_up_required', first.rawBody);
    await post(`/v1/sandbox/hosted-screens/${first.body.challenge_id}/complete`, { outcome: 'approved' });
    return { path: `/v1/cards/${id}/activate`, body, onBehalfOf: m, stepUp: first.body.challenge_id };
  }
  /** A delivery record gone `dead` for an enabled endpoint. */
  async function deadDelivery(): Promise<string> {
    const ep = await endpoint();
    await member({ kyc: false });
    await service().workers.tick();
    await service().workers.jobs.drain();
    const row = await service()
      .ctx.db.selectFrom('webhook_deliveries')
      .select('id')
      .where('merchant_id', '=', merchantId())
      .where('endpoint_id', '=', ep)
      .where('status', 'in', ['pending', 'failed'])
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
    await service().ctx.db.updateTable('webhook_deliveries').set({ status: 'dead' }).where('id', '=', row.id).execute();
    return row.id;
  }
  const onCard =
    (
      route: (id: string) => string,
      body?: (n: number) => unknown,
      make: (m: string) => Promise<string> = (m) => card(m),
    ) =>
    async (): Promise<PreparedWrite> => {
      const m = await member();
      const [a, b] = [await make(m), await make(m)];
      return {
        path: route(a),
        body: body?.(1),
        onBehalfOf: m,
        other: { path: route(b), body: body?.(2), onBehalfOf: m },
      };
    };
  const merchantBody = (path: string, body: (n: number) => unknown) => async (): Promise<PreparedWrite> => ({
    path,
    body: body(1),
    other: { path, body: body(2) },
  });
  const memberBody =
    (path: string, body: (m: string, n: number) => Promise<unknown> | unknown, kyc = true) =>
    async (): Promise<PreparedWrite> => {
      const m = await member({ kyc });
      return { path, body: await body(m, 1), onBehalfOf: m, other: { path, body: await body(m, 2), onBehalfOf: m } };
    };
  const onObject =
    (route: (id: string) => string, make: () => Promise<string>, body?: (n: number) => unknown) =>
    async (): Promise<PreparedWrite> => {
      const [a, b] = [await make(), await make()];
      return { path: route(a), body: body?.(1), other: { path: route(b), body: body?.(2) } };
    };

  return {
    'POST /v1/members': merchantBody('/v1/members', () => ({ external_member_id: `ia-${randomUUID().slice(0, 8)}` })),
    'POST /v1/members/{id}/suspend': onObject(
      (id) => `/v1/members/${id}/suspend`,
      () => member({ kyc: false }),
    ),
    'POST /v1/members/{id}/sessions/revoke': onObject(
      (id) => `/v1/members/${id}/sessions/revoke`,
      () => member({ kyc: false }),
    ),
    'POST /v1/deposits': async () => {
      const m = await member({ kyc: false });
      const body = (n: number) => ({ member_id: m, asset: 'USDT', amount: `${n}`, tx_hash: `ia-${randomUUID()}` });
      return { path: '/v1/deposits', body: body(1), other: { path: '/v1/deposits', body: body(2) } };
    },
    'POST /v1/withdrawals': memberBody('/v1/withdrawals', (_m, n) => ({
      asset: 'USDT',
      network: 'TRON',
      address: TRON,
      amount: `${20 + n}`,
    })),
    'POST /v1/withdrawals/{id}/confirm': async () => {
      const m = await member();
      const [a, b] = [await withdrawal(m), await withdrawal(m)];
      return { path: `/v1/withdrawals/${a}/confirm`, other: { path: `/v1/withdrawals/${b}/confirm` } };
    },
    'POST /v1/withdrawals/{id}/fail': async () => {
      const m = await member();
      const [a, b] = [await withdrawal(m), await withdrawal(m)];
      return { path: `/v1/withdrawals/${a}/fail`, other: { path: `/v1/withdrawals/${b}/fail` } };
    },
    'POST /v1/qrpay/decode': memberBody(
      '/v1/qrpay/decode',
      (_m, n) => ({ qr_code: payNow({ amount: `${n}` }) }),
      false,
    ),
    'POST /v1/qrpay/payments': memberBody('/v1/qrpay/payments', (_m, n) => ({
      qr_code: payNow(),
      amount: `${n}.5`,
      asset: 'SGD',
    })),
    'POST /v1/sandbox/clock/advance': merchantBody('/v1/sandbox/clock/advance', (n) => ({ seconds: n })),
    'POST /v1/sandbox/upstream-behavior': merchantBody('/v1/sandbox/upstream-behavior', (n) => ({
      upstream: n === 1 ? 'card' : 'chain',
      behavior: 'success',
    })),
    'POST /v1/sandbox/reset': async () => ({
      path: '/v1/sandbox/reset',
      other: { path: '/v1/sandbox/clock/advance', body: { seconds: 1 } },
    }),
    'POST /v1/merchant/deposit-address': merchantBody('/v1/merchant/deposit-address', (n) => ({
      asset: 'USDT',
      network: n === 1 ? 'TRON' : 'ETHEREUM',
    })),
    'POST /v1/webhooks/endpoints': merchantBody('/v1/webhooks/endpoints', (n) => ({
      url: `http://127.0.0.1:9/${n}-${randomUUID()}`,
      event_types: ['*'],
    })),
    'PATCH /v1/webhooks/endpoints/{id}': onObject(
      (id) => `/v1/webhooks/endpoints/${id}`,
      endpoint,
      (n) => ({ event_types: n === 1 ? ['deposit.credited'] : ['*'] }),
    ),
    'DELETE /v1/webhooks/endpoints/{id}': onObject((id) => `/v1/webhooks/endpoints/${id}`, endpoint),
    'POST /v1/balance-monitors': merchantBody('/v1/balance-monitors', (n) => ({
      balance: n === 1 ? 'custody' : 'prepaid',
      asset: 'USDT',
      below: `${n}00`,
    })),
    'DELETE /v1/balance-monitors/{id}': onObject(
      (id) => `/v1/balance-monitors/${id}`,
      async () =>
        (await post('/v1/balance-monitors', { balance: 'custody', asset: 'USDT', below: '100' })).id as string,
    ),
    'POST /v1/exports': merchantBody('/v1/exports', (n) => ({
      kind: n === 1 ? 'deposits' : 'withdrawals',
      created_gte: new Date(Date.now() - 86_400_000).toISOString(),
      created_lt: new Date().toISOString(),
    })),
    'POST /v1/webhooks/endpoints/{id}/replay': onObject(
      (id) => `/v1/webhooks/endpoints/${id}/replay`,
      endpoint,
      (n) => ({ since: new Date(Date.now() - 3_600_000 * n).toISOString(), only_failed: n === 1 }),
    ),
    'POST /v1/webhooks/endpoints/{id}/roll-secret': onObject(
      (id) => `/v1/webhooks/endpoints/${id}/roll-secret`,
      endpoint,
      (n) => ({ overlap_seconds: 60 * n }),
    ),
    'POST /v1/webhooks/deliveries/requeue': merchantBody('/v1/webhooks/deliveries/requeue', (n) => ({
      since: new Date(Date.now() - n * 60_000).toISOString(),
    })),
    'POST /v1/webhooks/deliveries/{id}/redeliver': onObject(
      (id) => `/v1/webhooks/deliveries/${id}/redeliver`,
      deadDelivery,
    ),
    'POST /v1/sandbox/hosted-screens/{ticket_id}/complete': onObject(
      (id) => `/v1/sandbox/hosted-screens/${id}/complete`,
      async () => (await post('/v1/kyc/sessions', undefined, await member({ kyc: false }))).id,
      () => ({ outcome: 'submitted' }),
    ),
    'PUT /v1/hosted-screens/settings': merchantBody('/v1/hosted-screens/settings', (n) => ({
      frame_ancestors: [`https://shop${n}.example.com`],
    })),
    'POST /v1/kyc/sessions': async () => {
      const m = await member({ kyc: false });
      return {
        path: '/v1/kyc/sessions',
        onBehalfOf: m,
        other: { path: '/v1/kyc/sessions', onBehalfOf: await member({ kyc: false }) },
      };
    },
    'POST /v1/kyc/profile-sessions': async () => {
      const [a, b] = [await member({ kyc: false }), await member({ kyc: false })];
      await kycSubmitted(a);
      await kycSubmitted(b);
      return {
        path: '/v1/kyc/profile-sessions',
        onBehalfOf: a,
        other: { path: '/v1/kyc/profile-sessions', onBehalfOf: b },
      };
    },
    'POST /v1/sandbox/kyc/{member_id}/review': onObject(
      (id) => `/v1/sandbox/kyc/${id}/review`,
      async () => {
        const m = await member({ kyc: false });
        await kycSubmitted(m);
        return m;
      },
      (n) => ({ decision: n === 1 ? 'approved' : 'rejected', ...(n === 1 ? { level: 1 } : {}) }),
    ),
    'POST /v1/remit/payees': memberBody('/v1/remit/payees', () => ({
      ...sepa,
      fields: { first_name: 'Anna', last_name: 'Muller', 'bank_details.iban': freshIban(), ...payeeAddress },
    })),
    'PATCH /v1/remit/payees/{id}': onCard(
      (id) => `/v1/remit/payees/${id}`,
      (n) => ({ nickname: `nick ${n}` }),
      payee,
    ),
    'DELETE /v1/remit/payees/{id}': onCard((id) => `/v1/remit/payees/${id}`, undefined, payee),
    'POST /v1/remit/payees/{id}/verify': onCard((id) => `/v1/remit/payees/${id}/verify`, undefined, payee),
    'POST /v1/remittances': memberBody('/v1/remittances', async (m, n) => ({
      payee_id: await payee(m),
      source_asset: 'EUR',
      source_amount: `${10 + n}`,
    })),
    'POST /v1/sandbox/remittances/{id}/return': async () => {
      const m = await member();
      const [a, b] = [await remittance(m), await remittance(m)];
      return { path: `/v1/sandbox/remittances/${a}/return`, other: { path: `/v1/sandbox/remittances/${b}/return` } };
    },
    'POST /v1/exchange/quotes': memberBody('/v1/exchange/quotes', (_m, n) => ({
      from_asset: 'USDT',
      to_asset: 'EUR',
      from_amount: `${10 + n}.000000`,
      lock: true,
    })),
    'POST /v1/exchange/orders': memberBody('/v1/exchange/orders', (_m, n) => ({
      from_asset: 'USDT',
      to_asset: 'EUR',
      from_amount: `${10 + n}.000000`,
    })),
    'POST /v1/merchant/conversions': async () => {
      await admin(service(), 'POST', `/admin/v1/merchants/${merchantId()}/prepaid-credits`, {
        environment: 'sandbox',
        asset: 'USDT',
        amount: '100',
      });
      const body = (n: number) => ({ from_asset: 'USDT', to_asset: 'EUR', from_amount: `${n}` });
      return {
        path: '/v1/merchant/conversions',
        body: body(1),
        other: { path: '/v1/merchant/conversions', body: body(2) },
      };
    },
    'POST /v1/earn/orders': memberBody('/v1/earn/orders', async (_m, n) => ({
      product_id: await earnProduct('flexible'),
      amount: `${10 + n}`,
    })),
    'POST /v1/earn/positions/{id}/redeem': async () => {
      // A member has one flexible position: two members. The merchant pays the interest.
      await admin(service(), 'POST', `/admin/v1/merchants/${merchantId()}/prepaid-credits`, {
        environment: 'sandbox',
        asset: 'USDT',
        amount: '10',
      });
      const position = async (m: string) =>
        (await post('/v1/earn/orders', { product_id: await earnProduct('flexible'), amount: '10' }, m))
          .position_id as string;
      const [a, b] = [await member(), await member()];
      return {
        path: `/v1/earn/positions/${await position(a)}/redeem`,
        onBehalfOf: a,
        other: { path: `/v1/earn/positions/${await position(b)}/redeem`, onBehalfOf: b },
      };
    },
    'POST /v1/cards/applications': memberBody('/v1/cards/applications', async (_m, n) =>
      n === 1
        ? { product_id: await product('virtual'), source_asset: 'USDT' }
        : { product_id: await product('physical'), source_asset: 'USDT', shipping_address: shipping },
    ),
    'POST /v1/cards/applications/{id}/supplement-sessions': onCard(
      (id) => `/v1/cards/applications/${id}/supplement-sessions`,
      undefined,
      async (m) => {
        const app = await application(m);
        await post(`/v1/sandbox/cards/applications/${app.id}/advance`, { to: 'need_docs' });
        return app.id;
      },
    ),
    'POST /v1/cards/{id}/activate': async () => {
      const m = await member();
      const [a, b] = [await activation(m), await activation(m)];
      return { ...a, other: b };
    },
    'PATCH /v1/cards/{id}/limits': onCard(
      (id) => `/v1/cards/${id}/limits`,
      (n) => ({ single: `${100 * n}` }),
    ),
    'PUT /v1/cards/{id}/merchant-rules': onCard(
      (id) => `/v1/cards/${id}/merchant-rules`,
      (n) => ({ rule_type: 'black', mcc_list: [`581${n}`] }),
    ),
    'DELETE /v1/cards/{id}/merchant-rules': onCard((id) => `/v1/cards/${id}/merchant-rules`),
    'PATCH /v1/cards/{id}/billing-address': onCard(
      (id) => `/v1/cards/${id}/billing-address`,
      (n) => ({ address: `${n} Main St`, city: 'Berlin', country: 'DE', postal_code: '10115' }),
    ),
    'POST /v1/cards/{id}/cvv/unblock': onCard(
      (id) => `/v1/cards/${id}/cvv/unblock`,
      undefined,
      async (m) => {
        const id = await card(m);
        await service().ctx.db.updateTable('cards').set({ cvv_blocked: true }).where('id', '=', id).execute();
        return id;
      },
    ),
    'POST /v1/cards/{id}/secure-session': onCard((id) => `/v1/cards/${id}/secure-session`),
    'POST /v1/sandbox/cards/applications/{id}/advance': async () => {
      const m = await member();
      const [a, b] = [await application(m), await application(m)];
      return {
        path: `/v1/sandbox/cards/applications/${a.id}/advance`,
        body: { to: 'approved' },
        other: { path: `/v1/sandbox/cards/applications/${b.id}/advance`, body: { to: 'rejected' } },
      };
    },
    'POST /v1/sandbox/cards/{id}/ship': async () => {
      const m = await member();
      const [a, b] = [await card(m, 'physical'), await card(m, 'physical')];
      return { path: `/v1/sandbox/cards/${a}/ship`, other: { path: `/v1/sandbox/cards/${b}/ship` } };
    },
    'POST /v1/cards/{id}/topup-quotes': onCard(
      (id) => `/v1/cards/${id}/topup-quotes`,
      (n) => ({ amount: `${10 * n}` }),
    ),
    'POST /v1/cards/{id}/topups': onCard(
      (id) => `/v1/cards/${id}/topups`,
      (n) => ({ amount: `${10 * n}`, source_asset: 'USDT' }),
    ),
    'POST /v1/sandbox/cards/{id}/authorizations': async () => {
      const id = await fundedCard(await member());
      const body = (n: number) => ({ amount: `${n}`, merchant_name: 'Corner Shop', mcc: '5411' });
      return {
        path: `/v1/sandbox/cards/${id}/authorizations`,
        body: body(1),
        other: { path: `/v1/sandbox/cards/${id}/authorizations`, body: body(2) },
      };
    },
    ...Object.fromEntries(
      (['clearings', 'reversals', 'refunds'] as const).map((kind) => [
        `POST /v1/sandbox/cards/{id}/${kind}`,
        async (): Promise<PreparedWrite> => {
          const id = await fundedCard(await member());
          const tx = async () => {
            const t = await authorization(id);
            // A refund follows a clearing.
            return kind === 'refunds'
              ? ((await post(`/v1/sandbox/cards/${id}/clearings`, { transaction_id: t })).transaction_id ?? t)
              : t;
          };
          const [a, b] = [await tx(), await tx()];
          return {
            path: `/v1/sandbox/cards/${id}/${kind}`,
            body: { transaction_id: a },
            other: { path: `/v1/sandbox/cards/${id}/${kind}`, body: { transaction_id: b } },
          };
        },
      ]),
    ),
    'POST /v1/cards/{id}/replacements': onCard(
      (id) => `/v1/cards/${id}/replacements`,
      (n) => ({ reason: n === 1 ? 'user_request' : 'stolen' }),
    ),
    'POST /v1/cards/{id}/close': onCard((id) => `/v1/cards/${id}/close`),
  };
}
