import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { html } from '../modules/hosted-screens/index.js';
import { memberBalances } from '../modules/balances/index.js';
import { confirmWithdrawal, failWithdrawal, getWithdrawal, listWithdrawals } from '../modules/withdrawals/index.js';
import { attempt, callerOf, cursorOf, redirect, type PageRequest } from './http.js';
import { auditPage } from './audit.js';
import { listMembers } from './queries/area-reads.js';
import { history } from './history.js';
import { can } from './rules.js';
import {
  askFirst,
  badge,
  envPath,
  sendConfirmPage,
  sendListPage,
  sendPage,
  shortId,
  shortText,
  when,
  listTable,
} from './views.js';
import { selectInput } from './fields.js';
import { getPage, postChange } from './guards.js';

/**
 * Money: members with their balances and KYC level (the balances page, with its "as of" date and
 * monitors, is ledger-pages.ts), withdrawals (confirm and fail through the withdrawals area's own
 * functions, which post the ledger entry and the event in the same transaction as the audit line).
 * Deposits: deposit-pages.ts.
 */

export function registerMoneyPages(app: AppInstance, ctx: ServiceContext): void {
  getPage(app, ctx, '/console/:env/members', async (req, reply, page) => {
    const list = await listMembers(ctx.db, page.session.merchantId, page.environment, {
      limit: 25,
      cursor: cursorOf(req),
    });
    const balances = new Map(
      await Promise.all(
        list.data.map(async (m) => [m.id, await memberBalances(ctx.db, page.environment, m.id)] as const),
      ),
    );
    return sendListPage(reply, page, {
      title: 'Members',
      section: '/members',
      columns: [
        { label: 'Member', cell: (m) => html`<code>${m.external_member_id}</code><br>${shortId(m.id)}` },
        { label: 'Status', cell: (m) => badge(m.status, m.status === 'active' ? 'ok' : 'bad') },
        { label: 'KYC level', cell: (m) => String(m.kyc_level), num: true },
        {
          label: 'Balances',
          cell: (m) => {
            const b = balances.get(m.id) ?? [];
            return b.length === 0
              ? 'none'
              : html`<ul>${b.map(
                  (x) =>
                    html`<li>${x.asset}: ${x.available} available${
                      x.frozen !== '0' && !/^0(\.0+)?$/.test(x.frozen) ? `, ${x.frozen} frozen` : ''
                    }${/^0(\.0+)?$/.test(x.withdrawing) ? '' : `, ${x.withdrawing} withdrawing`}</li>`,
                )}</ul>`;
          },
        },
        { label: 'Created', cell: (m) => when(m.created_at) },
      ],
      rows: list,
      empty: 'No members in this environment yet.',
    });
  });

  getPage(app, ctx, '/console/:env/withdrawals', (req, reply, page) => withdrawalsPage(ctx, req, reply, page));

  for (const action of ['confirm', 'fail'] as const) {
    postChange(app, ctx, `/console/:env/withdrawals/:id/${action}`, 'withdrawals.write', async (req, reply, page) => {
      const id = (req.params as { id: string }).id;
      const r = await attempt(ctx, async (trx) => {
        const done =
          action === 'confirm'
            ? await confirmWithdrawal(trx, callerOf(page), id)
            : await failWithdrawal(trx, callerOf(page), id);
        await auditPage(trx, page, `withdrawal.${action}`, done.id, `status ${done.status}`);
        return done;
      });
      if (!r.ok)
        return withdrawalsPage(ctx, req, reply, page, { problem: `Withdrawal ${shortText(id)}: ${r.problem}` }, 400);
      return redirect(
        reply,
        `${envPath(page.environment, '/withdrawals')}?done=${action === 'confirm' ? 'settled' : 'failed'}` +
          `&id=${encodeURIComponent(id)}`,
      );
    });

    // The step before: a page that names the withdrawal, its money and where it goes.
    getPage(app, ctx, `/console/:env/withdrawals/:id/${action}`, async (req, reply, page) => {
      const w = await getWithdrawal(ctx.db, callerOf(page), (req.params as { id: string }).id);
      const base = envPath(page.environment, '/withdrawals');
      const refused = !can(page.session.role, 'withdrawals.write')
        ? `Your role (${page.session.role}) cannot confirm or fail a withdrawal.`
        : w.status !== 'locked'
          ? `This withdrawal is ${w.status} already.`
          : undefined;
      return sendConfirmPage(reply, page, {
        title: action === 'confirm' ? 'Confirm the payout?' : 'Fail the withdrawal?',
        section: '/withdrawals',
        refused,
        question:
          action === 'confirm'
            ? html`Confirm that you paid out withdrawal ${shortText(w.id)}: ${w.amount} ${w.asset} to ${
                w.network
              } ${w.address}? The member's money leaves for good.`
            : html`Fail withdrawal ${shortText(w.id)} for ${w.amount} ${w.asset}? The member gets the money back;
                   the withdrawal cannot be confirmed afterwards.`,
        facts: [
          ['Withdrawal', html`<code>${w.id}</code>`],
          ['Member', html`<code>${w.member_id}</code>`],
          ['Amount', `${w.amount} ${w.asset} (fee ${w.fee})`],
          ['To', html`${w.network} <code>${w.address}</code>`],
          ['Created', when(w.created_at)],
        ],
        action: `${base}/${w.id}/${action}`,
        button:
          action === 'confirm'
            ? `Yes, confirm the payout of ${w.amount} ${w.asset}`
            : `Yes, fail it and return ${w.amount} ${w.asset}`,
        danger: action === 'fail',
        back: `${base}/${w.id}`,
      });
    });
  }

  getPage(app, ctx, '/console/:env/withdrawals/:id', async (req, reply, page) => {
    const w = await getWithdrawal(ctx.db, callerOf(page), (req.params as { id: string }).id);
    const base = envPath(page.environment, '/withdrawals');
    const canWrite = can(page.session.role, 'withdrawals.write') && w.status === 'locked';
    return sendPage(reply, page, {
      title: `Withdrawal ${w.id}`,
      section: '/withdrawals',
      body: html`<div class="card"><dl class="summary"><dt>Status</dt>
            <dd>${badge(w.status, w.status === 'settled' ? 'ok' : w.status === 'locked' ? 'warn' : 'bad')}</dd>
              <dt>Member</dt><dd><code>${w.member_id}</code></dd><dt>Amount</dt><dd>${w.amount} ${w.asset} (fee ${
                w.fee
              })</dd><dt>To</dt><dd>${w.network} <code>${w.address}</code></dd><dt>Created</dt>
                <dd>${when(w.created_at)}</dd>
  </dl>${
    canWrite
      ? html`<div class="actions">${askFirst(`${base}/${w.id}/confirm`, 'Confirm payout')}${askFirst(
          `${base}/${w.id}/fail`,
          'Fail',
          { danger: true },
        )}</div>`
      : ''
  }</div>${await history(ctx, page, w.id)}<p><a href="${base}">All withdrawals</a></p>`,
    });
  });
}

async function withdrawalsPage(
  ctx: ServiceContext,
  req: FastifyRequest,
  reply: FastifyReply,
  page: PageRequest,
  extra: { problem?: string } = {},
  status = 200,
) {
  const q = req.query as { status?: string; cursor?: string; done?: string; id?: string };
  const filter = (['locked', 'settled', 'failed'] as const).find((s) => s === q.status);
  const list = await listWithdrawals(ctx.db, callerOf(page), { limit: 25, cursor: q.cursor, status: filter });
  const canWrite = can(page.session.role, 'withdrawals.write');
  const base = envPath(page.environment, '/withdrawals');
  type W = (typeof list.data)[number];
  // The message names the withdrawal and its money, read back (a made-up id in the URL names nothing).
  const done = q.done && q.id ? await getWithdrawal(ctx.db, callerOf(page), q.id).catch(() => undefined) : undefined;
  const what = done ? `Withdrawal ${shortText(done.id)} for ${done.amount} ${done.asset}` : 'The withdrawal';
  const notice =
    q.done === 'settled'
      ? `${what} is confirmed (settled).`
      : q.done === 'failed'
        ? `${what} is failed; the member's money is available again.`
        : undefined;
  return sendPage(
    reply,
    page,
    {
      title: 'Withdrawals',
      section: '/withdrawals',
      notice,
      problem: extra.problem,
      body: html`<p>A withdrawal waits in <em>locked</em> until you confirm that you paid it out on chain, or fail it to
         give the member the money back.${canWrite ? '' : ' Only an owner can confirm or fail one.'}</p>
<form method="get" action="${base}" class="filters">${selectInput(
        'status',
        'Status',
        [
          { value: '', label: 'Any' },
          { value: 'locked', label: 'locked' },
          { value: 'settled', label: 'settled' },
          { value: 'failed', label: 'failed' },
        ],
        filter,
      )}<button type="submit" class="secondary">Filter</button></form>
${listTable(
  'Withdrawals, newest first',
  [
    { label: 'Withdrawal', cell: (w: W) => html`<a href="${base}/${w.id}">${shortId(w.id)}</a>` },
    { label: 'Member', cell: (w) => shortId(w.member_id) },
    // The fee under the amount: one column less keeps the status and the actions on a laptop's screen.
    { label: 'Amount', cell: (w) => html`${w.amount} ${w.asset}<br><span class="hint">fee ${w.fee}</span>`, num: true },
    { label: 'To', cell: (w) => html`${w.network} ${shortId(w.address)}` },
    {
      label: 'Status',
      cell: (w) => badge(w.status, w.status === 'settled' ? 'ok' : w.status === 'locked' ? 'warn' : 'bad'),
    },
    { label: 'Created', cell: (w) => when(w.created_at) },
    ...(canWrite
      ? [
          {
            label: 'Actions',
            cell: (w: W) =>
              w.status !== 'locked'
                ? ''
                : html`<div class="actions">${askFirst(`${base}/${w.id}/confirm`, 'Confirm payout')}${askFirst(
                    `${base}/${w.id}/fail`,
                    'Fail',
                    { danger: true },
                  )}</div>`,
          },
        ]
      : []),
  ],
  list,
  'No withdrawals match.',
  base,
  filter ? { status: filter } : {},
)}`,
    },
    status,
  );
}
