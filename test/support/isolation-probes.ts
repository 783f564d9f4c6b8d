/**
 * The probes of test/isolation-audit.test.ts: for every public route that names an object, the
 * request(s) that ask for A's object with a body valid for the route, so that only the ownership
 * of the object can refuse it. Keyed by the route as registered (`METHOD /path/:param`).
 */
import { type Objects } from './isolation-world.js';
import { shipping } from './fixtures.js';

export interface Probe {
  path: string;
  body?: unknown;
}

export const probes: Record<string, (o: Objects) => Probe[]> = {
  'GET /v1/members/:id': (o) => [{ path: `/v1/members/${o.member.id}` }, { path: `/v1/members/${o.member.external}` }],
  'POST /v1/members/:id/suspend': (o) => [
    { path: `/v1/members/${o.member.id}/suspend` },
    { path: `/v1/members/${o.member.external}/suspend` },
  ],
  'POST /v1/members/:id/sessions/revoke': (o) => [{ path: `/v1/members/${o.member.external}/sessions/revoke` }],
  'GET /v1/deposits/:id': (o) => [{ path: `/v1/deposits/${o.deposit}` }],
  'GET /v1/ledger/entries/:id': (o) => [
    { path: `/v1/ledger/entries/${o.ledgerEntry}` },
    { path: `/v1/ledger/entries/${o.ledgerEntry.slice(4)}` },
  ],
  'DELETE /v1/balance-monitors/:id': (o) => [{ path: `/v1/balance-monitors/${o.monitor}` }],
  'GET /v1/exports/:id': (o) => [{ path: `/v1/exports/${o.export}` }, { path: `/v1/exports/${o.export.slice(4)}` }],
  'GET /v1/exports/:id/file': (o) => [{ path: `/v1/exports/${o.export}/file` }],
  'GET /v1/withdrawals/:id': (o) => [
    { path: `/v1/withdrawals/${o.withdrawal}` },
    { path: `/v1/withdrawals/${o.withdrawal.slice(4)}` },
  ],
  'POST /v1/withdrawals/:id/confirm': (o) => [{ path: `/v1/withdrawals/${o.withdrawal}/confirm` }],
  'POST /v1/withdrawals/:id/fail': (o) => [{ path: `/v1/withdrawals/${o.withdrawal}/fail` }],
  'GET /v1/qrpay/payments/:id': (o) => [{ path: `/v1/qrpay/payments/${o.qrPayment}` }],
  'PATCH /v1/webhooks/endpoints/:id': (o) => [
    { path: `/v1/webhooks/endpoints/${o.endpoint}`, body: { status: 'disabled' } },
  ],
  'DELETE /v1/webhooks/endpoints/:id': (o) => [{ path: `/v1/webhooks/endpoints/${o.endpoint}` }],
  'POST /v1/webhooks/endpoints/:id/roll-secret': (o) => [{ path: `/v1/webhooks/endpoints/${o.endpoint}/roll-secret` }],
  'POST /v1/webhooks/endpoints/:id/replay': (o) => [
    {
      path: `/v1/webhooks/endpoints/${o.endpoint}/replay`,
      body: { since: new Date(Date.now() - 3_600_000).toISOString() },
    },
  ],
  'GET /v1/events/:id': (o) => [{ path: `/v1/events/${o.event}` }, { path: `/v1/events/${o.event.slice(4)}` }],
  'POST /v1/webhooks/deliveries/:id/redeliver': (o) => [
    { path: `/v1/webhooks/deliveries/${o.delivery}/redeliver` },
    { path: `/v1/webhooks/deliveries/${o.delivery.slice(4)}/redeliver` },
  ],
  'POST /v1/sandbox/hosted-screens/:ticket_id/complete': (o) => [
    { path: `/v1/sandbox/hosted-screens/${o.profileTicket}/complete`, body: { outcome: 'submitted' } },
    { path: `/v1/sandbox/hosted-screens/${o.supplementTicket}/complete`, body: { outcome: 'submitted' } },
    { path: `/v1/sandbox/hosted-screens/${o.challenge}/complete`, body: { outcome: 'approved' } },
  ],
  'GET /v1/kyc/profiles/:id': (o) => [{ path: `/v1/kyc/profiles/${o.profile}` }],
  'POST /v1/sandbox/kyc/:member_id/review': (o) => [
    { path: `/v1/sandbox/kyc/${o.member.id}/review`, body: { decision: 'rejected' } },
    { path: `/v1/sandbox/kyc/${o.member.external}/review`, body: { decision: 'rejected' } },
  ],
  'GET /v1/remit/payees/:id': (o) => [
    { path: `/v1/remit/payees/${o.payee}` },
    { path: `/v1/remit/payees/${o.payee.slice(4)}` },
  ],
  'PATCH /v1/remit/payees/:id': (o) => [{ path: `/v1/remit/payees/${o.payee}`, body: { nickname: 'taken' } }],
  'DELETE /v1/remit/payees/:id': (o) => [{ path: `/v1/remit/payees/${o.payee}` }],
  'POST /v1/remit/payees/:id/verify': (o) => [{ path: `/v1/remit/payees/${o.payee}/verify` }],
  'GET /v1/remittances/:id': (o) => [{ path: `/v1/remittances/${o.remittance}` }],
  'POST /v1/sandbox/remittances/:id/return': (o) => [{ path: `/v1/sandbox/remittances/${o.remittance}/return` }],
  'GET /v1/exchange/orders/:id': (o) => [
    { path: `/v1/exchange/orders/${o.quote}` },
    { path: `/v1/exchange/orders/${o.exchangeOrder}` },
  ],
  'GET /v1/earn/orders/:id': (o) => [{ path: `/v1/earn/orders/${o.earnOrder}` }],
  'POST /v1/earn/positions/:id/redeem': (o) => [{ path: `/v1/earn/positions/${o.position}/redeem` }],
  'GET /v1/cards/applications/:id': (o) => [{ path: `/v1/cards/applications/${o.application}` }],
  'POST /v1/cards/applications/:id/supplement-sessions': (o) => [
    { path: `/v1/cards/applications/${o.needDocsApplication}/supplement-sessions` },
  ],
  'GET /v1/cards/:id': (o) => [{ path: `/v1/cards/${o.card}` }, { path: `/v1/cards/${o.card.slice(4)}` }],
  'POST /v1/cards/:id/activate': (o) => [
    { path: `/v1/cards/${o.physicalCard}/activate`, body: { expiry: '01/30', pin: '1234' } },
  ],
  'PATCH /v1/cards/:id/limits': (o) => [{ path: `/v1/cards/${o.card}/limits`, body: { single: '100' } }],
  'GET /v1/cards/:id/merchant-rules': (o) => [{ path: `/v1/cards/${o.card}/merchant-rules` }],
  'PUT /v1/cards/:id/merchant-rules': (o) => [
    { path: `/v1/cards/${o.card}/merchant-rules`, body: { rule_type: 'black', mcc_list: ['5411'] } },
  ],
  'DELETE /v1/cards/:id/merchant-rules': (o) => [{ path: `/v1/cards/${o.card}/merchant-rules` }],
  'PATCH /v1/cards/:id/billing-address': (o) => [{ path: `/v1/cards/${o.card}/billing-address`, body: shipping }],
  'POST /v1/cards/:id/cvv/unblock': (o) => [{ path: `/v1/cards/${o.card}/cvv/unblock` }],
  'POST /v1/cards/:id/secure-session': (o) => [{ path: `/v1/cards/${o.card}/secure-session` }],
  'POST /v1/sandbox/cards/applications/:id/advance': (o) => [
    { path: `/v1/sandbox/cards/applications/${o.needDocsApplication}/advance`, body: { to: 'rejected' } },
  ],
  'POST /v1/sandbox/cards/:id/ship': (o) => [{ path: `/v1/sandbox/cards/${o.physicalCard}/ship` }],
  'POST /v1/cards/:id/topup-quotes': (o) => [{ path: `/v1/cards/${o.card}/topup-quotes`, body: { amount: '10' } }],
  'POST /v1/cards/:id/topups': (o) => [
    { path: `/v1/cards/${o.card}/topups`, body: { amount: '10', source_asset: 'USDT' } },
  ],
  'GET /v1/cards/:id/topups': (o) => [{ path: `/v1/cards/${o.card}/topups` }],
  'GET /v1/cards/topups/:id': (o) => [{ path: `/v1/cards/topups/${o.topup}` }],
  'GET /v1/cards/transactions/:id': (o) => [{ path: `/v1/cards/transactions/${o.transaction}` }],
  'GET /v1/cards/:id/topups/:topup_id': (o) => [{ path: `/v1/cards/${o.card}/topups/${o.topup}` }],
  'GET /v1/cards/:id/transactions': (o) => [{ path: `/v1/cards/${o.card}/transactions` }],
  'POST /v1/sandbox/cards/:id/authorizations': (o) => [
    { path: `/v1/sandbox/cards/${o.card}/authorizations`, body: { amount: '1', merchant_name: 'SHOP', mcc: '5411' } },
  ],
  'POST /v1/sandbox/cards/:id/clearings': (o) => [
    { path: `/v1/sandbox/cards/${o.card}/clearings`, body: { transaction_id: o.transaction } },
  ],
  'POST /v1/sandbox/cards/:id/reversals': (o) => [
    { path: `/v1/sandbox/cards/${o.card}/reversals`, body: { transaction_id: o.transaction } },
  ],
  'POST /v1/sandbox/cards/:id/refunds': (o) => [
    { path: `/v1/sandbox/cards/${o.card}/refunds`, body: { transaction_id: o.transaction } },
  ],
  'POST /v1/cards/:id/replacements': (o) => [{ path: `/v1/cards/${o.card}/replacements`, body: { reason: 'damaged' } }],
  'GET /v1/cards/replacements/:id': (o) => [{ path: `/v1/cards/replacements/${o.replacement}` }],
  'POST /v1/cards/:id/close': (o) => [{ path: `/v1/cards/${o.card}/close` }],
};

/** Every id of A's objects (and of its member X), as it appears in JSON. */
export function ownedIds(o: Objects): string[] {
  return Object.values(o).flatMap((v) => (typeof v === 'string' ? [v] : [v.id, v.external]));
}

/** Objects shaped as A's that do not exist: the answer to them is what A's must look like. */
export function ghostOf(o: Objects): Objects {
  const ghost = (id: string) => (/^pye_\d+$/.test(id) ? 'pye_999999' : id.replace(/[0-9a-f]{6}$/, '000000'));
  return Object.fromEntries(
    Object.entries(o).map(([k, v]) => [
      k,
      typeof v === 'string' ? ghost(v) : { id: ghost(v.id), external: `${v.external}-none` },
    ]),
  ) as unknown as Objects;
}
