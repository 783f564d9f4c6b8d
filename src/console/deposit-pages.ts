import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { html } from '../modules/hosted-screens/index.js';

import { getDeposit, listDeposits } from '../modules/deposits/index.js';
import { callerOf, cursorOf } from './http.js';

import { history } from './history.js';

import { badge, envPath, idLink, sendListPage, sendPage, shortId, when } from './views.js';
import { getPage } from './guards.js';

/** Deposits, read only: the list and one deposit with its state history and ledger postings. */

export function registerDepositPages(app: AppInstance, ctx: ServiceContext): void {
  getPage(app, ctx, '/console/:env/deposits/:id', async (req, reply, page) => {
    const d = await getDeposit(ctx.db, callerOf(page), (req.params as { id: string }).id);
    return sendPage(reply, page, {
      title: `Deposit ${d.id}`,
      section: '/deposits',
      body: html`<div class="card"><dl class="summary"><dt>Status</dt><dd>${badge(d.status, 'ok')}</dd>
            <dt>Member</dt><dd><code>${d.member_id}</code></dd><dt>Amount</dt><dd>${d.amount} ${d.asset}</dd>
              <dt>Network</dt><dd>${d.network}</dd><dt>Transaction</dt><dd><code>${d.tx_hash}</code></dd>
                <dt>Created</dt><dd>${when(d.created_at)}</dd></dl></div>${await history(
                  ctx,
                  page,
                  d.id,
                )}<p><a href="${envPath(page.environment, '/deposits')}">All deposits</a></p>`,
    });
  });

  getPage(app, ctx, '/console/:env/deposits', async (req, reply, page) => {
    const list = await listDeposits(ctx.db, callerOf(page), { limit: 25, cursor: cursorOf(req) });
    return sendListPage(reply, page, {
      title: 'Deposits',
      section: '/deposits',
      columns: [
        { label: 'Deposit', cell: (d) => idLink(envPath(page.environment, `/deposits/${d.id}`), d.id) },
        { label: 'Member', cell: (d) => shortId(d.member_id) },
        { label: 'Amount', cell: (d) => `${d.amount} ${d.asset}`, num: true },
        { label: 'Network', cell: (d) => d.network },
        { label: 'Transaction', cell: (d) => shortId(d.tx_hash) },
        { label: 'Status', cell: (d) => badge(d.status, 'ok') },
        { label: 'Created', cell: (d) => when(d.created_at) },
      ],
      rows: list,
      empty: 'No deposits in this environment yet.',
    });
  });
}
