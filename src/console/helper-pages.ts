// Over 300 lines: one page (the sandbox helpers) and the handlers of its forms, each re-rendering it with its
// answer or problem.
import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { ApiError } from '../platform/errors.js';
import { validatorCompiler } from '../platform/http/validation.js';
import { completeInSandbox, html, type HtmlPart } from '../modules/hosted-screens/index.js';
import { AuthorizationBodySchema, authorize, sandboxAdvance, sandboxShip } from '../modules/cards/index.js';
import { sandboxReview } from '../modules/kyc/index.js';
import { attempt, callerOf } from './http.js';

import { formOf, one } from './form.js';
import { audit } from './audit.js';
import { listMerchantApplications } from './queries/area-reads.js';
import { can } from './rules.js';
import { envPath, sendPage, table, when } from './views.js';
import { csrfInput, selectInput, textInput } from './fields.js';
import { statusBadge } from './area-pages.js';
import { getSandboxPage, postSandboxChange } from './sandbox-only.js';
import type { RedrawnPage } from './guards.js';

/**
 * The sandbox test helpers of extensions 8 from the console: a card application decided, a
 * physical card shipped, a card authorisation, a KYC review. Each calls the very function its
 * sandbox API route calls (no rule of its own) and records an audit line; only owners and
 * developers may (checked on the server: sandbox-only.ts), and only in the sandbox.
 *
 * The application decision, the shipping and the KYC review run their own transactions inside
 * their areas (as the API calls them), so their audit line follows the change; the authorisation
 * takes the caller's transaction and its audit line commits with it.
 */

const base = envPath('sandbox', '/helpers');

/** The API route's own body validator (the same compiled Ajv check), so the page accepts what the call accepts. */
const validAuthorization = validatorCompiler({
  schema: AuthorizationBodySchema,
  httpPart: 'body',
  method: 'POST',
  url: '',
} as never) as unknown as (body: unknown) => boolean;

const helpersPage: RedrawnPage = async (ctx, _req, reply, page, extra = {}, status = 200) => {
  const canWrite = can(page.session.role, 'sandbox.write');
  const applications = await listMerchantApplications(ctx.db, page.session.merchantId, 'sandbox', 10);
  type A = (typeof applications)[number];
  const form = (action: string, fields: HtmlPart, button: string) =>
    canWrite
      ? html`<form method="post" action="${base}/${action}">${csrfInput(page)}${fields}<div class="actions"><button
        type="submit">${button}</button></div></form>`
      : '';
  return sendPage(
    reply,
    page,
    {
      title: 'Sandbox test helpers',
      section: '/helpers',
      ...extra,
      body: html`<p>What the card issuer, the card network and the KYC reviewer would do, for your sandbox members. Each
         does exactly what its sandbox API call does and is recorded in the audit log.${
           canWrite ? '' : ' Only an owner or a developer can use them.'
         }</p>
<div class="card"><h2>Card application decision</h2><p>The issuer decides a <em>pending</em> application: approved opens
   the card and charges the fee, rejected refunds it, documents needed opens a supplement.</p>${table(
     'Newest card applications',
     [
       { label: 'Application', cell: (a: A) => html`<code>${a.id}</code>` },
       { label: 'Member', cell: (a) => html`<code>${a.member_id}</code>` },
       { label: 'Status', cell: (a) => statusBadge(a.status) },
       { label: 'Created', cell: (a) => when(a.created_at) },
     ],
     applications,
     'No card applications yet.',
   )}${form(
     'application',
     html`${textInput('application_id', 'Application', { required: true, hint: 'cap_… id' })}${selectInput(
       'to',
       'Decision',
       [
         { value: 'approved', label: 'approved' },
         { value: 'rejected', label: 'rejected' },
         { value: 'need_docs', label: 'documents needed' },
       ],
     )}`,
     'Decide application',
   )}</div>
<div class="card"><h2>Ship a physical card</h2>${form(
        'ship',
        textInput('card_id', 'Card', {
          required: true,
          hint: 'crd_… id of a physical card in production',
          id: 'f-ship-card_id',
        }),
        'Mark shipped',
      )}</div>
<div class="card"><h2>Card authorisation</h2><p>The card network asks to authorise a purchase; the card's rules, limits
   and balance decide.</p>${form(
     'authorization',
     html`${textInput('card_id', 'Card', {
       required: true,
       hint: 'crd_… id',
       id: 'f-authorization-card_id',
     })}${textInput('amount', 'Amount', {
       required: true,
       hint: 'In the card currency, e.g. 12.50',
       inputMode: 'numeric',
     })}${textInput('merchant_name', 'Shop name', {
       required: true,
     })}${textInput('mcc', 'MCC', { required: true, hint: 'Four digits, e.g. 5411', inputMode: 'numeric' })}`,
     'Authorise',
   )}</div>
<div class="card"><h2>KYC review</h2><p>The reviewer decides the member's submission waiting for review.</p>${form(
        'kyc',
        html`${textInput('member', 'Member', {
          required: true,
          hint: 'mem_… id or your external member id',
        })}${selectInput('decision', 'Decision', [
          { value: 'approved', label: 'approved' },
          { value: 'rejected', label: 'rejected' },
        ])}${selectInput('level', 'Level (when approved)', [
          { value: '1', label: '1' },
          { value: '2', label: '2' },
        ])}`,
        'Decide review',
      )}</div>
<div class="card"><h2>Complete a hosted screen</h2><p>As if the member had used the screen: <em>submitted</em> for the
   KYC, profile update and card supplement screens, <em>approved</em> or <em>declined</em> for a step-up
      challenge.</p>${form(
        'hosted-screen',
        html`${textInput('ticket_id', 'Ticket', {
          required: true,
          hint: 'kyc_… id of a hosted-screen ticket',
        })}${selectInput(
          'outcome',
          'Outcome',
          screenOutcomes.map((o) => ({ value: o, label: o })),
        )}`,
        'Complete screen',
      )}</div>`,
    },
    status,
  );
};

/** Runs a helper that commits on its own, then its audit line; an ApiError is the page's problem. */
async function selfCommitting<T>(
  ctx: ServiceContext,
  effect: () => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; problem: string }> {
  try {
    return { ok: true, value: await effect() };
  } catch (err) {
    const api = err instanceof ApiError ? err : ctx.mapDomainError(err);
    if (!api) throw err;
    return { ok: false, problem: api.message };
  }
}

/** The hosted screens, as the sandbox API call completes them (src/routes.ts builds the registry). */
export type HostedScreenRegistry = Parameters<typeof completeInSandbox>[2];
const screenOutcomes = ['submitted', 'approved', 'declined'] as const;

export function registerHelperPages(app: AppInstance, ctx: ServiceContext, screens: HostedScreenRegistry): void {
  getSandboxPage(app, ctx, '/console/:env/helpers', (req, reply, page) => helpersPage(ctx, req, reply, page));

  postSandboxChange(app, ctx, '/console/:env/helpers/application', async (req, reply, page) => {
    const form = formOf(req);
    const to = one(form, 'to');
    if (to !== 'approved' && to !== 'rejected' && to !== 'need_docs')
      return helpersPage(ctx, req, reply, page, { problem: 'Choose a decision.' }, 400);
    const r = await selfCommitting(ctx, () =>
      sandboxAdvance(ctx, callerOf(page), one(form, 'application_id').trim(), to),
    );
    if (!r.ok) return helpersPage(ctx, req, reply, page, { problem: r.problem }, 400);
    const done = r.value as { id: string; status: string };
    await audit(
      ctx.db,
      page.session,
      'sandbox',
      'sandbox.card_application_advance',
      done.id,
      `to ${to}, status ${done.status}`,
      page.now,
    );
    return helpersPage(ctx, req, reply, page, { notice: `Application ${done.id} is now ${done.status}.` });
  });

  postSandboxChange(app, ctx, '/console/:env/helpers/ship', async (req, reply, page) => {
    const r = await selfCommitting(ctx, () => sandboxShip(ctx, callerOf(page), one(formOf(req), 'card_id').trim()));
    if (!r.ok) return helpersPage(ctx, req, reply, page, { problem: r.problem }, 400);
    const card = r.value as { id: string; inventory_status: string | null };
    await audit(
      ctx.db,
      page.session,
      'sandbox',
      'sandbox.card_ship',
      card.id,
      `inventory ${card.inventory_status}`,
      page.now,
    );
    return helpersPage(ctx, req, reply, page, {
      notice: `Card ${card.id} is ${card.inventory_status ?? 'not physical'}.`,
    });
  });

  postSandboxChange(app, ctx, '/console/:env/helpers/authorization', async (req, reply, page) => {
    const form = formOf(req);
    const body = {
      amount: one(form, 'amount').trim(),
      merchant_name: one(form, 'merchant_name').trim(),
      mcc: one(form, 'mcc').trim(),
    };
    // The API route's own body schema, so the page accepts what the call accepts.
    if (!validAuthorization(body))
      return helpersPage(ctx, req, reply, page, { problem: 'Give an amount, a shop name and a four-digit MCC.' }, 400);
    const cardId = one(form, 'card_id').trim();
    const r = await attempt(ctx, async (trx) => {
      const answer = await authorize(ctx, trx, callerOf(page), cardId, body);
      await audit(
        trx,
        page.session,
        'sandbox',
        'sandbox.card_authorization',
        answer.transaction_id,
        `card ${cardId}, ${body.amount}, ${answer.approved ? 'approved' : `declined ${answer.decline_reason ?? ''}`}`,
        page.now,
      );
      return answer;
    });
    if (!r.ok) return helpersPage(ctx, req, reply, page, { problem: r.problem }, 400);
    return helpersPage(ctx, req, reply, page, {
      notice: r.value.approved
        ? `Approved: transaction ${r.value.transaction_id}.`
        : `Declined (${r.value.decline_reason ?? 'no reason'}): transaction ${r.value.transaction_id}.`,
    });
  });

  postSandboxChange(app, ctx, '/console/:env/helpers/kyc', async (req, reply, page) => {
    const form = formOf(req);
    const decision = one(form, 'decision');
    const level = one(form, 'level') === '2' ? 2 : 1;
    if (decision !== 'approved' && decision !== 'rejected')
      return helpersPage(ctx, req, reply, page, { problem: 'Choose a decision.' }, 400);
    const member = one(form, 'member').trim();
    if (member === '' || member.length > 100)
      return helpersPage(ctx, req, reply, page, { problem: 'Name the member.' }, 400);
    const r = await selfCommitting(ctx, () =>
      sandboxReview(ctx, callerOf(page), member, decision === 'approved' ? { decision, level } : { decision }),
    );
    if (!r.ok) return helpersPage(ctx, req, reply, page, { problem: r.problem }, 400);
    await audit(
      ctx.db,
      page.session,
      'sandbox',
      'sandbox.kyc_review',
      member,
      decision === 'approved' ? `approved, level ${level}` : 'rejected',
      page.now,
    );
    return helpersPage(ctx, req, reply, page, { notice: `The review of ${member} is ${decision}.` });
  });

  postSandboxChange(app, ctx, '/console/:env/helpers/hosted-screen', async (req, reply, page) => {
    const form = formOf(req);
    const outcome = one(form, 'outcome') as (typeof screenOutcomes)[number];
    if (!screenOutcomes.includes(outcome))
      return helpersPage(ctx, req, reply, page, { problem: 'Choose an outcome.' }, 400);
    const ticketId = one(form, 'ticket_id').trim();
    if (ticketId === '' || ticketId.length > 100)
      return helpersPage(ctx, req, reply, page, { problem: 'Name the ticket.' }, 400);
    const r = await attempt(ctx, async (trx) => {
      const state = await completeInSandbox(ctx, trx, screens, callerOf(page), ticketId, outcome);
      await audit(trx, page.session, 'sandbox', 'sandbox.hosted_screen_complete', ticketId, outcome, page.now);
      return state;
    });
    if (!r.ok) return helpersPage(ctx, req, reply, page, { problem: r.problem }, 400);
    return helpersPage(ctx, req, reply, page, {
      notice: `Ticket ${ticketId} is ${(r.value as { status: string }).status}.`,
    });
  });
}
