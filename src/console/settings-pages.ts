import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import type { TimedProcess } from '../jobs/types.js';
import { ApiError } from '../platform/errors.js';
import { injectedBehaviors, injectionTtlSeconds, upstreamNames } from '../upstreams/port.js';
import { html } from '../modules/hosted-screens/index.js';
import { advanceClock, advanceSecondsMax, presetBehavior, readClock, resetSandbox } from '../modules/sandbox/index.js';
import { attempt, csrfField } from './http.js';
import { formOf, one } from './form.js';
import { audit } from './audit.js';

import { presetsInForce } from './queries/area-reads.js';
import { can, refusalFor } from './rules.js';
import { askFirst, envPath, sendConfirmPage, sendPage, table, when } from './views.js';
import { durationOptions, selectInput } from './fields.js';
import { getSandboxPage, postSandboxChange } from './sandbox-only.js';
import type { RedrawnPage } from './guards.js';

/**
 * The sandbox tools (upstream behaviour, reset, the sandbox clock: the sandbox area's own
 * functions, as its API calls use them). The audit log: audit-pages.ts.
 */

const base = envPath('sandbox', '/tools');

const clockSteps = durationOptions([
  [60, '1 minute'],
  [3600, '1 hour'],
  [86400, '1 day'],
  [604800, '7 days'],
  [2592000, '30 days'],
]);

const toolsPage: RedrawnPage = async (ctx, _req, reply, page, extra = {}, status = 200) => {
  const clock = await readClock(ctx, page.session.merchantId);
  const canWrite = can(page.session.role, 'sandbox.write');
  // The presets in force, with their expiry on the sandbox clock (they expire by it): a rejection
  // caused by one is visible here after the form has reset.
  const presets = await presetsInForce(ctx.db, page.session.merchantId, new Date(clock.now));
  const real = page.now.getTime();
  const ahead = new Date(clock.now).getTime() - real;
  return sendPage(
    reply,
    page,
    {
      title: 'Sandbox tools',
      section: '/tools',
      ...extra,
      body: html`<div class="card"><h2>Sandbox clock</h2><p>Your sandbox time is <strong id="sandbox-now"
        class="nowrap">${when(clock.now)}</strong> (sandbox clock)${
          Math.abs(ahead) >= 60_000
            ? html`; real time is
           <span class="nowrap">${when(page.now)}</span>`
            : ''
        }. It only moves forward; moving it runs everything that
              falls due on the way (expiries, accruals, webhook retries).</p>${
                canWrite
                  ? html`<form method="get" action="${base}/clock">${selectInput(
                      'seconds',
                      'Move the clock forward by',
                      clockSteps,
                      '3600',
                    )}<div class="actions"><button
  type="submit">Advance clock</button></div></form>`
                  : ''
              }</div>
<div class="card"><h2>Upstream behaviour</h2><p>How one provider's money-moving step answers for your sandbox, for ${
        injectionTtlSeconds / 60
      } minutes of sandbox time (then back to success).</p>${table(
        'Behaviours in force',
        [
          { label: 'Provider', cell: (b: (typeof presets)[number]) => b.upstream },
          { label: 'Answer', cell: (b) => b.behavior.replace('_', ' ') },
          { label: 'Until (sandbox clock)', cell: (b) => when(b.expires_at) },
        ],
        presets,
        'none: every provider answers success.',
      )}${
        canWrite
          ? html`<form method="post" action="${base}/behavior"><input type="hidden"
            name="${csrfField}" value="${page.csrf}">${selectInput(
              'upstream',
              'Provider',
              upstreamNames.map((u) => ({ value: u, label: u })),
            )}${selectInput(
              'behavior',
              'Answer',
              injectedBehaviors.map((b) => ({ value: b, label: b.replace('_', ' ') })),
            )}<div class="actions"><button type="submit">Set behaviour</button></div></form>`
          : ''
      }</div>
<div class="card"><h2>Reset</h2><p id="reset-hint">Deletes the sandbox webhook deliveries and API call log and removes
   injected behaviours. Ledger entries, orders and members are kept, so balances do not reset.</p>${
     canWrite
       ? html`<div class="actions">${askFirst(`${base}/reset`, 'Reset sandbox logs', { danger: true })}</div>`
       : ''
   }</div>`,
    },
    status,
  );
};

export function registerSettingsPages(
  app: AppInstance,
  ctx: ServiceContext,
  timedProcesses: readonly TimedProcess[],
): void {
  getSandboxPage(app, ctx, '/console/:env/tools', (req, reply, page) => toolsPage(ctx, req, reply, page));

  // Resetting and moving the clock cannot be undone: a page first says what will happen.
  getSandboxPage(app, ctx, '/console/:env/tools/reset', async (_req, reply, page) => {
    return sendConfirmPage(reply, page, {
      title: 'Reset the sandbox logs?',
      section: '/tools',
      refused: refusalFor(page.session.role, 'sandbox.write', 'use the sandbox tools'),
      question: html`Delete every sandbox webhook delivery and API call of ${page.session.merchantName}, and remove
             the upstream behaviours in force? Ledger entries, orders and members are kept.`,
      facts: [],
      action: `${base}/reset`,
      button: 'Yes, reset the sandbox logs',
      danger: true,
      back: base,
    });
  });

  getSandboxPage(app, ctx, '/console/:env/tools/clock', async (req, reply, page) => {
    const step = clockSteps.find((c) => c.value === (req.query as { seconds?: string }).seconds) ?? clockSteps[1]!;
    const clock = await readClock(ctx, page.session.merchantId);
    const to = new Date(new Date(clock.now).getTime() + Number(step.value) * 1000);
    return sendConfirmPage(reply, page, {
      title: 'Move the sandbox clock?',
      section: '/tools',
      refused: refusalFor(page.session.role, 'sandbox.write', 'use the sandbox tools'),
      question: html`Move the sandbox clock forward by ${step.label}, from ${when(clock.now)} to ${when(
        to,
      )}? Everything due on the way runs (expiries, accruals, webhook retries); the clock never moves back.`,
      facts: [],
      action: `${base}/clock`,
      button: `Yes, move it forward by ${step.label}`,
      back: base,
      fields: { seconds: step.value },
    });
  });

  postSandboxChange(app, ctx, '/console/:env/tools/behavior', async (req, reply, page) => {
    const form = formOf(req);
    const r = await attempt(ctx, async (trx) => {
      const set = await presetBehavior(trx, page.session.merchantId, {
        upstream: one(form, 'upstream'),
        behavior: one(form, 'behavior'),
      });
      await audit(trx, page.session, 'sandbox', 'sandbox.upstream_behavior', set.upstream, set.behavior, page.now);
      return set;
    });
    if (!r.ok) return toolsPage(ctx, req, reply, page, { problem: r.problem }, 400);
    return toolsPage(ctx, req, reply, page, {
      notice:
        `${r.value.upstream} answers ${r.value.behavior.replace('_', ' ')} for the ` +
        `next ${r.value.expires_in / 60} minutes.`,
    });
  });

  postSandboxChange(app, ctx, '/console/:env/tools/reset', async (req, reply, page) => {
    await ctx.apiCallLog.flush();
    const r = await attempt(ctx, async (trx) => {
      const done = await resetSandbox(trx, page.session.merchantId);
      await audit(
        trx,
        page.session,
        'sandbox',
        'sandbox.reset',
        '',
        `deliveries ${done.cleared.merchant_webhook_deliveries}, api calls ${done.cleared.merchant_api_logs}`,
        page.now,
      );
      return done;
    });
    if (!r.ok) return toolsPage(ctx, req, reply, page, { problem: r.problem }, 400);
    return toolsPage(ctx, req, reply, page, {
      notice:
        `Cleared ${r.value.cleared.merchant_webhook_deliveries} webhook deliveries ` +
        `and ${r.value.cleared.merchant_api_logs} API calls.`,
    });
  });

  postSandboxChange(app, ctx, '/console/:env/tools/clock', async (req, reply, page) => {
    const seconds = Number(one(formOf(req), 'seconds'));
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > advanceSecondsMax)
      return toolsPage(ctx, req, reply, page, { problem: 'Choose how far to move the clock.' }, 400);
    // The advance runs its own transactions (each timed process commits its steps), so the audit
    // line follows it; a console advance has no idempotency key of its own (it is not replayed).
    try {
      const idem = {
        key: '',
        endpoint: 'console',
        requestHash: '',
        settled: false,
        noStore: true,
        now: ctx.requestClock,
      };
      const moved = await advanceClock(ctx, timedProcesses, page.session.merchantId, seconds, idem);
      await audit(
        ctx.db,
        page.session,
        'sandbox',
        'sandbox.clock_advance',
        '',
        `${seconds} s, now ${moved.now}`,
        page.now,
      );
      return await toolsPage(ctx, req, reply, page, {
        notice: `The sandbox clock moved forward; it is now ${when(moved.now)}.`,
      });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return toolsPage(ctx, req, reply, page, { problem: err.message }, 400);
    }
  });
}
