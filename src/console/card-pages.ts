import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { html } from '../modules/hosted-screens/index.js';
import {
  getCard,
  getReplacement,
  getTopUp,
  listReplacements,
  listTopUps,
  listTransactions,
} from '../modules/cards/index.js';
import { callerOf, cursorOf, type PageRequest } from './http.js';

import { history } from './history.js';
import { listMerchantCards } from './queries/area-reads.js';
import { envPath, idLink, sendListPage, sendPage, shortId, table, when, type Column } from './views.js';
import { code, idOf, money, pageSize, statusBadge, statusColumns, summaryCard, type Row } from './area-pages.js';
import { getPage } from './guards.js';

/**
 * The cards of every member, read only: a card's page with its top-ups, transactions and
 * replacements, and their own pages. Through the cards area's service, as the API reads them.
 */

/** The columns of a card's lists on its page (at most 50 rows each: the newest). */
const topUpColumns = (card: string): Column<Row>[] => [
  { label: 'Top-up', cell: (t) => idLink(`${card}/top-ups/${t.id}`, t.id) },
  { label: 'Pays', cell: (t) => money(t.customer_total, t.source_asset), num: true },
  { label: 'Arrives', cell: (t) => money(t.arrival_amount, t.card_currency), num: true },
  ...statusColumns,
];

const transactionColumns: Column<Row>[] = [
  {
    label: 'Transaction',
    cell: (t) =>
      html`${shortId(String(t.id))}${t.authorization_id ? html`<br>of ${shortId(String(t.authorization_id))}` : ''}`,
  },
  { label: 'Type', cell: (t) => t.type },
  {
    label: 'At',
    cell: (t) => html`${t.merchant_name}${t.mcc ? html`<br><span class="mono">MCC ${t.mcc}</span>` : ''}`,
  },
  { label: 'Amount', cell: (t) => money(t.amount, t.currency), num: true },
  {
    label: 'Status',
    cell: (t) =>
      html`${statusBadge(String(t.status))}${
        t.decline_reason ? html`<br><span class="mono">${t.decline_reason}</span>` : ''
      }`,
  },
  { label: 'Created', cell: (t) => when(t.created_at) },
];

const replacementColumns = (page: PageRequest, card: string): Column<Row>[] => [
  { label: 'Replacement', cell: (r) => idLink(`${card}/replacements/${r.id}`, r.id) },
  { label: 'Reason', cell: (r) => r.reason },
  {
    label: 'New card',
    cell: (r) => (r.new_card_id ? idLink(envPath(page.environment, `/cards/${r.new_card_id}`), r.new_card_id) : ''),
  },
  ...statusColumns,
];

export function registerCardPages(app: AppInstance, ctx: ServiceContext): void {
  getPage(app, ctx, '/console/:env/cards', async (req, reply, page) => {
    const list = await listMerchantCards(ctx.db, page.session.merchantId, page.environment, {
      limit: pageSize,
      cursor: cursorOf(req),
    });
    const base = envPath(page.environment, '/cards');
    return sendListPage(reply, page, {
      title: 'Cards',
      section: '/cards',
      intro: html`Your members' cards. A card's page has its top-ups, transactions and replacements.`,
      columns: [
        {
          label: 'Card',
          cell: (c) =>
            html`${idLink(`${base}/${c.id}`, c.id)}${
              c.last4 ? html` <span class="mono">•••• ${c.last4}</span>` : ''
            }<br>${shortId(c.member_id)}`,
        },
        { label: 'Form', cell: (c) => `${c.form_factor}, ${c.currency}` },
        { label: 'Status', cell: (c) => statusBadge(c.status) },
        { label: 'Created', cell: (c) => when(c.created_at) },
      ],
      rows: list,
      empty: 'No cards in this environment yet.',
    });
  });

  getPage(app, ctx, '/console/:env/cards/:id', async (req, reply, page) => {
    const caller = callerOf(page);
    const card = (await getCard(ctx.db, caller, idOf(req))) as Row;
    const base = envPath(page.environment, `/cards/${card.id}`);
    const [topUps, transactions, replacements] = await Promise.all([
      listTopUps(ctx.db, caller, card.id, { limit: 50 }),
      listTransactions(ctx.db, caller, card.id, { limit: 50 }),
      listReplacements(ctx.db, caller, { limit: 50, card_id: card.id }),
    ]);
    return sendPage(reply, page, {
      title: `Card ${card.id}`,
      section: '/cards',
      body: html`${summaryCard(card, [
        ['Form', `${card.form_factor}, ${card.currency}, ${card.scheme ?? ''}`],
        ['Expires', card.exp_month ? `${card.exp_month}/${card.exp_year}` : ''],
        ['Inventory', card.inventory_status ?? ''],
        ['Application', code(card.application_id)],
        ['Activated', when(card.activated_at)],
      ])}
<h2>Top-ups</h2>${table('Top-ups of this card, newest first', topUpColumns(base), topUps.data as Row[], 'No top-ups.')}
<h2>Transactions</h2>${table(
        'Card transactions, newest first',
        transactionColumns,
        transactions.data as Row[],
        'No transactions.',
      )}
<h2>Replacements</h2>${table(
        'Replacements of this card',
        replacementColumns(page, base),
        replacements.data as Row[],
        'No replacements.',
      )}
${await history(ctx, page, card.id)}<p><a href="${envPath(page.environment, '/cards')}">All cards</a></p>`,
    });
  });

  getPage(app, ctx, '/console/:env/cards/:card/top-ups/:id', async (req, reply, page) => {
    const t = (await getTopUp(ctx.db, callerOf(page), idOf(req, 'card'), idOf(req))) as Row;
    return sendPage(reply, page, {
      title: `Card top-up ${t.id}`,
      section: '/cards',
      body: html`${summaryCard(t, [
        ['Card', code(t.card_id)],
        ['Amount', money(t.amount, t.source_asset)],
        ['Fee', money(t.fee, t.source_asset)],
        ['Member pays', money(t.customer_total, t.source_asset)],
        ['Arrives', money(t.arrival_amount, t.card_currency)],
        ['Credited', when(t.credited_at)],
        ['Failure', t.failure_reason ?? ''],
      ])}${await history(ctx, page, t.id)}<p><a href="${envPath(page.environment, `/cards/${t.card_id}`)}">The
             card</a></p>`,
    });
  });

  getPage(app, ctx, '/console/:env/cards/:card/replacements/:id', async (req, reply, page) => {
    const r = (await getReplacement(ctx.db, callerOf(page), idOf(req))) as Row;
    return sendPage(reply, page, {
      title: `Card replacement ${r.id}`,
      section: '/cards',
      body: html`${summaryCard(r, [
        ['Card', code(r.card_id)],
        ['Reason', r.reason],
        ['New card', code(r.new_card_id)],
        ['Returned', money(r.returned_amount, r.asset)],
        ['Completed', when(r.completed_at)],
        ['Failure', r.failure_reason ?? ''],
      ])}${await history(ctx, page, r.id)}<p><a href="${envPath(page.environment, `/cards/${r.card_id}`)}">The
             card</a></p>`,
    });
  });
}
