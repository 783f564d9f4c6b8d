import type { ServiceContext } from '../service-context.js';
import { formatAmount, minorFromDb } from '../money/index.js';
import { html, type HtmlPart } from '../modules/hosted-screens/index.js';
import type { PageRequest } from './http.js';
import { objectEntries, objectEvents } from './queries/area-reads.js';
import { envPath, table, when } from './views.js';

/** An order's state history (its events) and its ledger entries, each posting with its account. */
export async function history(ctx: ServiceContext, page: PageRequest, objectId: string): Promise<HtmlPart> {
  const [events, postings] = await Promise.all([
    objectEvents(ctx.db, page.session.merchantId, page.environment, objectId),
    objectEntries(ctx.db, page.session.merchantId, page.environment, objectId),
  ]);
  type E = (typeof events)[number];
  type P = (typeof postings)[number];
  const account = (p: P) =>
    html`${p.owner_type} · ${p.bucket}${p.owner_id ? html`<br><span class="mono">${p.owner_id}</span>` : ''}`;
  const amount = (p: P, side: 'debit' | 'credit') => {
    const minor = minorFromDb(p.amount);
    return (side === 'debit') === minor > 0n ? `${formatAmount(minor < 0n ? -minor : minor, p.scale)} ${p.asset}` : '';
  };
  return html`<h2>State history</h2>${table(
    'Events',
    [
      { label: 'Time', cell: (e: E) => when(e.created_at) },
      {
        label: 'Event',
        cell: (e) => html`<a href="${envPath(page.environment, `/events/${e.id}`)}"><code>${e.type}</code></a>`,
      },
      { label: 'Status', cell: (e) => e.status },
      { label: 'Version', cell: (e) => String(e.status_version), num: true },
    ],
    events,
    'No events.',
  )}<h2>Ledger entries</h2>${table(
    'Postings',
    [
      {
        label: 'Entry',
        cell: (p: P) => html`<code>${p.kind}</code><br><span class="mono">${when(p.created_at)}</span>`,
      },
      { label: 'Account', cell: account },
      { label: 'Debit', cell: (p) => amount(p, 'debit'), num: true },
      { label: 'Credit', cell: (p) => amount(p, 'credit'), num: true },
    ],
    postings,
    'No ledger entries.',
  )}`;
}
