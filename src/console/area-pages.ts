import type { FastifyRequest } from 'fastify';
import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import type { PageParams } from '../platform/routes/pagination.js';
import { html, type HtmlPart } from '../modules/hosted-screens/index.js';
import { getPayment, listPayments } from '../modules/qrpay/index.js';
import { getOrder as getRemittance, listOrders as listRemittances } from '../modules/remittance/index.js';
import { readOrder, readOrders } from '../modules/exchange/index.js';
import { getOrder as getEarnOrder, listOrders as listEarnOrders, listPositions } from '../modules/earn/index.js';
import { callerOf, cursorOf } from './http.js';

import { history } from './history.js';
import { badge, envPath, idLink, sendListPage, sendPage, shortId, when, type Column } from './views.js';
import { getPage } from './guards.js';

/**
 * The other areas' orders, read only: QR payments, remittances, exchange orders, earn orders and
 * positions (the cards: card-pages.ts). Each list and each detail reads through the area's own
 * service (the functions its API routes call), so the console shows what the API answers; a
 * detail adds the state history (events) and the ledger postings.
 */

export const idOf = (req: FastifyRequest, name = 'id') => (req.params as Record<string, string>)[name]!;
export const pageSize = 25;

export type Row = Record<string, any>;
type Caller = ReturnType<typeof callerOf>;

/** A status badge: green when done, amber while under way, red when it ended without the money moving. */
export function statusBadge(status: string): HtmlPart {
  const ok = [
    'completed',
    'settled',
    'succeeded',
    'credited',
    'executed',
    'active',
    'approved',
    'cleared',
    'redeemed',
    'paid',
  ];
  const bad = [
    'failed',
    'rejected',
    'declined',
    'expired',
    'cancelled',
    'canceled',
    'closed',
    'reversed',
    'refunded',
    'voided',
    'frozen',
  ];
  return badge(status, ok.includes(status) ? 'ok' : bad.includes(status) ? 'bad' : 'warn');
}

export const code = (v: unknown) => (v === null || v === undefined || v === '' ? '' : html`<code>${String(v)}</code>`);
export const money = (amount: unknown, asset: unknown) =>
  amount === null || amount === undefined ? '' : `${String(amount)} ${String(asset ?? '')}`.trim();

/** The last columns of an order list: its status and when it was made. */
export const statusColumns: Column<Row>[] = [
  { label: 'Status', cell: (r) => statusBadge(String(r.status)) },
  { label: 'Created', cell: (r) => when(r.created_at ?? r.started_at) },
];

interface Area {
  path: string;
  title: string;
  noun: string;
  intro: string;
  empty: string;
  list(ctx: ServiceContext, caller: Caller, page: PageParams): Promise<{ data: Row[]; next_cursor: string | null }>;
  get(ctx: ServiceContext, caller: Caller, id: string): Promise<Row>;
  /** Columns between the id and the status. */
  columns: Column<Row>[];
  /** The detail's summary lines after the status. */
  summary(row: Row): [string, HtmlPart][];
}

const areas: Area[] = [
  {
    path: '/qr-payments',
    title: 'QR payments',
    noun: 'QR payment',
    empty: 'No QR payments in this environment yet.',
    intro: "Payments of scanned QR codes, paid from the member's balance to the scheme's merchant.",
    list: (ctx, c, p) => listPayments(ctx.db, c, p),
    get: (ctx, c, id) => getPayment(ctx.db, c, id),
    columns: [
      {
        label: 'Pays',
        cell: (r) =>
          html`${r.merchant_name}${r.merchant_city ? `, ${r.merchant_city}` : ''}<br><span class="mono">${
            r.scheme
          }</span>`,
      },
      { label: 'Amount', cell: (r) => money(r.amount, r.asset), num: true },
    ],
    summary: (r) => [
      ['Member', code(r.member_id)],
      ['Scheme', r.scheme],
      ['Pays', `${r.merchant_name} ${r.merchant_city ?? ''} ${r.country ?? ''}`.trim()],
      ['Amount', money(r.amount, r.asset)],
      ['Note', r.note ?? ''],
      ['Failure', r.failure_reason ?? ''],
    ],
  },
  {
    path: '/remittances',
    title: 'Remittances',
    noun: 'Remittance',
    empty: 'No remittances in this environment yet.',
    intro:
      "Money sent to payees abroad: the source amount leaves the member's balance, the payout arrives in the " +
      "payee's currency.",
    list: (ctx, c, p) => listRemittances(ctx.db, c, p),
    get: (ctx, c, id) => getRemittance(ctx.db, c, id),
    columns: [
      { label: 'Payee', cell: (r) => shortId(r.payee_id ? String(r.payee_id) : null) },
      { label: 'Sends', cell: (r) => money(r.source_amount, r.source_asset), num: true },
      { label: 'Payout', cell: (r) => money(r.payout_amount, r.payout_currency), num: true },
    ],
    summary: (r) => [
      ['Member', code(r.member_id)],
      ['Payee', code(r.payee_id)],
      ['Sends', money(r.source_amount, r.source_asset)],
      ['Fee', money(r.fee, r.source_asset)],
      ['Payout', money(r.payout_amount, r.payout_currency)],
      ['Rate', String(r.rate ?? '')],
      ['Payout date', String(r.payout_date ?? '')],
      ['Failure', r.failure_reason ?? ''],
    ],
  },
  {
    path: '/exchange',
    title: 'Exchange orders',
    noun: 'Exchange order',
    empty: 'No exchange orders in this environment yet.',
    intro: 'Conversions between two assets of a member: quotes (locked rates) and executed orders.',
    list: (ctx, c, p) => readOrders(ctx, c, p),
    get: (ctx, c, id) => readOrder(ctx, c, id),
    columns: [
      { label: 'Type', cell: (r) => r.type },
      { label: 'From', cell: (r) => money(r.from_amount, r.from_asset), num: true },
      { label: 'To', cell: (r) => money(r.to_amount, r.to_asset), num: true },
      { label: 'Rate', cell: (r) => String(r.rate ?? ''), num: true },
    ],
    summary: (r) => [
      ['Member', code(r.member_id)],
      ['Type', r.type],
      ['From', money(r.from_amount, r.from_asset)],
      ['To', money(r.to_amount, r.to_asset)],
      ['Rate', String(r.rate ?? '')],
      ['Fee', money(r.fee_amount, r.fee_asset)],
      ['Quote expires', when(r.quote_expires_at)],
      ['Executed', when(r.executed_at)],
    ],
  },
  {
    path: '/earn',
    title: 'Earn orders',
    noun: 'Earn order',
    empty: 'No earn orders in this environment yet.',
    intro:
      'Subscriptions to earn products: the principal is held while interest accrues; a flexible position can ' +
      'be redeemed. Open positions: see Earn positions.',
    list: (ctx, c, p) => listEarnOrders(ctx.db, c, p),
    get: (ctx, c, id) => getEarnOrder(ctx.db, c, id),
    columns: [
      {
        label: 'Product',
        cell: (r) =>
          html`${code(r.product_id)}<br><span class="mono">${r.type}${
            r.term_days ? `, ${r.term_days} days` : ''
          }</span>`,
      },
      { label: 'Amount', cell: (r) => money(r.amount, r.asset), num: true },
      { label: 'Interest paid', cell: (r) => money(r.interest_paid, r.asset), num: true },
    ],
    summary: (r) => [
      ['Position', code(r.position_id)],
      ['Product', code(r.product_id)],
      ['Type', `${r.type}${r.term_days ? `, ${r.term_days} days` : ''}`],
      ['APR', String(r.apr ?? '')],
      ['Amount', money(r.amount, r.asset)],
      ['Interest accrued', money(r.interest_accrued, r.asset)],
      ['Interest paid', money(r.interest_paid, r.asset)],
      ['Started', when(r.started_at)],
    ],
  },
];

export function summaryCard(row: Row, lines: [string, HtmlPart][]): HtmlPart {
  const shown = lines.filter(([, v]) => v !== '' && v !== undefined);
  return html`<div class="card"><dl class="summary"><dt>Status</dt><dd>${statusBadge(
    String(row.status),
  )}</dd>${shown.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}<dt>Created</dt>
  <dd>${when(row.created_at ?? row.started_at)}</dd></dl></div>`;
}

export function registerAreaPages(app: AppInstance, ctx: ServiceContext): void {
  for (const area of areas) {
    getPage(app, ctx, `/console/:env${area.path}`, async (req, reply, page) => {
      const list = await area.list(ctx, callerOf(page), { limit: pageSize, cursor: cursorOf(req) });
      const base = envPath(page.environment, area.path);
      return sendListPage(reply, page, {
        title: area.title,
        section: area.path,
        intro: area.intro,
        columns: [
          // The member under the order's id: two long ids side by side push the status out of a wide screen.
          {
            label: area.noun,
            cell: (r) =>
              html`${idLink(`${base}/${r.id}`, r.id)}${r.member_id ? html`<br>${shortId(String(r.member_id))}` : ''}`,
          },
          ...area.columns,
          ...statusColumns,
        ],
        rows: list,
        empty: area.empty,
      });
    });

    getPage(app, ctx, `/console/:env${area.path}/:id`, async (req, reply, page) => {
      const row = await area.get(ctx, callerOf(page), idOf(req));
      const base = envPath(page.environment, area.path);
      return sendPage(reply, page, {
        title: `${area.noun} ${row.id}`,
        section: area.path,
        body: html`${summaryCard(row, area.summary(row))}${await history(ctx, page, row.id)}<p><a
              href="${base}">All ${area.title.toLowerCase()}</a></p>`,
      });
    });
  }

  getPage(app, ctx, '/console/:env/earn-positions', async (req, reply, page) => {
    const list = await listPositions(ctx.db, callerOf(page), { limit: pageSize, cursor: cursorOf(req) });
    const earn = envPath(page.environment, '/earn');
    return sendListPage(reply, page, {
      title: 'Earn positions',
      section: '/earn-positions',
      intro: html`What each earn order holds now. The order's page has its history and ledger entries.`,
      columns: [
        {
          label: 'Position',
          cell: (r: Row) =>
            html`${shortId(String(r.id))}<br><a href="${earn}/${r.order_id}">Order ${shortId(String(r.order_id))}</a>`,
        },
        { label: 'Product', cell: (r) => html`${code(r.product_id)}<br><span class="mono">${r.type}</span>` },
        { label: 'Principal', cell: (r) => money(r.principal, r.asset), num: true },
        { label: 'Interest accrued', cell: (r) => money(r.interest_accrued, r.asset), num: true },
        { label: 'Status', cell: (r) => statusBadge(String(r.status)) },
        { label: 'Matures', cell: (r) => when(r.matures_at) },
      ],
      rows: list,
      empty: 'No earn positions in this environment yet.',
    });
  });
}
