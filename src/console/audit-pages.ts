import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { html } from '../modules/hosted-screens/index.js';
import { auditPage } from './queries/audit.js';
import { can } from './rules.js';
import { envPath, realTimeMark, sendPage, shortId, when, listTable } from './views.js';
import { refusedPage, getPage } from './guards.js';

/** The audit log (audit.ts writes it): every change made through the console, which only an owner reads. */

export function registerAuditPages(app: AppInstance, ctx: ServiceContext): void {
  getPage(app, ctx, '/console/:env/audit', async (req, reply, page) => {
    if (!can(page.session.role, 'audit.read')) return refusedPage(page, reply, 'role');
    const list = await auditPage(ctx.db, page.session.merchantId, page.environment, {
      limit: 50,
      cursor: (req.query as { cursor?: string }).cursor,
    });
    type A = (typeof list.data)[number];
    return sendPage(reply, page, {
      title: 'Audit log',
      section: '/audit',
      body: html`<p>Every change made through the console in the ${page.environment}, with who made it. Newest
             first.</p>${listTable(
               'Changes',
               [
                 { label: `Time${realTimeMark(page)}`, cell: (a: A) => when(a.created_at) },
                 { label: 'User', cell: (a) => a.user_email },
                 { label: 'Change', cell: (a) => html`<code>${a.action}</code>` },
                 { label: 'Object', cell: (a) => shortId(a.object_id) },
                 { label: 'Detail', cell: (a) => a.detail },
               ],
               list,
               'No changes yet.',
               envPath(page.environment, '/audit'),
             )}`,
    });
  });
}
