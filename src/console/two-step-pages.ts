import type { FastifyReply } from 'fastify';
import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { html, type HtmlPart } from '../modules/hosted-screens/index.js';
import { consoleBase, loginClient, totpKey, type PageRequest } from './http.js';

import { formOf, one } from './form.js';
import { checkCurrentPassword } from './sign-in.js';
import { confirmTotpSetup, disableTotp, recoveryCodesLeft, startTotpSetup, totpStatus } from './second-factor.js';
import { auditPage } from './audit.js';
import { base32, otpauthUri } from './totp.js';
import { throttledText } from './auth-pages.js';
import { badge, envPath, postButton, recoveryCodesPanel, sendPage } from './views.js';
import { csrfInput, textInput } from './fields.js';
import { getPage, postChange } from './guards.js';

/**
 * "Your account" and its two-step sign-in (docs/console.md, "Two-step sign-in"): the page, setting
 * the authenticator up (the password asked again, then a first code) and turning it off (a code).
 */

export function registerTwoStepPages(app: AppInstance, ctx: ServiceContext): void {
  getPage(app, ctx, `${consoleBase}/:env/account`, (req, reply, page) =>
    accountPage(ctx, reply, page, {
      notice:
        (req.query as { recovered?: string }).recovered === '1'
          ? 'You signed in with a recovery code; it cannot be used again.'
          : undefined,
    }),
  );

  postChange(app, ctx, `${consoleBase}/:env/account/totp/start`, 'session', async (_req, reply, page) => {
    await startTotpSetup(ctx.db, totpKey(ctx), page.session);
    return accountPage(ctx, reply, page);
  });

  postChange(app, ctx, `${consoleBase}/:env/account/totp/confirm`, 'session', async (req, reply, page) => {
    const form = formOf(req);
    const checked = await checkCurrentPassword(
      ctx.db,
      page.session,
      one(form, 'password'),
      loginClient(ctx, req),
      page.now,
    );
    if (checked === 'throttled') return accountPage(ctx, reply, page, { problem: throttledText }, 429);
    if (checked === 'wrong')
      return accountPage(
        ctx,
        reply,
        page,
        { problem: 'That is not your password. Enter your current password and the code your app shows now.' },
        400,
      );
    const codes = await ctx.db.transaction().execute(async (trx) => {
      const made = await confirmTotpSetup(trx, totpKey(ctx), page.session, one(form, 'code'), page.now);
      if (made)
        await auditPage(trx, page, 'user.totp_enable', page.session.userId, `${made.length} recovery codes made`);
      return made;
    });
    return codes
      ? accountPage(ctx, reply, page, {
          notice: 'Two-step sign-in is on. From now on, sign-in asks for a code from your app.',
          top: recoveryCodesPanel(codes),
        })
      : accountPage(ctx, reply, page, { problem: 'That code is not right. Enter the code your app shows now.' }, 400);
  });

  postChange(app, ctx, `${consoleBase}/:env/account/totp/disable`, 'session', async (req, reply, page) => {
    const r = await disableTotp(
      ctx.db,
      totpKey(ctx),
      page.session,
      { code: one(formOf(req), 'code'), client: loginClient(ctx, req) },
      page.environment,
      page.now,
    );
    if (r === 'disabled') return accountPage(ctx, reply, page, { notice: 'Two-step sign-in is off.' });
    if (r === 'throttled') return accountPage(ctx, reply, page, { problem: throttledText }, 429);
    return accountPage(
      ctx,
      reply,
      page,
      { problem: 'That code is not right. Enter the code your app shows now.' },
      400,
    );
  });
}

export async function accountPage(
  ctx: ServiceContext,
  reply: FastifyReply,
  page: PageRequest,
  extra: { notice?: string; problem?: string; top?: HtmlPart } = {},
  status = 200,
) {
  const { top, ...messages } = extra;
  const totp = await totpStatus(ctx.db, totpKey(ctx), page.session);
  const left = totp.enabled ? await recoveryCodesLeft(ctx.db, page.session) : 0;
  const base = `${consoleBase}/${page.environment}/account/totp`;
  const codeForm = (action: string, button: string, withPassword = false) =>
    html`<form method="post" action="${action}" novalidate>${csrfInput(page)}${
      withPassword
        ? textInput('password', 'Your password', { type: 'password', required: true, autocomplete: 'current-password' })
        : ''
    }${textInput('code', 'Code from your app', {
      required: true,
      autocomplete: 'one-time-code',
      inputMode: 'numeric',
    })}<div class="actions"><button type="submit">${button}</button></div></form>`;
  const twoStep = totp.enabled
    ? html`<p>${badge('on', 'ok')} Sign-in asks for a code from your authenticator app.</p>
<p id="recovery-left">${left} unused recovery code${left === 1 ? '' : 's'}${
        left <= 3 ? ': make a new set before you run out.' : '.'
      } <a
  href="${envPath(page.environment, '/account/recovery-codes')}">Recovery codes</a></p>${codeForm(
    `${base}/disable`,
    'Turn off two-step sign-in',
  )}`
    : totp.pending
      ? html`<p>In your authenticator app, add an account with this key (time-based, 6 digits, every 30 seconds), then
         enter your password and the code it shows.</p>
<p>Key</p><code class="value" id="totp-key">${base32(totp.pending)
          .replace(/(.{4})/g, '$1 ')
          .trim()}</code>
<p class="hint">Or, in an app that takes a link: <code>${otpauthUri(
          totp.pending,
          page.session.email,
          'Merchant console',
        )}</code></p>${codeForm(`${base}/confirm`, 'Turn on two-step sign-in', true)}`
      : html`<p>${badge('off')} Add a second step to sign-in: a code from an authenticator app on your phone.</p><div
        class="actions">${postButton(page, `${base}/start`, 'Set up two-step sign-in')}</div>`;
  return sendPage(
    reply,
    page,
    {
      title: 'Your account',
      section: '/account',
      ...messages,
      body: html`${top ?? ''}<div class="card"><dl class="summary"><dt>E-mail address</dt><dd>${page.session.email}</dd>
        <dt>Role</dt><dd>${page.session.role}</dd><dt>Merchant</dt><dd>${page.session.merchantName} <code>${
          page.session.merchantId
        }</code></dd></dl>
<p><a href="${envPath(page.environment, '/account/password')}">Change your password</a></p></div>
<div class="card"><h2>Two-step sign-in</h2>${twoStep}</div>
<div class="card"><h2>Sessions</h2><p id="everywhere-hint">Signs you out in every browser where you are signed in, this
   one included.</p><div class="actions">${postButton(
     page,
     `${consoleBase}/sign-out-everywhere`,
     'Sign out everywhere',
     { danger: true, describedBy: 'everywhere-hint' },
   )}</div></div>`,
    },
    status,
  );
}
