import type { FastifyReply } from 'fastify';
import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { html } from '../modules/hosted-screens/index.js';
import { consoleBase, loginClient, totpKey, type PageRequest } from './http.js';

import { formOf, one } from './form.js';
import { changePassword } from './sign-in.js';
import { recoveryCodesLeft, regenerateRecoveryCodes, totpStatus } from './second-factor.js';
import { passwordLengthMin } from './password.js';
import { accountPage } from './two-step-pages.js';
import { envPath, recoveryCodesPanel, sendPage } from './views.js';
import { csrfInput, newPasswordFields, textInput } from './fields.js';
import { getPage, postChange } from './guards.js';

/**
 * "Your account" beyond sign-in: the password change (other sessions end) and the recovery codes
 * of the second factor (a new set after the password or a current code). Both forms ask again
 * for a secret, and a wrong one counts in the sign-in throttle (docs/console.md).
 */

const throttledText = 'Too many failed attempts. Wait 15 minutes, then try again.';

async function recoveryPage(
  ctx: ServiceContext,
  reply: FastifyReply,
  page: PageRequest,
  extra: { problem?: string; codes?: string[] } = {},
  status = 200,
) {
  const totp = await totpStatus(ctx.db, totpKey(ctx), page.session);
  const left = await recoveryCodesLeft(ctx.db, page.session);
  const body = !totp.enabled
    ? html`<p>Recovery codes come with two-step sign-in. Turn it on from <a
      href="${envPath(page.environment, '/account')}">Your account</a> first.</p>`
    : html`${extra.codes ? recoveryCodesPanel(extra.codes) : ''}<div class="card"><p id="recovery-left">${
        left
      } unused recovery code${left === 1 ? '' : 's'}.</p>
<p>A new set replaces the old one: the codes you have now stop working. To make one, enter your password, or a code from
   your app.</p>
<form method="post" action="${envPath(page.environment, '/account/recovery-codes')}" novalidate>${csrfInput(
        page,
      )}${textInput('password', 'Password', { type: 'password', autocomplete: 'current-password' })}${textInput(
        'code',
        'Or a code from your app',
        {
          autocomplete: 'one-time-code',
          inputMode: 'numeric',
        },
      )}<div class="actions"><button type="submit">Make new recovery codes</button></div></form></div>`;
  return sendPage(reply, page, { title: 'Recovery codes', section: '/account', problem: extra.problem, body }, status);
}

function passwordPage(
  reply: FastifyReply,
  page: PageRequest,
  extra: { problem?: string; notice?: string } = {},
  status = 200,
) {
  return sendPage(
    reply,
    page,
    {
      title: 'Change your password',
      section: '/account',
      ...extra,
      body: html`<div class="card"><p>Use at least ${passwordLengthMin} characters. Every other browser where you are
         signed in is signed out; this one stays.</p>
<form method="post" action="${envPath(page.environment, '/account/password')}" novalidate>${csrfInput(page)}${textInput(
        'current',
        'Current password',
        { type: 'password', required: true, autocomplete: 'current-password' },
      )}${newPasswordFields()}<div class="actions"><button type="submit">Change password</button></div></form></div>`,
    },
    status,
  );
}

export function registerAccountPages(app: AppInstance, ctx: ServiceContext): void {
  getPage(app, ctx, `${consoleBase}/:env/account/recovery-codes`, (_req, reply, page) =>
    recoveryPage(ctx, reply, page),
  );

  postChange(app, ctx, `${consoleBase}/:env/account/recovery-codes`, 'session', async (req, reply, page) => {
    const form = formOf(req);
    const r = await regenerateRecoveryCodes(
      ctx.db,
      totpKey(ctx),
      page.session,
      { password: one(form, 'password'), code: one(form, 'code'), client: loginClient(ctx, req) },
      page.now,
    );
    if (r.kind === 'codes') return recoveryPage(ctx, reply, page, { codes: r.codes }, 201);
    if (r.kind === 'throttled') return recoveryPage(ctx, reply, page, { problem: throttledText }, 429);
    if (r.kind === 'no_second_factor')
      return recoveryPage(ctx, reply, page, { problem: 'Two-step sign-in is off.' }, 400);
    return recoveryPage(
      ctx,
      reply,
      page,
      { problem: 'That password or code is not right. No new codes were made.' },
      401,
    );
  });

  getPage(app, ctx, `${consoleBase}/:env/account/password`, async (_req, reply, page) => passwordPage(reply, page));

  postChange(app, ctx, `${consoleBase}/:env/account/password`, 'session', async (req, reply, page) => {
    const form = formOf(req);
    const r = await changePassword(
      ctx.db,
      page.session,
      {
        current: one(form, 'current'),
        password: one(form, 'password'),
        confirmation: one(form, 'confirmation'),
        client: loginClient(ctx, req),
      },
      page.now,
      ctx.config.consolePasswordCost,
    );
    if (r.kind === 'problem') return passwordPage(reply, page, { problem: r.problem }, 400);
    if (r.kind === 'throttled') return passwordPage(reply, page, { problem: throttledText }, 429);
    if (r.kind === 'wrong') return passwordPage(reply, page, { problem: 'The current password is not right.' }, 401);
    return accountPage(ctx, reply, page, {
      notice:
        `Your password is changed. ${r.sessionsEnded} other session${r.sessionsEnded === 1 ? '' : 's'} ` + `ended.`,
    });
  });
}
