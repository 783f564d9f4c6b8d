import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { ApiError } from '../platform/errors.js';
import { html } from '../modules/hosted-screens/index.js';
import { createMonitor, deleteMonitor, getMonitor, listMonitors, merchantBalances } from '../modules/balances/index.js';
import { entryPage } from '../modules/ledger-entries/index.js';
import { resolveMember } from '../modules/members/index.js';
import { attempt, redirect, type PageRequest } from './http.js';
import { formOf, one } from './form.js';
import { auditPage } from './audit.js';
import { can, refusalFor } from './rules.js';
import { askFirst, badge, envPath, sendConfirmPage, sendPage, shortId, table, when, listTable } from './views.js';
import { csrfInput, selectInput, textInput } from './fields.js';
import { getPage, postChange, type RedrawnPage } from './guards.js';

/**
 * Money over time (extensions 13): the balances with an "as of" date and the balance monitors,
 * the merchant's journal (exports: export-pages.ts). No script: every action is
 * a link or a form, every change a POST with the CSRF field.
 */

const scopeOf = (page: PageRequest) => ({ merchantId: page.session.merchantId, environment: page.environment });
const queryOf = (req: FastifyRequest) => req.query as Record<string, string | undefined>;

/** A `datetime-local` value (no zone) read as UTC; a full ISO 8601 time is taken as given. */
export function instant(value: string | undefined): Date | undefined | 'bad' {
  if (!value) return undefined;
  const text = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)
    ? `${value}Z`
    : /^\d{4}-\d{2}-\d{2}$/.test(value)
      ? `${value}T00:00:00Z`
      : value;
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? 'bad' : d;
}

const balancesPage: RedrawnPage = async (ctx, req, reply, page, extra = {}, status = 200) => {
  const scope = scopeOf(page);
  const asOfText = queryOf(req).as_of;
  let asOf = instant(asOfText);
  let problem = extra.problem;
  if (asOf === 'bad') {
    problem = 'The "as of" date is not a date and time.';
    asOf = undefined;
  }
  if (asOf && asOf.getTime() > (await ctx.clock.now(ctx.db, scope)).getTime()) {
    problem = 'The "as of" date is in the future.';
    asOf = undefined;
  }
  const balances = await merchantBalances(ctx.db, page.environment, page.session.merchantId, asOf);
  const monitors = (await listMonitors(ctx.db, scope, { limit: 100 })).data;
  const base = envPath(page.environment);
  const canWrite = can(page.session.role, 'monitors.write');
  type B = (typeof balances)[number];
  type M = (typeof monitors)[number];
  return sendPage(
    reply,
    page,
    {
      title: 'Balances',
      section: '',
      problem,
      notice: extra.notice,
      body: html`<p>The merchant's own balances in the ${page.environment}: custody (what the merchant holds for its
         members) and prepaid (what it has paid in for fees and payouts).</p>
<form method="get" action="${base}" class="filters">${textInput('as_of', 'As of (UTC)', {
        type: 'datetime-local',
        value: asOf ? asOf.toISOString().slice(0, 16) : '',
        hint: 'Empty: now. The balances as they were at that moment.',
      })}<button type="submit" class="secondary">Show</button></form>${table(
        asOf ? `Merchant balances as of ${when(asOf)}` : 'Merchant balances',
        [
          { label: 'Asset', cell: (b: B) => b.asset },
          { label: 'Custody', cell: (b) => b.custody, num: true },
          { label: 'Prepaid available', cell: (b) => b.prepaid_available, num: true },
        ],
        balances,
        asOf ? 'No money had moved in this environment by then.' : 'No money has moved in this environment yet.',
      )}
<h2>Balance monitors</h2><p>A monitor sends <code>balance_monitor.triggered</code> once when the balance falls below its
   threshold and <code>balance_monitor.resolved</code> once when it is back at or above it.</p>${table(
     'Monitors',
     [
       { label: 'Balance', cell: (m: M) => m.balance },
       { label: 'Asset', cell: (m) => m.asset },
       { label: 'Below', cell: (m) => m.below, num: true },
       { label: 'State', cell: (m) => badge(m.state, m.state === 'ok' ? 'ok' : 'bad') },
       { label: '', cell: (m) => (canWrite ? askFirst(`${base}/balance-monitors/${m.id}/delete`, 'Remove') : '') },
     ],
     monitors,
     'No monitors.',
   )}${
     canWrite
       ? html`<form method="post" action="${base}/balance-monitors" class="card"><h3>New monitor</h3>${csrfInput(
           page,
         )}${selectInput('balance', 'Balance', [
           { value: 'prepaid', label: 'Prepaid' },
           { value: 'custody', label: 'Custody' },
         ])}${textInput('asset', 'Asset', {
           required: true,
           hint: 'e.g. USDT',
         })}${textInput('below', 'Below', { required: true, hint: 'A decimal amount of the asset' })}<button
              type="submit">Add monitor</button></form>`
       : ''
   }`,
    },
    status,
  );
};

async function ledgerPage(ctx: ServiceContext, req: FastifyRequest, reply: FastifyReply, page: PageRequest) {
  const q = queryOf(req);
  const scope = scopeOf(page);
  const filters = { member_id: q.member_id ?? '', asset: q.asset ?? '', reference_id: q.reference_id ?? '' };
  let memberId: string | undefined;
  let none = false;
  if (filters.member_id) {
    const m = /^[A-Za-z0-9_.:-]{1,100}$/.test(filters.member_id)
      ? await resolveMember(ctx.db, scope.merchantId, scope.environment, filters.member_id)
      : undefined;
    if (m) memberId = m.id;
    else none = true;
  }
  const list = none
    ? { data: [], next_cursor: null, has_more: false }
    : await entryPage(
        ctx.db,
        {
          ...scope,
          memberId,
          asset: filters.asset ? filters.asset.toUpperCase() : undefined,
          referenceId: filters.reference_id || undefined,
        },
        { limit: 25, cursor: q.cursor },
      );
  const base = envPath(page.environment, '/ledger');
  type E = (typeof list.data)[number];
  return sendPage(reply, page, {
    title: 'Ledger',
    section: '/ledger',
    body: html`<p>Every journal entry of the merchant, newest first: each moves one asset, its debits equal its
         credits. <code>platform:…</code> lines are the platform's side of your business.</p>
<form method="get" action="${base}" class="filters">${textInput('member_id', 'Member', {
      value: filters.member_id,
      hint: 'mem_… or your external id',
    })}${textInput('asset', 'Asset', {
      value: filters.asset,
    })}${textInput('reference_id', 'Reference', { value: filters.reference_id, hint: 'dep_…, wdr_…' })}<button
        type="submit" class="secondary">Filter</button></form>${listTable(
          'Journal entries',
          [
            { label: 'Created', cell: (e: E) => when(e.created_at) },
            { label: 'Entry', cell: (e) => html`<code>${e.kind}</code><br>${shortId(e.id)}` },
            { label: 'Reference', cell: (e) => html`${e.reference.object} ${shortId(e.reference.id)}` },
            {
              label: 'Lines',
              cell: (e) =>
                html`<ul>${e.lines.map(
                  (l) =>
                    html`<li>${l.account.owner} ${
                      l.account.owner === 'member'
                        ? html`${shortId(l.account.owner_id)}
                     `
                        : ''
                    }${l.account.bucket}: ${
                      /^0(\.0+)?$/.test(l.debit) ? `credit ${l.credit}` : `debit ${l.debit}`
                    } ${l.asset}</li>`,
                )}</ul>`,
            },
          ],
          list,
          'No entries.',
          base,
          Object.fromEntries(Object.entries(filters).filter(([, v]) => v)),
        )}`,
  });
}

export function registerLedgerPages(app: AppInstance, ctx: ServiceContext): void {
  getPage(app, ctx, '/console/:env', (req, reply, page) => balancesPage(ctx, req, reply, page));

  postChange(app, ctx, '/console/:env/balance-monitors', 'monitors.write', async (req, reply, page) => {
    const form = formOf(req);
    const balance = one(form, 'balance') === 'custody' ? ('custody' as const) : ('prepaid' as const);
    const r = await attempt(ctx, async (trx) => {
      const m = await createMonitor(trx, ctx.clock, scopeOf(page), {
        balance,
        asset: one(form, 'asset').trim(),
        below: one(form, 'below').trim(),
      });
      await auditPage(trx, page, 'balance_monitor.create', m.id, `${m.balance} ${m.asset} below ${m.below}`);
      return m;
    });
    if (!r.ok) return balancesPage(ctx, req, reply, page, { problem: r.problem }, 400);
    return redirect(reply, envPath(page.environment));
  });

  // Removing a monitor ends its state (a new one starts over): a page first names it.
  getPage(app, ctx, '/console/:env/balance-monitors/:id/delete', async (req, reply, page) => {
    const m = await getMonitor(ctx.db, scopeOf(page), (req.params as { id: string }).id);
    if (!m) throw new ApiError('not_found', 'No such balance monitor.');
    const base = envPath(page.environment);
    return sendConfirmPage(reply, page, {
      title: 'Remove the balance monitor?',
      section: '',
      refused: refusalFor(page.session.role, 'monitors.write', 'change balance monitors'),
      question: html`Remove the monitor of the ${m.balance} ${m.asset} balance below ${m.below}? No more
             balance_monitor events are sent for it.`,
      facts: [
        ['Monitor', html`<code>${m.id}</code>`],
        ['State', m.state],
      ],
      action: `${base}/balance-monitors/${m.id}/delete`,
      button: 'Yes, remove the monitor',
      danger: true,
      back: base,
    });
  });

  postChange(app, ctx, '/console/:env/balance-monitors/:id/delete', 'monitors.write', async (req, reply, page) => {
    const id = (req.params as { id: string }).id;
    const r = await attempt(ctx, async (trx) => {
      await deleteMonitor(trx, scopeOf(page), id);
      await auditPage(trx, page, 'balance_monitor.delete', id, '');
    });
    if (!r.ok) return balancesPage(ctx, req, reply, page, { problem: r.problem }, 400);
    return redirect(reply, envPath(page.environment));
  });

  getPage(app, ctx, '/console/:env/ledger', (req, reply, page) => ledgerPage(ctx, req, reply, page));
}
