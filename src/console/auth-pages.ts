import type { FastifyRequest } from 'fastify';
import type { AppInstance } from '../platform/http/http-app.js';
import type { ServiceContext } from '../service-context.js';
import { html, type HtmlPart } from '../modules/hosted-screens/index.js';
import {
  consoleBase,
  csrfField,
  deviceSetCookie,
  loginClient,
  redirect,
  sendHtml,
  sessionClearCookie,
  sessionSetCookie,
  signInCsrf,
  signInCsrfValid,
  presentedSession,
  totpKey,
  twoStepClearCookie,
  twoStepSetCookie,
  twoStepUser,
} from './http.js';
import { formOf, one } from './form.js';
import { acceptInvite, openInvite } from './service.js';
import { completeSecondFactor, signIn, signOut, signOutEverywhere } from './sign-in.js';
import { passwordProblem } from './rules.js';
import { decoyHash, passwordLengthMin } from './password.js';
import { envPath, plainPage } from './views.js';
import { newPasswordFields, textInput } from './fields.js';
import { pageRoute, postChange } from './guards.js';

/** Sign-in, the invite link, sign-out (this browser or all); the account page: two-step-pages.ts. */

function signInForm(csrf: string, email: string, problem?: string, notice?: string): string {
  return plainPage(
    'Sign in to the merchant console',
    html`<form method="post" action="${consoleBase}/sign-in" novalidate><input type="hidden"
      name="${csrfField}" value="${csrf}">${textInput('email', 'E-mail address', {
        type: 'email',
        value: email,
        required: true,
        autocomplete: 'username',
      })}${textInput('password', 'Password', {
        type: 'password',
        required: true,
        autocomplete: 'current-password',
      })}<div class="actions"><button type="submit">Sign in</button></div></form>`,
    problem,
    notice,
  );
}

function inviteForm(token: string, email: string, problem?: string): string {
  return plainPage(
    'Choose your password',
    html`<p>For <strong>${email}</strong>. Use at least ${passwordLengthMin} characters; a passphrase of several words
       is good.</p>
<form method="post" action="${consoleBase}/invite/${token}" novalidate>${newPasswordFields()}<div
  class="actions"><button type="submit">Set password</button></div></form>`,
    problem,
  );
}

export const throttledText = 'Too many failed attempts. Wait 15 minutes, then try again.';

/**
 * The second step: the app's code, or (a link away, so that a phone shows a keyboard with letters)
 * one of the recovery codes. Both post the field `code`; the service tells them apart by shape.
 */
function twoStepForm(csrf: string, problem?: string, recovery = false): string {
  const form = (field: HtmlPart) =>
    html`<form method="post" action="${consoleBase}/two-step${recovery ? '?recovery=1' : ''}" novalidate><input
      type="hidden" name="${csrfField}" value="${csrf}">${
        field
      }<div class="actions"><button type="submit">Continue</button></div></form>`;
  return recovery
    ? plainPage(
        'Enter a recovery code',
        html`<p>Enter one of the recovery codes you saved when you turned on two-step sign-in. Each code works
           once.</p>${form(
             textInput('code', 'Recovery code', {
               required: true,
               autocomplete: 'off',
               hint: 'For example k7tq-2mxa-9fwe-c4hn',
             }),
           )}<p><a href="${consoleBase}/two-step">Use a code from your app instead</a></p>`,
        problem,
      )
    : plainPage(
        'Enter your sign-in code',
        html`<p>Open the authenticator app you set up for the merchant console and enter the 6-digit code it
           shows.</p>${form(
             textInput('code', 'Code', { required: true, autocomplete: 'one-time-code', inputMode: 'numeric' }),
           )}<p><a href="${consoleBase}/two-step?recovery=1">Use a recovery code</a> if you do not have your
              phone.</p>`,
        problem,
      );
}

const inviteGone = () =>
  plainPage(
    'This invite link cannot be used',
    html`<p>It was used already, has expired (after 7 days) or was replaced by a newer one. Ask your operator for a new
       invite.</p>`,
  );

export function registerAuthPages(app: AppInstance, ctx: ServiceContext): void {
  // The hash an unknown address is checked against, made now: else the first unknown address
  // would take two scrypt runs instead of one, and the time would tell it has no account.
  void decoyHash(ctx.config.consolePasswordCost);
  app.get(consoleBase, pageRoute, async (_req, reply) => redirect(reply, envPath('sandbox')));

  app.get(`${consoleBase}/sign-in`, pageRoute, async (req: FastifyRequest, reply) => {
    const ended = (req.query as { ended?: string }).ended === '1';
    const signedOut = (req.query as { out?: string }).out === '1';
    return sendHtml(
      reply,
      200,
      signInForm(
        signInCsrf(ctx, req, reply),
        '',
        undefined,
        ended ? 'Your session ended. Sign in again.' : signedOut ? 'You are signed out.' : undefined,
      ),
    );
  });

  app.post(`${consoleBase}/sign-in`, pageRoute, async (req, reply) => {
    const form = formOf(req);
    const email = one(form, 'email');
    const csrf = signInCsrf(ctx, req, reply);
    if (!signInCsrfValid(ctx, req, form))
      return sendHtml(reply, 403, signInForm(csrf, email, 'The form expired. Sign in again.'));
    const now = ctx.clock.real();
    const result = await signIn(
      ctx.db,
      { email, password: one(form, 'password'), client: loginClient(ctx, req), replacing: presentedSession(req) },
      now,
      ctx.config.consolePasswordCost,
    );
    if (result.kind === 'throttled') return sendHtml(reply, 429, signInForm(csrf, email, throttledText));
    if (result.kind === 'wrong' || result.kind === 'spent')
      return sendHtml(reply, 401, signInForm(csrf, email, 'The e-mail address or the password is not right.'));
    if (result.kind === 'second_factor') {
      void reply.header('set-cookie', twoStepSetCookie(ctx, req, result.userId, result.generation, now));
      return redirect(reply, `${consoleBase}/two-step`);
    }
    void reply.header('set-cookie', signedInCookies(result, req, sessionSetCookie(result.token, req)));
    return redirect(reply, envPath('sandbox'));
  });

  /** The cookies of a complete sign-in: the session, and the device cookie when the browser is new to the account. */
  const signedInCookies = (result: { email: string }, req: FastifyRequest, ...cookies: string[]) => {
    const device = deviceSetCookie(ctx, req, result.email);
    return device === undefined ? cookies : [...cookies, device];
  };

  const wantsRecovery = (req: FastifyRequest) => (req.query as { recovery?: string }).recovery === '1';

  app.get(`${consoleBase}/two-step`, pageRoute, async (req, reply) => {
    if (!twoStepUser(ctx, req, ctx.clock.real())) return redirect(reply, `${consoleBase}/sign-in`);
    return sendHtml(reply, 200, twoStepForm(signInCsrf(ctx, req, reply), undefined, wantsRecovery(req)));
  });

  app.post(`${consoleBase}/two-step`, pageRoute, async (req, reply) => {
    const now = ctx.clock.real();
    const pending = twoStepUser(ctx, req, now);
    if (!pending) return redirect(reply, `${consoleBase}/sign-in?ended=1`);
    const form = formOf(req);
    const csrf = signInCsrf(ctx, req, reply);
    const recovery = wantsRecovery(req);
    if (!signInCsrfValid(ctx, req, form))
      return sendHtml(reply, 403, twoStepForm(csrf, 'The form expired. Enter the code again.', recovery));
    const result = await completeSecondFactor(
      ctx.db,
      totpKey(ctx),
      { ...pending, code: one(form, 'code'), client: loginClient(ctx, req), replacing: presentedSession(req) },
      now,
    );
    if (result.kind === 'spent') {
      void reply.header('set-cookie', twoStepClearCookie(req));
      return redirect(reply, `${consoleBase}/sign-in?ended=1`);
    }
    if (result.kind === 'throttled') return sendHtml(reply, 429, twoStepForm(csrf, throttledText, recovery));
    if (result.kind !== 'session') {
      return sendHtml(
        reply,
        401,
        twoStepForm(
          csrf,
          recovery
            ? 'That recovery code is not right, or was used already.'
            : 'That code is not right, or was used already. Enter the code your app shows now.',
          recovery,
        ),
      );
    }
    void reply.header(
      'set-cookie',
      signedInCookies(result, req, sessionSetCookie(result.token, req), twoStepClearCookie(req)),
    );
    // After a recovery code: the account page, which says how many are left and offers a new set.
    return redirect(
      reply,
      result.recoveryCodesLeft === undefined ? envPath('sandbox') : envPath('sandbox', '/account?recovered=1'),
    );
  });

  app.get(`${consoleBase}/invite/:token`, pageRoute, async (req, reply) => {
    const token = (req.params as { token: string }).token;
    const user = await openInvite(ctx.db, token, ctx.clock.real());
    return user ? sendHtml(reply, 200, inviteForm(token, user.email)) : sendHtml(reply, 410, inviteGone());
  });

  // The link itself is the credential (a 256-bit secret in the path), so this form needs no CSRF
  // cookie: a forged post would have to know the token, and would only set the password.
  app.post(`${consoleBase}/invite/:token`, pageRoute, async (req, reply) => {
    const token = (req.params as { token: string }).token;
    const form = formOf(req);
    const now = ctx.clock.real();
    const user = await openInvite(ctx.db, token, now);
    if (!user) return sendHtml(reply, 410, inviteGone());
    const problem = passwordProblem(one(form, 'password'), one(form, 'confirmation'));
    if (problem) return sendHtml(reply, 400, inviteForm(token, user.email, problem));
    const done = await ctx.db
      .transaction()
      .execute((trx) => acceptInvite(trx, token, one(form, 'password'), now, ctx.config.consolePasswordCost));
    if (!done) return sendHtml(reply, 410, inviteGone());
    return sendHtml(
      reply,
      200,
      signInForm(signInCsrf(ctx, req, reply), user.email, undefined, 'Your password is set. Sign in.'),
    );
  });

  postChange(app, ctx, `${consoleBase}/sign-out`, 'session', async (req, reply, page) => {
    await signOut(ctx.db, page.session);
    void reply.header('set-cookie', sessionClearCookie(req));
    return redirect(reply, `${consoleBase}/sign-in?out=1`);
  });

  postChange(app, ctx, `${consoleBase}/sign-out-everywhere`, 'session', async (req, reply, page) => {
    await signOutEverywhere(ctx.db, page.session);
    void reply.header('set-cookie', sessionClearCookie(req));
    return redirect(reply, `${consoleBase}/sign-in?out=1`);
  });
}
